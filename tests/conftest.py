"""Shared fixtures: checking wire objects against the A2A JSON schema; samples kept offline;
the `processes` marker on every test that starts a process."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from jsonschema import Draft7Validator

from spec_files import load_schema

SchemaErrors = Callable[[str, Any], list[str]]

# How long an example takes is the machine's load, not a property: speed belongs in bench/.
settings.register_profile("accord", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("accord")

SAMPLE_SERVICE_VARIABLES = [
    "ACCORD_LLM_BASE_URL",
    "ACCORD_LLM_API_KEY",
    "ACCORD_LLM_MODEL",
    "ACCORD_RATES_URL",
]


@pytest.fixture(autouse=True, scope="session")
def _keys_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Servers the tests start keep their signing keys in a temporary folder, not in the
    checkout's `.accord/keys` (tests that care about the key folder name their own)."""
    saved = os.environ.get("ACCORD_KEYS")
    os.environ["ACCORD_KEYS"] = str(tmp_path_factory.mktemp("keys"))
    yield
    if saved is None:
        del os.environ["ACCORD_KEYS"]
    else:
        os.environ["ACCORD_KEYS"] = saved


@pytest.fixture(autouse=True)
def _samples_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sample agent reaches a model or a rates service unless its test sets one up."""
    for variable in SAMPLE_SERVICE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(scope="session")
def schema_errors() -> SchemaErrors:
    """A function listing how a wire object breaks one definition of the schema (empty: valid)."""
    definitions = load_schema()["definitions"]
    validators: dict[str, Draft7Validator] = {}

    def errors(definition: str, instance: Any) -> list[str]:
        if definition not in validators:
            root = {"$ref": f"#/definitions/{definition}", "definitions": definitions}
            validators[definition] = Draft7Validator(root)
        return [
            f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message[:300]}"
            for error in validators[definition].iter_errors(instance)
        ]

    return errors


# --- the `processes` marker ------------------------------------------------------------------

# What Python reports (sys.addaudithook) when something starts another process: subprocess and
# asyncio's subprocesses, pexpect's pty, multiprocessing, os.system.
_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system"}
)
_started: list[str] = []

# Fixtures that start a process (a browser, `accord serve`) once for the tests of a module:
# every test using one is marked, not only the first, which starts it.
_PROCESS_FIXTURES = frozenset({"browser", "served_echo"})


def _note_process(event: str, args: tuple[Any, ...]) -> None:
    if event in _PROCESS_EVENTS:
        _started.append(event)


sys.addaudithook(_note_process)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the users of `_PROCESS_FIXTURES`; run the tests that start processes first (in
    their order), so that workers spend their waits early, not in a long tail at the end."""
    for item in items:
        if _PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.processes)
    items.sort(key=lambda item: item.get_closest_marker("processes") is None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    _started.clear()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test that started a process (in a fixture of its too) and is not marked `processes`
    fails: `pytest -m "not processes"` must start none."""
    report = yield
    if call.when == "teardown" and _started and item.get_closest_marker("processes") is None:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started a process ({', '.join(sorted(set(_started)))}) but is not "
            "marked `processes` (pytest.mark.processes, on the test or its module)"
        )
    return report
