"""Which protocol versions exist, and what each one says, is written only in the codecs, the
bindings and the CLI's option parsing: no version literal anywhere else in src/."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

KNOWING = (
    "accord.codecs",  # every version's wire shapes, cards and interfaces
    "accord.server.jsonrpc",  # the bindings
    "accord.server.rest",
    "accord.server.grpc_binding",
    "accord.grpc",
    "accord.client.transports",
    "accord.cli.options",  # --version's help
)
"""The modules (and packages) that may name a protocol version."""

NOT_PROTOCOL_VERSIONS = {
    ("accord", "0.1.0"): "accord's own release (__version__)",
    ("accord.agents.agent", "1.0.0"): "the default of an agent's own version (AgentCard.version)",
}

PROTOCOL_VERSION = re.compile(r"(0\.\d+|1\.0)(\.\d+)?")
"""A2A's versions, as a string that is nothing else: "0.3", "1.0", "0.2.5"."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def version_literals(source: str) -> Iterator[tuple[int, str]]:
    """The line and value of each string constant in `source` that is a protocol version."""
    for node in ast.walk(ast.parse(source)):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and PROTOCOL_VERSION.fullmatch(node.value.strip()):
            yield node.lineno, node.value


def knows_versions(module: str) -> bool:
    return any(module == part or module.startswith(part + ".") for part in KNOWING)


def test_no_version_literal_outside_the_codecs_and_bindings() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {value!r}"
        for path in sorted(SRC.rglob("*.py"))
        if "generated" not in path.parts and not knows_versions(module_name(path))
        for line, value in version_literals(path.read_text(encoding="utf-8"))
        if (module_name(path), value) not in NOT_PROTOCOL_VERSIONS
    ]
    assert found == []


def test_the_check_finds_a_version_literal() -> None:
    source = 'version = interface.protocol_version or "0.3"\nnote = f"speaks {v}"\nx = "1.0.2"'
    assert sorted(version_literals(source)) == [(1, "0.3"), (3, "1.0.2")]


def test_the_check_passes_other_numbers_and_prose() -> None:
    source = 'jsonrpc = "2.0"\nratio = "10.5"\n"""Reads A2A 0.3 cards."""\nhint = "needs 1.0"'
    assert list(version_literals(source)) == []


def test_the_modules_that_know_versions_exist() -> None:
    modules = {module_name(path) for path in SRC.rglob("*.py")}
    for part in KNOWING:
        assert part in modules, part
