"""Forms for the samples: fields described once, as a JSON Schema for clients and as a validator.

The validator knows exactly the keywords the fields use (type, enum, bounds, lengths, the
`date` format), so a submission is checked against the very schema the client was sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FormField:
    """One field: its JSON Schema keywords, and an optional further check of a valid value."""

    name: str
    title: str
    type: Literal["string", "number"]
    description: str
    required: bool = True
    enum: Sequence[str] | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["date"] | None = None
    check: Callable[[Any], str | None] | None = None

    def schema(self) -> Json:
        """The field's JSON Schema."""
        keywords: Json = {
            "type": self.type,
            "title": self.title,
            "description": self.description,
            "enum": list(self.enum) if self.enum is not None else None,
            "exclusiveMinimum": self.exclusive_minimum,
            "maximum": self.maximum,
            "minLength": self.min_length,
            "maxLength": self.max_length,
            "format": self.format,
        }
        return {key: value for key, value in keywords.items() if value is not None}

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` for this field, in words (None: nothing)."""
        if self.type == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return "must be a number"
            if not math.isfinite(value):
                return "must be a finite number"
            if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
                return f"must be more than {self.exclusive_minimum:g}"
            if self.maximum is not None and value > self.maximum:
                return f"must be at most {self.maximum:g}"
        else:
            if not isinstance(value, str):
                return "must be text"
            if self.enum is not None and value not in self.enum:
                return f"must be one of {', '.join(self.enum)}"
            if self.min_length is not None and len(value.strip()) < self.min_length:
                return f"must be at least {self.min_length} characters"
            if self.max_length is not None and len(value) > self.max_length:
                return f"must be at most {self.max_length} characters"
            if self.format == "date" and not _is_date(value):
                return "must be a date written YYYY-MM-DD"
        return self.check(value) if self.check is not None else None


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


@dataclass(frozen=True, slots=True)
class Form:
    """Fields a user fills in; no others are accepted."""

    title: str
    fields: Sequence[FormField]

    def schema(self) -> Json:
        """The form as a JSON Schema object."""
        return {
            "type": "object",
            "title": self.title,
            "properties": {field.name: field.schema() for field in self.fields},
            "required": [field.name for field in self.fields if field.required],
            "additionalProperties": False,
        }

    def errors(self, data: Mapping[str, Any]) -> dict[str, str]:
        """What is wrong with `data`, field by field (empty: valid)."""
        found: dict[str, str] = {}
        for field in self.fields:
            value = data.get(field.name)
            if value is None or value == "":
                if field.required:
                    found[field.name] = "is required"
                continue
            problem = field.problem(value)
            if problem is not None:
                found[field.name] = problem
        names = {field.name for field in self.fields}
        for name in data:
            if name not in names:
                found[name] = "is not a field of this form"
        return found

    def known(self, data: Mapping[str, Any]) -> Json:
        """The values of `data` that belong to this form's fields."""
        names = {field.name for field in self.fields}
        return {name: value for name, value in data.items() if name in names}
