"""Builds the agent card schemas accord ships from the specification's JSON schemas.

`python tests/card_schema_files.py` (with `A2A_SPEC_DIR` if the spec is elsewhere) rewrites
src/accord/codecs/schemas/; tests/test_card_schemas.py checks the shipped files are what this
builds.
Each file is the `AgentCard` definition with the definitions it refers to; the 1.0 file also
says which fields the 1.0 proto marks REQUIRED (its generated JSON schema has no `required`
lists).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from spec_files import SPEC_DIR

SHIPPED = Path(__file__).resolve().parents[1] / "src" / "accord" / "codecs" / "schemas"
SOURCES = {
    "0.2": "a2a-v0.2.5.json",
    "0.3": "a2a-v0.3.0.json",
    "1.0": "a2a-v1.0.1.generated.refs-fixed.json",
}
PROTO_1_0 = "a2a-v1.0.1.proto"
REQUIRED_IN_PROTO = ("AgentCard", "AgentSkill", "AgentInterface")


def shipped_name(version: str) -> str:
    return f"agent-card-v{version}.json"


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[1]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*map(_refs, node)) if node else set()
    return set()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _proto_required(proto: str, message: str) -> list[str]:
    body = re.search(rf"^message {message} \{{(.*?)^\}}", proto, re.S | re.M)
    assert body is not None, message
    fields = re.findall(r"^\s+\S+(?: \S+)? (\w+) = \d+ \[[^\]]*REQUIRED", body.group(1), re.M)
    return [_camel(field) for field in fields]


def build(version: str) -> dict[str, Any]:
    """The shipped card schema of `version`, from the spec files."""
    source = json.loads((SPEC_DIR / SOURCES[version]).read_text(encoding="utf-8"))
    key = "$defs" if "$defs" in source else "definitions"
    definitions = source[key]
    wanted, todo = set(), ["AgentCard"]
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(_refs(definitions[name]))
    kept = {name: definitions[name] for name in sorted(wanted)}
    schema: dict[str, Any] = {
        "$schema": source["$schema"],
        "$comment": f"The AgentCard of {SOURCES[version]}, with the definitions it refers to.",
        "$ref": f"#/{key}/AgentCard",
        key: kept,
    }
    if version == "1.0":
        proto = (SPEC_DIR / PROTO_1_0).read_text(encoding="utf-8")
        schema["$comment"] += f" `required`: the fields {PROTO_1_0} marks REQUIRED."
        for message in REQUIRED_IN_PROTO:
            kept[message] = {**kept[message], "required": _proto_required(proto, message)}
    return schema


def render(version: str) -> str:
    return json.dumps(build(version), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    for version in SOURCES:
        (SHIPPED / shipped_name(version)).write_text(render(version), encoding="utf-8")
