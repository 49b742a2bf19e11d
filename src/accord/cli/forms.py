"""Forms an agent asks to fill in (a DataPart holding a JSON Schema): shown as their fields, and
filled in field by field in a chat.

A form is a data part `{"type": "form", "form": <JSON Schema of an object>, "formData":
{...}, "errors": {field: problem}}` (`form_data` and `instructions` as the official samples
write them are read too); the answer is a data part of the field values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from accord.types import DataPart, Message

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form: its name, its schema, the value the agent suggests, a problem."""

    name: str
    schema: Json
    required: bool
    default: Any = None
    problem: str | None = None

    @property
    def title(self) -> str:
        return str(self.schema.get("title") or self.name)

    @property
    def kind(self) -> str:
        """The value expected, in a few words: `number, more than 0, at most 5000`."""
        schema = self.schema
        words = [str(schema.get("format") or _TYPE_WORDS.get(str(schema.get("type")), "text"))]
        if "exclusiveMinimum" in schema:
            words.append(f"more than {schema['exclusiveMinimum']:g}")
        if "minimum" in schema:
            words.append(f"at least {schema['minimum']:g}")
        if "maximum" in schema:
            words.append(f"at most {schema['maximum']:g}")
        if "minLength" in schema or "maxLength" in schema:
            low, high = schema.get("minLength", 0), schema.get("maxLength")
            words.append(f"{low} to {high} characters" if high else f"at least {low} characters")
        if not self.required:
            words.append("optional")
        return ", ".join(words)

    @property
    def choices(self) -> list[str] | None:
        enum = self.schema.get("enum")
        return [str(choice) for choice in enum] if isinstance(enum, list) else None

    def read(self, text: str) -> Any:
        """The value `text` gives this field; ValueError saying why it cannot be."""
        if self.schema.get("type") in ("number", "integer"):
            try:
                number = float(text)
            except ValueError:
                raise ValueError("a number, please") from None
            return int(number) if self.schema.get("type") == "integer" else number
        if self.schema.get("type") == "boolean":
            if text.lower() not in ("yes", "no", "true", "false", "y", "n"):
                raise ValueError("yes or no, please")
            return text.lower() in ("yes", "true", "y")
        choices = self.choices
        if choices is not None and text not in choices:
            raise ValueError(f"one of {', '.join(choices)}, please")
        return text


@dataclass(frozen=True, slots=True)
class Form:
    """A form an agent sent: its title, instructions and fields."""

    title: str
    fields: list[FormField]
    instructions: str | None = None


_TYPE_WORDS = {"number": "number", "integer": "whole number", "boolean": "yes or no"}


def form_of(data: Mapping[str, Any]) -> Form | None:
    """The form `data` holds, or None when it is other data."""
    schema = data.get("form")
    if data.get("type") != "form" or not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    values = data.get("formData", data.get("form_data"))
    values = values if isinstance(values, dict) else {}
    errors = data.get("errors") if isinstance(data.get("errors"), dict) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set(properties)
    fields = [
        FormField(
            str(name),
            field if isinstance(field, dict) else {},
            name in required,
            values.get(name, field.get("default") if isinstance(field, dict) else None),
            str(errors[name]) if errors and name in errors else None,
        )
        for name, field in properties.items()
    ]
    instructions = data.get("instructions")
    title = str(schema.get("title") or "form")
    return Form(title, fields, instructions if isinstance(instructions, str) else None)


def form_in(message: Message | None) -> Form | None:
    """The first form `message` carries, if any."""
    for part in message.parts if message is not None else ():
        if isinstance(part, DataPart) and (form := form_of(part.data)) is not None:
            return form
    return None


def form_view(form: Form) -> Text:
    """The form as its fields: one line each, with the value expected, the one suggested, the
    values allowed and what is wrong with it."""
    text = Text(f"{form.title}:", style="bold")
    if form.instructions:
        text.append(f"\n{form.instructions}")
    for field in form.fields:
        text.append(f"\n  {field.title}", style="bold")
        text.append(f" ({field.kind})")
        if field.default is not None:
            text.append(f" [{_shown(field.default)}]")
        if description := field.schema.get("description"):
            text.append(f": {description}")
        if (choices := field.choices) is not None:
            text.append(f"\n    one of: {', '.join(choices)}", style="dim")
        if field.problem:
            text.append(f"\n    {field.problem}", style="red")
    return text


def fill_in(
    form: Form, read_line: Callable[[str], str], say: Callable[[str], None]
) -> dict[str, Any]:
    """Ask for each field in turn (an empty answer keeps the value shown in brackets, or
    leaves an optional field out); the values given. EOFError if input ends first."""
    values: dict[str, Any] = {}
    for field in form.fields:
        shown = f" [{_shown(field.default)}]" if field.default is not None else ""
        prompt = f"{field.title} ({field.kind}){shown}: "
        while True:
            answer = read_line(prompt).strip()
            if not answer:
                if field.default is not None:
                    values[field.name] = field.default
                    break
                if not field.required:
                    break
                say(f"{field.title} is required")
                continue
            try:
                values[field.name] = field.read(answer)
            except ValueError as exc:
                say(str(exc))
                continue
            break
    return values


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
