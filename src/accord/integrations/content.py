"""A2A parts in and out of a framework: the files and data a caller sent, the parts a reply
is made of."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from accord.types import DataPart, FilePart, FileWithBytes, FileWithUri, Message, TextPart

OCTET_STREAM = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class InFile:
    """A file the caller sent: its bytes, or the URI where the framework can fetch it."""

    media_type: str
    name: str | None = None
    data: bytes | None = None
    uri: str | None = None

    @property
    def url(self) -> str:
        """Where the file is: its URI, or a `data:` URL of its bytes."""
        if self.uri is not None:
            return self.uri
        encoded = base64.b64encode(self.data or b"").decode("ascii")
        return f"data:{self.media_type};base64,{encoded}"


def files_of(message: Message) -> list[InFile]:
    """The files of `message`, in order; inline content that is not base64 is skipped."""
    found = []
    for part in message.parts:
        if not isinstance(part, FilePart):
            continue
        file = part.file
        media_type = file.mime_type or OCTET_STREAM
        if isinstance(file, FileWithUri):
            found.append(InFile(media_type, file.name, uri=file.uri))
            continue
        try:
            data = base64.b64decode(file.bytes, validate=True)
        except (binascii.Error, ValueError):
            continue
        found.append(InFile(media_type, file.name, data=data))
    return found


def data_of(message: Message) -> list[dict[str, Any]]:
    """The structured data parts of `message`, in order."""
    return [part.data for part in message.parts if isinstance(part, DataPart)]


def file_part(data: bytes, media_type: str | None, name: str | None = None) -> FilePart:
    """A file the agent returns, carried inline."""
    encoded = base64.b64encode(data).decode("ascii")
    return FilePart(file=FileWithBytes(bytes=encoded, mime_type=media_type, name=name))


def uri_part(uri: str, media_type: str | None, name: str | None = None) -> FilePart:
    """A file the agent returns by reference."""
    return FilePart(file=FileWithUri(uri=uri, mime_type=media_type, name=name))


def data_part(value: object) -> DataPart:
    """A structured result as a DataPart: a mapping as it is, anything else under `result`
    (pydantic models, dataclasses and the like made JSON first)."""
    jsonable = to_jsonable_python(value, fallback=str)
    return DataPart(data=jsonable if isinstance(jsonable, dict) else {"result": jsonable})


def prompt_text(message: Message) -> str:
    """What a model reads of `message`: its text parts and its data parts (as JSON), in order,
    joined by newlines."""
    return "\n".join(
        part.text if isinstance(part, TextPart) else json.dumps(part.data, ensure_ascii=False)
        for part in message.parts
        if isinstance(part, TextPart | DataPart)
    )
