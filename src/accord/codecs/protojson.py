"""ProtoJSON converters: 1.0 data objects to and from canonical JSON (also 0.3 REST, gRPC)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from pydantic.alias_generators import to_camel
from pydantic_core import to_json

from accord.codecs.base import (
    field_error,
)
from accord.types import (
    A2AModel,
    Role,
    TaskState,
)

#
# Each converter turns the 0.3 JSON of an object into its 1.0 ProtoJSON (`to_v1`), and the
# ProtoJSON a client sent back into 0.3 JSON (`from_v1`), naming the field in every error. The
# 0.3 JSON is what the canonical models (accord.types) read and write.


class Converter(Protocol):
    """Converts one message type between its 0.3 JSON and its 1.0 ProtoJSON."""

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def from_v1(self, value: Any, path: str) -> dict[str, Any]: ...


def encode(converter: Converter, model: A2AModel) -> bytes:
    """The ProtoJSON bytes of `model`, converted from its 0.3 JSON (the general way: for the
    busiest shapes, `protojson_models` writes them from the model itself)."""
    return to_json(converter.to_v1(model.to_wire()))


def timestamp_to_v1(value: str) -> str:
    """A status time as ProtoJSON writes it: a Timestamp names its offset, so a date and time
    without one (some implementations write local times so) is read as UTC and given its `Z`;
    any other value is left as it is."""
    if value.endswith(("Z", "z")) or "T" not in value:
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    return value if moment.tzinfo is not None else f"{value}Z"


class ProtoEnum:
    """A proto enum: its ProtoJSON names in number order, each with its 0.3 value (or None)."""

    def __init__(self, name: str, values: Sequence[tuple[str, str | None]]) -> None:
        self.name = name
        to_v1 = {old: new for new, old in values if old is not None}
        self.to_v1: Callable[[str], str] = to_v1.__getitem__
        """The ProtoJSON name of a 0.3 value (a lookup made in C: it writes every enum)."""
        self.names = [new for new, old in values if old is not None]
        from_v1 = _EnumValues(f"is not a {name}; use one of {', '.join(self.names)}")
        for number, (new, old) in enumerate(values):
            if old is not None:
                from_v1[new] = from_v1[number] = old
        self._from_v1 = from_v1
        self.value_of: Callable[[str | int], str] = from_v1.__getitem__
        """The 0.3 value of a ProtoJSON name or number, else ValueError (as a validator
        raises): a lookup made in C, which takes a bool for 0 or 1 (`canonical` does not)."""

    def from_v1(self, value: Any, path: str) -> str:
        """The 0.3 value of a ProtoJSON enum value (its name, or its number)."""
        try:
            return self.canonical(value)
        except ValueError as exc:
            raise field_error(path, str(exc)) from None

    def canonical(self, value: Any) -> str:
        """The 0.3 value of a ProtoJSON enum value, or ValueError (as a validator raises)."""
        if isinstance(value, str | int) and not isinstance(value, bool):
            return self._from_v1[value]
        raise self._from_v1.refused(value)


class _EnumValues(dict[str | int, str]):
    """A ProtoJSON enum's 0.3 values by name and number; a missing one is a ValueError."""

    def __init__(self, refusal: str) -> None:
        super().__init__()
        self.refusal = refusal

    def __missing__(self, key: Any) -> str:
        raise self.refused(key)

    def refused(self, value: Any) -> ValueError:
        return ValueError(f"{value!r} {self.refusal}")


ROLE = ProtoEnum(
    "Role", [("ROLE_UNSPECIFIED", None), ("ROLE_USER", Role.USER), ("ROLE_AGENT", Role.AGENT)]
)
TASK_STATES = [
    ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
    ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
    ("TASK_STATE_WORKING", TaskState.WORKING),
    ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
    ("TASK_STATE_FAILED", TaskState.FAILED),
    ("TASK_STATE_CANCELED", TaskState.CANCELED),
    ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
    ("TASK_STATE_REJECTED", TaskState.REJECTED),
    ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
]
"""The task states in proto number order, by their 1.0 names."""
TASK_STATE = ProtoEnum("TaskState", TASK_STATES)


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


class Shape:
    """A message type whose two JSON forms differ only in a few members.

    `kind` is its 0.3 discriminator (1.0 has none); `enums` are members holding an enum;
    `one` and `many` are members holding one, or a list of, nested messages; `written` are
    members whose value is changed on the way to ProtoJSON only (a status time given its
    offset); `only_v0_3` are 0.3 members 1.0 does not have; `renamed` maps a 0.3 member to its
    ProtoJSON name where they differ (the 0.3 proto, see codecs.rest_v0_3). Every other member
    is the same.

    What each member needs is worked out here once, not on every object converted.
    """

    def __init__(
        self,
        *,
        kind: str | None = None,
        enums: Mapping[str, ProtoEnum] | None = None,
        one: Mapping[str, Converter] | None = None,
        many: Mapping[str, Converter] | None = None,
        written: Mapping[str, Callable[[Any], Any]] | None = None,
        only_v0_3: Sequence[str] = (),
        renamed: Mapping[str, str] | None = None,
    ) -> None:
        self.kind = kind
        self.enums = enums or {}
        self.one = one or {}
        self.many = many or {}
        self.only_v0_3 = frozenset(("kind", *only_v0_3))
        self.renamed = dict(renamed or {})
        # The conversion of each member that has one, looked up once per member present.
        self._to_v1_values: dict[str, Callable[[Any], Any]] = {
            **{name: enum.to_v1 for name, enum in self.enums.items()},
            **{name: child.to_v1 for name, child in self.one.items()},
            **{name: _each(child.to_v1) for name, child in self.many.items()},
            **(written or {}),
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

    def dump(self, obj: Any) -> dict[str, Any]:
        """The ProtoJSON members of a canonical part (its values, not yet JSON): what
        `to_v1` makes of its 0.3 JSON, read from the model (see protojson_models)."""
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

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        member, shape = self._by_kind[obj["kind"]]
        return {member: shape.to_v1(obj)}

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
MESSAGE = Shape(kind="message", enums={"role": ROLE}, many={"parts": PART})
ARTIFACT = Shape(many={"parts": PART})
TASK_STATUS = Shape(
    enums={"state": TASK_STATE}, one={"message": MESSAGE}, written={"timestamp": timestamp_to_v1}
)
TASK = Shape(
    kind="task",
    one={"status": TASK_STATUS},
    many={"artifacts": ARTIFACT, "history": MESSAGE},
)
STATUS_UPDATE = StatusUpdateShape(
    kind="status-update",
    one={"status": TASK_STATUS},
    only_v0_3=("final",),
)
ARTIFACT_UPDATE = Shape(kind="artifact-update", one={"artifact": ARTIFACT})
SEND_MESSAGE_RESPONSE = OneOf({"task": TASK, "message": MESSAGE})
STREAM_RESPONSE = OneOf(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
)
