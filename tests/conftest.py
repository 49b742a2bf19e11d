"""Shared fixtures: checking wire objects against the A2A JSON schema; samples kept offline."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jsonschema import Draft7Validator

from spec_files import load_schema

SchemaErrors = Callable[[str, Any], list[str]]

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
