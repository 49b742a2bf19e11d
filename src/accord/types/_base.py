"""Base model shared by every protocol object: camelCase wire names, snake_case attributes."""

from __future__ import annotations

from enum import StrEnum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class A2AModel(BaseModel):
    """A protocol object: camelCase on the wire, snake_case in Python, unknown fields ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
        use_enum_values=False,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict of this object as the protocol spells it (no null members)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self) -> bytes:
        """The JSON bytes of this object as the protocol spells it (no null members)."""
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)

    @classmethod
    def validated(cls, data: Any) -> Self:
        """`data` validated as this model: `model_validate` without its checks of arguments
        not given, a third of its cost for a small model."""
        validated: Self = cls.__pydantic_validator__.validate_python(data)
        return validated

    def copied_with(self, **changes: Any) -> Self:
        """A shallow copy with `changes` to its fields, unvalidated: `model_copy(update=...)`
        for the runtime's hot path, without its generic steps (these models have no extra or
        private attributes to copy)."""
        copied = _new(type(self))
        _set_dict(copied, {**self.__dict__, **changes})
        _set_fields_set(copied, self.__pydantic_fields_set__ | changes.keys())
        _set_extra(copied, None)
        _set_private(copied, None)
        return copied


_new = object.__new__
# The slots of every model, set through their descriptors (`object.__setattr__` would look
# each one up along the class's MRO first).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


class WireEnum(StrEnum):
    """A protocol enumeration whose `value` is read without a Python call: pydantic reads
    it each time it writes a member (a task's state and each message's role, several times
    a send), and `Enum.value` is two Python calls."""

    if not TYPE_CHECKING:  # to a type checker, the `value` of StrEnum
        value = property(attrgetter("_value_"))


Metadata = dict[str, Any]
