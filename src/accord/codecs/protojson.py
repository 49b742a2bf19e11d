"""ProtoJSON converters: 1.0 data objects to and from canonical JSON (also 0.3 REST, gRPC)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pydantic.alias_generators import to_camel
from pydantic_core import to_json

from accord.codecs.base import (
    field_error,
)
from accord.types import (
    A2AModel,
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

#
# Each converter turns the 0.3 JSON of an object into its 1.0 ProtoJSON (`to_v1`), and the
# ProtoJSON a client sent back into 0.3 JSON (`from_v1`), naming the field in every error. The
# 0.3 JSON is what the canonical models (accord.types) read and write.


class Converter(Protocol):
    """Converts one message type between its 0.3 JSON and its 1.0 ProtoJSON."""

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def from_v1(self, value: Any, path: str) -> dict[str, Any]: ...


class ModelConverter(Converter, Protocol):
    """A converter that also reads the canonical model of its message type itself.

    `dump(obj)` is what `to_v1` makes of the 0.3 JSON of `obj` nested in another model (the
    fields of the type declared there), without making that JSON: values it does not convert
    (ids, metadata, data) are the model's own, shared with it and left to the JSON encoder.
    `models` are the classes whose own 0.3 JSON has the same fields (not their subclasses).
    """

    models: frozenset[type[A2AModel]]

    def dump(self, obj: Any) -> dict[str, Any]: ...


def dumped(converter: ModelConverter, model: A2AModel) -> dict[str, Any]:
    """`converter.to_v1(model.to_wire())`, read from the model where it can be: JSON for
    `encode_dumped`, not to be changed (it shares values with the model)."""
    if type(model) in converter.models:
        return converter.dump(model)
    return converter.to_v1(model.to_wire())


def encode_dumped(value: Any) -> bytes:
    """The JSON of what holds `dumped` objects. Their values not yet encoded (metadata, data)
    are encoded as the models' own dump encodes them: models among them by alias without
    nulls, infinities and NaN as null (what was converted from a dump is JSON already)."""
    return to_json(value, by_alias=True, exclude_none=True, inf_nan_mode="null")


def encode(converter: ModelConverter, model: A2AModel) -> bytes:
    """The ProtoJSON bytes of `model`: those of `converter.to_v1(model.to_wire())`."""
    return encode_dumped(dumped(converter, model))


class ProtoEnum:
    """A proto enum: its ProtoJSON names in number order, each with its 0.3 value (or None)."""

    def __init__(self, name: str, values: Sequence[tuple[str, str | None]]) -> None:
        self.name = name
        self._to_v1 = {old: new for new, old in values if old is not None}
        self._from_v1: dict[str | int, str] = {}
        for number, (new, old) in enumerate(values):
            if old is not None:
                self._from_v1[new] = self._from_v1[number] = old
        self.names = [new for new, old in values if old is not None]

    def to_v1(self, value: str) -> str:
        return self._to_v1[value]

    def from_v1(self, value: Any, path: str) -> str:
        """The 0.3 value of a ProtoJSON enum value (its name, or its number)."""
        if isinstance(value, str | int) and not isinstance(value, bool):
            found = self._from_v1.get(value)
            if found is not None:
                return found
        raise field_error(
            path, f"{value!r} is not a {self.name}; use one of {', '.join(self.names)}"
        )


ROLE = ProtoEnum(
    "Role", [("ROLE_UNSPECIFIED", None), ("ROLE_USER", Role.USER), ("ROLE_AGENT", Role.AGENT)]
)
TASK_STATE = ProtoEnum(
    "TaskState",
    [
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
        ("TASK_STATE_WORKING", TaskState.WORKING),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        ("TASK_STATE_FAILED", TaskState.FAILED),
        ("TASK_STATE_CANCELED", TaskState.CANCELED),
        ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_REJECTED", TaskState.REJECTED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
    ],
)


def proto_object(value: Any, path: str) -> dict[str, Any]:
    """A ProtoJSON object: members under their lowerCamelCase names (proto names accepted too),
    null members dropped (null means the default in ProtoJSON)."""
    if not isinstance(value, dict):
        raise field_error(path or "params", "must be an object")
    for k, v in value.items():
        if v is None or "_" in k:
            return {to_camel(k) if "_" in k else k: v for k, v in value.items() if v is not None}
    return value.copy()  # what nearly every client sends: nothing to rename or drop


def _join(path: str, name: str | int) -> str:
    return f"{path}.{name}" if path else str(name)


_DumpedField = tuple[str, str, Callable[[Any], Any] | None]
"""A model field as Shape.dump reads it: attribute, ProtoJSON member, conversion (if any)."""


class Shape:
    """A message type whose two JSON forms differ only in a few members.

    `kind` is its 0.3 discriminator (1.0 has none); `enums` are members holding an enum;
    `one` and `many` are members holding one, or a list of, nested messages; `only_v0_3`
    are 0.3 members 1.0 does not have; `renamed` maps a 0.3 member to its ProtoJSON name
    where they differ (the 0.3 proto, see codecs.rest_v0_3). Every other member is the same.
    With `model`, its canonical model, it can also `dump` one (see ModelConverter); its
    nested messages' converters must then be able to as well.

    What each member needs is worked out here once, not on every object converted.
    """

    def __init__(
        self,
        *,
        kind: str | None = None,
        enums: Mapping[str, ProtoEnum] | None = None,
        one: Mapping[str, Converter] | None = None,
        many: Mapping[str, Converter] | None = None,
        only_v0_3: Sequence[str] = (),
        renamed: Mapping[str, str] | None = None,
        model: type[A2AModel] | None = None,
    ) -> None:
        self.kind = kind
        self.enums = enums or {}
        self.one = one or {}
        self.many = many or {}
        self.only_v0_3 = frozenset(("kind", *only_v0_3))
        self.renamed = dict(renamed or {})
        self.models: frozenset[type[A2AModel]] = frozenset((model,) if model else ())
        self._dumped = self._dumped_fields(model) if model else ()
        # The conversion of each member that has one, looked up once per member present.
        self._to_v1_values: dict[str, Callable[[Any], Any]] = {
            **{name: enum.to_v1 for name, enum in self.enums.items()},
            **{name: child.to_v1 for name, child in self.one.items()},
            **{name: _each(child.to_v1) for name, child in self.many.items()},
        }
        # What from_v1 checks, in this order (enums, then one, then many), each with the
        # member's name as the client spells it, for the paths of errors.
        self._from_v1_steps: tuple[tuple[str, str, Callable[[Any, str], Any]], ...] = (
            *((name, self._spelled(name), enum.from_v1) for name, enum in self.enums.items()),
            *((name, self._spelled(name), child.from_v1) for name, child in self.one.items()),
            *(
                (name, self._spelled(name), _each_from_v1(child))
                for name, child in self.many.items()
            ),
        )

    def _spelled(self, name: str) -> str:
        """Member `name` as the client spells it."""
        return self.renamed.get(name, name)

    def _dumped_fields(self, model: type[A2AModel]) -> tuple[_DumpedField, ...]:
        """How `dump` reads each field of `model`: its attribute, its ProtoJSON name and the
        conversion of its value, in the order `to_v1` leaves the members (renamed ones last)."""
        fields: dict[str, _DumpedField] = {}
        for attribute, info in model.model_fields.items():
            name = info.serialization_alias or info.alias or attribute
            if name in self.only_v0_3:
                continue
            convert: Callable[[Any], Any] | None = None
            if name in self.enums:
                convert = self.enums[name].to_v1
            elif name in self.one:
                convert = _model_converter(self.one[name]).dump
            elif name in self.many:
                convert = _each(_model_converter(self.many[name]).dump)
            fields[name] = (attribute, name, convert)
        for name, wire in self.renamed.items():
            if name in fields:
                attribute, _, convert = fields.pop(name)
                fields[name] = (attribute, wire, convert)
        return tuple(fields.values())

    def dump(self, obj: Any) -> dict[str, Any]:
        values = obj.__dict__  # every field's value, None included
        out: dict[str, Any] = {}
        for attribute, name, convert in self._dumped:
            value = values[attribute]
            if value is not None:
                out[name] = value if convert is None else convert(value)
        return out

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        convert, skip = self._to_v1_values.get, self.only_v0_3
        out = {k: v if (f := convert(k)) is None else f(v) for k, v in obj.items() if k not in skip}
        for name, wire in self.renamed.items():
            if name in out:
                out[wire] = out.pop(name)
        return out

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        out = proto_object(value, path)
        for name, wire in self.renamed.items():
            if name in out:  # a likely mix-up of the two forms, which would lose data
                raise field_error(_join(path, name), f"not a member here; did you mean {wire}?")
            if wire in out:
                out[name] = out.pop(wire)
        for name, spelled, convert in self._from_v1_steps:
            if name in out:
                out[name] = convert(out[name], f"{path}.{spelled}" if path else spelled)
        if self.kind is not None:
            out["kind"] = self.kind
        return out


def _model_converter(converter: Converter) -> ModelConverter:
    if not hasattr(converter, "dump") or (isinstance(converter, Shape) and not converter.models):
        raise TypeError(f"{converter!r} cannot read models; give it its model")
    return converter  # type: ignore[return-value]


# Loops rather than comprehensions below: the lists are short, and a comprehension costs a
# function call of its own (before Python 3.12).


def _each(convert: Callable[[Any], dict[str, Any]]) -> Callable[[Any], list[dict[str, Any]]]:
    return lambda items: list(map(convert, items))


def _each_from_v1(child: Converter) -> Callable[[Any, str], list[dict[str, Any]]]:
    def convert(items: Any, where: str) -> list[dict[str, Any]]:
        if not isinstance(items, list):
            raise field_error(where, "must be a list")
        out = []
        for i, item in enumerate(items):
            out.append(child.from_v1(item, f"{where}.{i}"))
        return out

    return convert


class StatusUpdateShape(Shape):
    """TaskStatusUpdateEvent: 1.0 dropped `final`; a status that ends a stream implies it."""

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        out = super().from_v1(value, path)
        status = out.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        out["final"] = state in _FINAL_STATES
        return out


_FINAL_STATES = {state.value for state in TaskState if state.is_terminal or state.is_interrupted}

# 1.0 Part: exactly one content member; `raw` and `url` are the two forms of a 0.3 file part.
_PART_KIND = {"text": "text", "raw": "file", "url": "file", "data": "data"}
_FILE_CONTENT = {"raw": "bytes", "url": "uri"}  # 1.0 part member -> 0.3 file member
_FILE_INFO = {"mediaType": "mimeType", "filename": "name"}  # 1.0 part member -> 0.3 file member
_FILE_ATTRIBUTES = {"mediaType": "mime_type", "filename": "name"}  # the same, as attributes


class PartConverter:
    """Part: a 1.0 part holds one of text, raw, url or data; a 0.3 part is a `kind` union.

    A 1.0 media type or file name on a text or data part has no place in 0.3 and is dropped.
    """

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        kind = obj["kind"]
        if kind == "file":
            file = obj["file"]
            for new, old in _FILE_CONTENT.items():
                if old in file:
                    out[new] = file[old]
            for new, old in _FILE_INFO.items():
                if old in file:
                    out[new] = file[old]
        else:
            out[kind] = obj[kind]
        if "metadata" in obj:
            out["metadata"] = obj["metadata"]
        return out

    models: frozenset[type[A2AModel]] = frozenset()  # a part is only ever nested

    def dump(self, obj: Any) -> dict[str, Any]:
        kind = obj.kind
        out: dict[str, Any]
        if kind == "file":
            file = obj.file.__dict__
            out = {new: file[old] for new, old in _FILE_CONTENT.items() if old in file}
            for new, attribute in _FILE_ATTRIBUTES.items():
                if file[attribute] is not None:
                    out[new] = file[attribute]
        else:
            out = {kind: getattr(obj, kind)}
        if obj.metadata is not None:
            out["metadata"] = obj.metadata
        return out

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        part = proto_object(value, path)
        member = ""  # the one content member present, if only one is
        for name in _PART_KIND:
            if name in part:
                if member:
                    member = ""
                    break
                member = name
        if not member:
            present = [name for name in _PART_KIND if name in part]
            found = f" (found {', '.join(present)})" if present else ""
            raise field_error(path, f"a part holds exactly one of text, raw, url or data{found}")
        for name in _FILE_INFO:
            if name in part and not isinstance(part[name], str):
                raise field_error(_join(path, name), "must be a string")
        content = part[member]
        if member == "data":
            if not isinstance(content, dict):
                message = "this server takes only JSON objects as data"
                raise field_error(_join(path, "data"), message)
        elif not isinstance(content, str):
            raise field_error(_join(path, member), "must be a string")
        out: dict[str, Any] = {"kind": _PART_KIND[member]}
        if member in _FILE_CONTENT:
            file = {_FILE_CONTENT[member]: content}
            file.update({old: part[new] for new, old in _FILE_INFO.items() if new in part})
            out["file"] = file
        else:
            out[member] = content
        if "metadata" in part:
            if not isinstance(part["metadata"], dict):
                raise field_error(_join(path, "metadata"), "must be an object")
            out["metadata"] = part["metadata"]
        return out


class OneOf:
    """A wrapper holding exactly one of several messages, told apart in 0.3 by their `kind`."""

    def __init__(self, members: Mapping[str, Shape]) -> None:
        self.members = members
        self._by_kind = {shape.kind: (member, shape) for member, shape in members.items()}
        self.models = frozenset().union(*(shape.models for shape in members.values()))

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        member, shape = self._by_kind[obj["kind"]]
        return {member: shape.to_v1(obj)}

    def dump(self, obj: Any) -> dict[str, Any]:
        member, shape = self._by_kind[obj.kind]
        return {member: shape.dump(obj)}

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        wrapper = proto_object(value, path)
        present = [member for member in self.members if member in wrapper]
        if len(present) != 1:
            raise field_error(
                path or "result", f"must hold exactly one of {', '.join(self.members)}"
            )
        member = present[0]
        return self.members[member].from_v1(wrapper[member], _join(path, member))


PART = PartConverter()
MESSAGE = Shape(kind="message", enums={"role": ROLE}, many={"parts": PART}, model=Message)
ARTIFACT = Shape(many={"parts": PART}, model=Artifact)
TASK_STATUS = Shape(enums={"state": TASK_STATE}, one={"message": MESSAGE}, model=TaskStatus)
TASK = Shape(
    kind="task",
    one={"status": TASK_STATUS},
    many={"artifacts": ARTIFACT, "history": MESSAGE},
    model=Task,
)
STATUS_UPDATE = StatusUpdateShape(
    kind="status-update",
    one={"status": TASK_STATUS},
    only_v0_3=("final",),
    model=TaskStatusUpdateEvent,
)
ARTIFACT_UPDATE = Shape(
    kind="artifact-update", one={"artifact": ARTIFACT}, model=TaskArtifactUpdateEvent
)
SEND_MESSAGE_RESPONSE = OneOf({"task": TASK, "message": MESSAGE})
STREAM_RESPONSE = OneOf(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
)
