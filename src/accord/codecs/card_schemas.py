"""The agent card schemas accord ships (`schemas/`), and cards checked against them in words."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import ValidationError
from jsonschema.validators import validator_for

from accord.codecs.card import CARD_SCHEMAS, card_versions
from accord.codecs.versions import ProtocolVersion

Json = dict[str, Any]

JSON_TYPES = {
    dict: "an object", list: "a list", str: "text", bool: "true or false",
    int: "a number", float: "a number", type(None): "null",
}  # fmt: skip
REQUIRED_MESSAGE = re.compile(r"'(.+)' is a required property")


@dataclass
class CardCheck:
    """How a card fares against the schema of one version: problems (break the schema) and
    notes (members that version's readers ignore)."""

    version: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> Json:
        return {
            "version": self.version,
            "spec": f"A2A {CARD_SCHEMAS[self.version]}",
            "valid": self.valid,
            "problems": self.problems,
            "notes": self.notes,
        }


def check_card(card: Json) -> list[CardCheck]:
    """The card checked against the schema of every version it speaks."""
    return [_check(card, version) for version in card_versions(card)]


def _check(card: Json, version: str) -> CardCheck:
    result = CardCheck(version)
    for error in sorted(_validator(version).iter_errors(card), key=lambda e: list(e.absolute_path)):
        for leaf in _leaves(error):
            if leaf.validator == "additionalProperties" and version == ProtocolVersion.V1_0:
                members = ", ".join(_where(leaf, name) for name in _extra(leaf))
                result.notes.append(f"1.0 readers ignore {members} (not 1.0 fields)")
            else:
                result.problems.append(explain(leaf))
    return result


@cache
def _validator(version: str) -> Any:
    text = (
        resources.files("accord.codecs")
        .joinpath("schemas", f"agent-card-v{version}.json")
        .read_text("utf-8")
    )
    schema = json.loads(text)
    return validator_for(schema)(schema)


def _leaves(error: ValidationError) -> list[ValidationError]:
    """The errors worth telling: for `oneOf`/`anyOf`, those of the closest alternative."""
    if error.context:
        best = min(error.context, key=lambda e: len(list(e.absolute_schema_path)))
        return [best]
    return [error]


def explain(error: ValidationError) -> str:
    """One schema error in words, naming where in the card it is."""
    where = _location(list(error.absolute_path))
    value = error.instance
    keyword = error.validator
    expected: Any = error.validator_value
    if keyword == "required":
        found = REQUIRED_MESSAGE.match(error.message)
        missing = found.group(1) if found else str(expected)
        return f"{_where(error, missing)} is missing; the specification requires it"
    if keyword == "type":
        wanted_text = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return f"{where} should be {_article(wanted_text)}, but it is {_describe(value)}"
    if keyword == "enum":
        allowed = ", ".join(json.dumps(v) for v in expected)
        return f"{where} is {json.dumps(value)}, which is none of the allowed values ({allowed})"
    if keyword == "additionalProperties":
        return f"{where} has members the specification does not define: {', '.join(_extra(error))}"
    return f"{where}: {error.message}"


def _extra(error: ValidationError) -> list[str]:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    known = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    instance = error.instance if isinstance(error.instance, dict) else {}
    return [n for n in instance if n not in known and not any(p.search(n) for p in patterns)]


def _where(error: ValidationError, member: str) -> str:
    return _location([*error.absolute_path, member])


def _location(path: list[str | int]) -> str:
    if not path:
        return "the card"
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return f"`{text}`"


def _article(type_name: str) -> str:
    words = {"object": "an object", "array": "a list", "string": "text", "boolean": "true or false",
             "integer": "a whole number", "number": "a number"}  # fmt: skip
    return words.get(type_name, type_name)


def _describe(value: Any) -> str:
    shown = json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{JSON_TYPES.get(type(value), type(value).__name__)} ({shown})"
