"""1.0's ProtoJSON written straight from the canonical models and read straight into them.

The converters of `protojson` turn 0.3 JSON into ProtoJSON and back: general, but every object
they convert is walked in Python. The busiest shapes (a task, a message, a stream's events;
a sent message) are here also pydantic-core schemas over the canonical models' own fields,
built once: the 1.0 member names, `kind` left out, the enums' ProtoJSON names. Their results
are those of the converters (tests/test_codec_protojson_models.py holds them to it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from operator import attrgetter
from typing import Any

from pydantic_core import CoreConfig, SchemaSerializer, SchemaValidator
from pydantic_core import core_schema as cs

from accord.codecs.protojson import (
    PART,
    ROLE,
    TASK_STATE,
    Converter,
    OneOf,
    ProtoEnum,
    encode,
    timestamp_to_v1,
)
from accord.types import (
    A2AModel,
    Artifact,
    DataPart,
    FilePart,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_CONFIG = CoreConfig(
    # What the models' own JSON does: NaN and infinities as null.
    ser_json_inf_nan="null",
    # Read: the 1.0 names only, nothing else (anything else goes the converters' way).
    validate_by_alias=True,
    validate_by_name=False,
    extra_fields_behavior="forbid",
)


def _fields(model: type[A2AModel]) -> dict[str, cs.ModelField]:
    """The fields of `model`'s own core schema, in their order."""
    schema = model.__pydantic_core_schema__
    if schema["type"] != "model" or schema["schema"]["type"] != "model-fields":
        raise TypeError(f"{model.__name__} has no plain model schema")
    return dict(schema["schema"]["fields"])


# --- writing ---------------------------------------------------------------------------------

_OWN_FIELDS = attrgetter("__dict__")
"""A model's field values, taken in C, written by a typed-dict schema of its fields: a model
schema naming a complete model class gets that class's own serializer from pydantic-core,
whatever fields it lists (as `validator` says of validators)."""

_LEFT_OUT = frozenset({"kind", "final"})
"""Members 0.3 has and 1.0 does not: the discriminator, and `final` of a status update."""


def _written(model: type[A2AModel], **changed: cs.CoreSchema) -> cs.CoreSchema:
    """How an instance of `model` is written in 1.0: its fields under their 0.3 names (the
    same in 1.0) but for those 1.0 leaves out, those named in `changed` written by their
    schema there (the enums, the nested messages)."""
    fields: dict[str, cs.TypedDictField] = {}
    for name, field in _fields(model).items():
        fields[name] = cs.typed_dict_field(
            changed.get(name, field["schema"]),
            required=False,
            serialization_alias=field.get("serialization_alias"),
            serialization_exclude=name in _LEFT_OUT,
        )
    written = cs.typed_dict_schema(fields)
    return cs.any_schema(
        serialization=cs.plain_serializer_function_ser_schema(_OWN_FIELDS, return_schema=written)
    )


def _enum_written(enum: ProtoEnum) -> cs.CoreSchema:
    return cs.any_schema(
        serialization=cs.plain_serializer_function_ser_schema(
            enum.to_v1, return_schema=cs.str_schema()
        )
    )


def _optional(schema: cs.CoreSchema) -> cs.CoreSchema:
    return cs.nullable_schema(schema)


def _serializer(schema: cs.CoreSchema) -> Callable[[Any], bytes]:
    """The JSON bytes `schema` writes of a value, as a model's `to_json` writes: by alias, no
    null members."""
    return partial(SchemaSerializer(schema, _CONFIG).to_json, by_alias=True, exclude_none=True)


# A part is written by PART.dump: a part holds one member, and a file is flattened into it.
_PARTS_WRITTEN = cs.list_schema(
    cs.any_schema(serialization=cs.plain_serializer_function_ser_schema(PART.dump))
)
_MESSAGE_WRITTEN = _written(Message, role=_enum_written(ROLE), parts=_PARTS_WRITTEN)
_TIMESTAMP_WRITTEN = cs.any_schema(
    serialization=cs.plain_serializer_function_ser_schema(
        timestamp_to_v1, return_schema=cs.str_schema()
    )
)
_STATUS_WRITTEN = _written(
    TaskStatus,
    state=_enum_written(TASK_STATE),
    message=_optional(_MESSAGE_WRITTEN),
    timestamp=_optional(_TIMESTAMP_WRITTEN),
)
_ARTIFACT_WRITTEN = _written(Artifact, parts=_PARTS_WRITTEN)
_TASK_WRITTEN = _written(
    Task,
    status=_STATUS_WRITTEN,
    artifacts=_optional(cs.list_schema(_ARTIFACT_WRITTEN)),
    history=_optional(cs.list_schema(_MESSAGE_WRITTEN)),
)

