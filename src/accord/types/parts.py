"""Content parts of messages and artifacts: text, file and structured data."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

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


class DataPart(PartBase):
    """Structured JSON data (forms, parameters, results)."""

    kind: Literal["data"] = "data"
    data: Metadata


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="kind")]
