"""Validation errors worded for a person: each bad field as the sender wrote it, what it needs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

_UNSEEN: Any = object()
"""`data` when the caller does not have what was validated (the field path is then guessed)."""


def field_problems(
    exc: ValidationError, data: Any = _UNSEEN, path: str = ""
) -> list[dict[str, str]]:
    """Each problem of `exc` as `{"field", "message"}`: the field a dotted path (below `path`)
    through `data`, the value that was validated, and the message what the field must be.

    pydantic's locations also name the member of a union each problem came from (a part's
    `kind`, a model's class); those are not fields the sender wrote, and are left out. A
    value that fits no member of a union is told by the member its fields come closest to:
    what is missing from the others is not reported, unless it is missing from all of them.
    """
    found = [_found(error, data) for error in exc.errors(include_url=False, include_input=False)]
    problems: list[dict[str, str]] = []
    for problem in _within_unions(found):
        field = ".".join(part for part in (path, *problem.field) if part)
        entry = {"field": field, "message": problem.message}
        if entry not in problems:
            problems.append(entry)
    return problems


def describe(problems: list[dict[str, str]]) -> str:
    """The first problem as `field: message`, and how many more there are."""
    first = problems[0]
    more = len(problems) - 1
    text = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
    return text + (f" (and {more} more)" if more else "")


def describe_validation_error(exc: ValidationError, data: Any = _UNSEEN) -> str:
    """`describe` of the problems of `exc` (raised validating `data`, if given)."""
    return describe(field_problems(exc, data))


@dataclass(frozen=True, slots=True)
class _Problem:
    field: tuple[str, ...]
    message: str
    missing: bool
    union: tuple[str, ...] | None = None  # the field holding the union it came from
    member: str = ""  # the member of that union it was found in


def _found(error: ErrorDetails, data: Any) -> _Problem:
    field: list[str] = []
    union: tuple[str, ...] | None = None
    member = ""
    current = data
    loc = error["loc"]
    missing = error["type"] == "missing"
    for index, item in enumerate(loc):
        if data is not _UNSEEN:
            if isinstance(current, Mapping) and item in current:
                field.append(str(item))
                current = current[item]
                continue
            if isinstance(current, list) and type(item) is int and 0 <= item < len(current):
                field.append(str(item))
                current = current[item]
                continue
            is_name = missing and index == len(loc) - 1  # the field that is not there
        else:
            is_name = type(item) is int or _looks_like_a_field(item)
        if is_name:
            field.append(str(item))
        else:  # a union's member (the innermost one counts), not a field
            union, member = tuple(field), str(item)
    return _Problem(tuple(field), _message(error), missing, union, member)


def _looks_like_a_field(item: str | int) -> bool:
    """Without the data: a model's class name or a validator's (`function-after[...]`) is
    no field; wire fields start with a lowercase letter."""
    text = str(item)
    return "[" not in text and not text[:1].isupper()


def _within_unions(found: list[_Problem]) -> list[_Problem]:
    """`found`, each union's problems narrowed to what says most about the value."""
    members: dict[tuple[str, ...], set[str]] = {}
    for problem in found:
        if problem.union is not None:
            members.setdefault(problem.union, set()).add(problem.member)
    kept: list[_Problem] = []
    for problem in found:
        union = problem.union
        if union is None or len(members[union]) < 2:
            kept.append(problem)
            continue
        alternatives = [p for p in found if p.union == union]
        if not problem.missing:
            kept.append(problem)
        elif all(p.missing for p in alternatives):
            names = sorted({p.field[-1] for p in alternatives if len(p.field) > len(union)})
            said = _Problem(union, f"needs {' or '.join(names)}", missing=True)
            kept.append(said if names else problem)
        # else: missing from a member the value does not take; the other problems say why
    return kept


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    wording = _WORDING.get(kind)
    if wording is not None:
        try:
            return wording(ctx)
        except (KeyError, TypeError, ValueError):
            pass
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):  # an accord validator's own words
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message.replace("Input should be", "must be", 1)


def _unquoted(text: Any) -> str:
    return str(text).strip("'\"")


def _plural(count: Any, what: str) -> str:
    return f"{count} {what}" + ("" if count == 1 else "s")


_OBJECT = "must be an object"
_LIST = "must be a list"
_INTEGER = "must be an integer"
_NUMBER = "must be a number"
_BOOLEAN = "must be true or false"
_TIME = "must be a date and time in ISO 8601 form (2025-01-31T12:00:00Z)"

_WORDING: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda ctx: "is required",
    "string_type": lambda ctx: "must be a string",
    "string_unicode": lambda ctx: "must be a string",
    "bytes_type": lambda ctx: "must be a string",
    "int_type": lambda ctx: _INTEGER,
    "int_parsing": lambda ctx: _INTEGER,
    "int_from_float": lambda ctx: "must be a whole number",
    "int_parsing_size": lambda ctx: "is too large a number",
    "float_type": lambda ctx: _NUMBER,
    "float_parsing": lambda ctx: _NUMBER,
    "finite_number": lambda ctx: "must be a finite number",
    "bool_type": lambda ctx: _BOOLEAN,
    "bool_parsing": lambda ctx: _BOOLEAN,
    "dict_type": lambda ctx: _OBJECT,
    "model_type": lambda ctx: _OBJECT,
    "model_attributes_type": lambda ctx: _OBJECT,
    "dataclass_type": lambda ctx: _OBJECT,
    "list_type": lambda ctx: _LIST,
    "tuple_type": lambda ctx: _LIST,
    "set_type": lambda ctx: _LIST,
    "none_required": lambda ctx: "must be null",
    "extra_forbidden": lambda ctx: "is not a field of this object",
    "datetime_type": lambda ctx: _TIME,
    "datetime_parsing": lambda ctx: _TIME,
    "datetime_from_date_parsing": lambda ctx: _TIME,
    "datetime_object_invalid": lambda ctx: _TIME,
    "url_type": lambda ctx: "must be a URL",
    "url_parsing": lambda ctx: "must be a URL",
    "url_scheme": lambda ctx: f"must be a URL with the scheme {ctx['expected_schemes']}",
    "json_invalid": lambda ctx: "is not valid JSON",
    "enum": lambda ctx: f"must be {ctx['expected']}",
    "literal_error": lambda ctx: f"must be {ctx['expected']}",
    "greater_than": lambda ctx: f"must be greater than {ctx['gt']}",
    "greater_than_equal": lambda ctx: f"must be at least {ctx['ge']}",
    "less_than": lambda ctx: f"must be less than {ctx['lt']}",
    "less_than_equal": lambda ctx: f"must be at most {ctx['le']}",
    "too_short": lambda ctx: f"must have at least {_plural(ctx['min_length'], 'item')}",
    "too_long": lambda ctx: f"may have at most {_plural(ctx['max_length'], 'item')}",
    "string_too_short": lambda ctx: f"must be at least {_plural(ctx['min_length'], 'character')}",
    "string_too_long": lambda ctx: f"may be at most {_plural(ctx['max_length'], 'character')}",
    "string_pattern_mismatch": lambda ctx: f"must match the pattern {ctx['pattern']}",
    "union_tag_invalid": lambda ctx: (
        f"{_unquoted(ctx['discriminator'])} {ctx['tag']!r} is not one of {ctx['expected_tags']}"
    ),
    "union_tag_not_found": lambda ctx: (
        f"has no {_unquoted(ctx['discriminator'])}, which says what it is"
    ),
}