_WRITERS: Mapping[type[A2AModel], Callable[[Any], bytes]] = {
    model: _serializer(schema)
    for model, schema in (
        (Task, _TASK_WRITTEN),
        (Message, _MESSAGE_WRITTEN),
        (TaskStatusUpdateEvent, _written(TaskStatusUpdateEvent, status=_STATUS_WRITTEN)),
        (TaskArtifactUpdateEvent, _written(TaskArtifactUpdateEvent, artifact=_ARTIFACT_WRITTEN)),
    )
}
# The member of a SendMessageResponse or StreamResponse holding each of them.
_MEMBERS = {
    Task: b'{"task":',
    Message: b'{"message":',
    TaskStatusUpdateEvent: b'{"statusUpdate":',
    TaskArtifactUpdateEvent: b'{"artifactUpdate":',
}


def write(converter: Converter, model: A2AModel) -> bytes:
    """The ProtoJSON bytes `converter` makes of `model` (`protojson.encode`), written from the
    model itself when it is exactly a Task, Message or event (a subclass has fields of its
    own, which only its 0.3 JSON knows)."""
    writer = _WRITERS.get(type(model))
    return encode(converter, model) if writer is None else writer(model)


def write_member(converter: OneOf, model: A2AModel) -> bytes:
    """`write` for a SendMessageResponse or StreamResponse: the member holding `model`."""
    writer = _WRITERS.get(type(model))
    if writer is None:
        return encode(converter, model)
    return _MEMBERS[type(model)] + writer(model) + b"}"


# --- reading ---------------------------------------------------------------------------------


def reading(
    model: type[A2AModel], *, extra: cs.ExtraBehavior = "forbid", **changed: cs.CoreSchema
) -> cs.CoreSchema:
    """How the 1.0 form of `model` is read into a `model`: its fields by their 0.3 names (the
    same in 1.0), those named in `changed` read by their schema there; other members are
    refused (`extra`), so that whatever this does not know goes the converters' way. The
    instance is made by pydantic-core, as from the model's own schema (see `validator`)."""
    fields = {
        name: cs.model_field(changed[name], validation_alias=field.get("validation_alias"))
        if name in changed
        else field
        for name, field in _fields(model).items()
    }
    return cs.model_schema(
        model, cs.model_fields_schema(fields, model_name=model.__name__, extra_behavior=extra)
    )


def validator(schema: cs.CoreSchema) -> SchemaValidator:
    """A validator of `schema` reading 1.0's names only. Its models are read by the schemas
    given here: by default pydantic-core validates a model class with the class's own
    validator, whatever fields its schema lists."""
    return SchemaValidator(schema, _CONFIG, _use_prebuilt=False)


_NAME_OR_NUMBER = cs.union_schema([cs.str_schema(strict=True), cs.int_schema(strict=True)])
"""What a ProtoJSON enum value may be (not a bool, which a lookup would take for 0 or 1)."""


def _enum_read(enum: ProtoEnum) -> cs.CoreSchema:
    return cs.chain_schema([_NAME_OR_NUMBER, cs.no_info_plain_validator_function(enum.value_of)])


_PART_CONTENT = {"text": "text", "data": "data", "raw": "file", "url": "file"}
_FILE_INFO = frozenset({"mediaType", "filename"})
_PART_EXTRAS = _FILE_INFO | {"metadata"}


def _part_kind(part: Any) -> str | None:
    """The canonical kind of a 1.0 part read here: one content member, with metadata (and a
    file's media type and name); None sends any other part the converters' way."""
    if type(part) is dict:
        members = part.keys() - _PART_EXTRAS
        if len(members) == 1:
            kind = _PART_CONTENT.get(next(iter(members)))
            if kind == "file" or (kind is not None and not part.keys() & _FILE_INFO):
                return kind
    return None


def _file_part(part: Any) -> dict[str, Any]:
    """A 1.0 file part (`raw` or `url`, with `mediaType` and `filename`) as a FilePart's
    fields; the FilePart's own validation checks them. Any other part is refused."""
    if _part_kind(part) != "file":
        raise ValueError("not a file part")
    content = "raw" if "raw" in part else "url"
    file = {("bytes" if content == "raw" else "uri"): part[content]}
    if "mediaType" in part:
        file["mimeType"] = part["mediaType"]
    if "filename" in part:
        file["name"] = part["filename"]
    fields: dict[str, Any] = {"file": file}
    if "metadata" in part:
        fields["metadata"] = part["metadata"]
    return fields


# A part is the first of these it is: a text or data part holds its content and metadata only
# (spelled the same in both versions); a file part is flattened in 1.0.
_PARTS_READ = cs.list_schema(
    cs.union_schema(
        [
            reading(TextPart),
            reading(DataPart),
            cs.no_info_before_validator_function(_file_part, FilePart.__pydantic_core_schema__),
        ],
        mode="left_to_right",
    )
)
MESSAGE_READ = reading(Message, role=_enum_read(ROLE), parts=_PARTS_READ)
"""A 1.0 Message read into a Message (see `reading`)."""
