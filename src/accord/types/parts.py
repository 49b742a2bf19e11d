"""Content parts of messages and artifacts: text, file and structured data."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_core import to_jsonable_python

from accord.types._base import A2AModel, Metadata


class FileBase(A2AModel):
    """What every file carries besides its content."""

    mime_type: str | None = None
    name: str | None = None


class FileWithBytes(FileBase):
    """File content carried inline as base64."""

    bytes: str


class FileWithUri(FileBase):
    """File content the receiver fetches from a URI."""

    uri: str


class PartBase(A2AModel):
    """What every part carries besides its content."""

    metadata: Metadata | None = None


class TextPart(PartBase):
    """Plain text."""

    kind: Literal["text"] = "text"
    text: str


class FilePart(PartBase):
    """A file, inline or by reference."""

    kind: Literal["file"] = "file"
    file: FileWithBytes | FileWithUri

    @classmethod
    def from_bytes(
        cls, data: bytes, name: str | None = None, mime_type: str | None = None
    ) -> FilePart:
        """A file carried inline: `data` as it is (encoded here), its media type guessed
        from `name` when not given."""
        if mime_type is None and name:
            mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        encoded = base64.b64encode(data).decode("ascii")
        return cls(file=FileWithBytes(bytes=encoded, name=name, mime_type=mime_type))

    @classmethod
    def from_path(
        cls, path: str | os.PathLike[str], mime_type: str | None = None, *, name: str | None = None
    ) -> FilePart:
        """The file at `path`, inline, named after it (or `name`); raises OSError as `open`."""
        with open(path, "rb") as file:
            data = file.read()
        return cls.from_bytes(data, name or os.path.basename(os.fspath(path)), mime_type)

    @property
    def content(self) -> bytes:
        """The inline file's content, decoded; a file by URI has none here (ValueError)."""
        if not isinstance(self.file, FileWithBytes):
            raise ValueError(f"the file is at {self.file.uri}, not inline: fetch it from there")
        try:
            return base64.b64decode(self.file.bytes, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"file {self.file.name or ''} is not valid base64") from None


class DataPart(PartBase):
    """Structured JSON data (forms, parameters, results)."""

    kind: Literal["data"] = "data"
    data: Metadata

    @classmethod
    def of(cls, value: Any) -> DataPart:
        """`value` as data: a mapping, a pydantic model, a dataclass (anything pydantic can
        turn into JSON) that comes out as a JSON object; TypeError for anything else."""
        data = to_jsonable_python(value)
        if not isinstance(data, dict):
            raise TypeError(f"data must be a JSON object, not {type(data).__name__}")
        return cls(data=data)


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="kind")]
