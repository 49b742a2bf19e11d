"""Base model shared by every protocol object: camelCase wire names, snake_case attributes."""

from __future__ import annotations

from typing import Any

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


Metadata = dict[str, Any]
