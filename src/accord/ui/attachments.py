"""Files the user attaches to a message: checked, made a FilePart, and shown without their bytes."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from accord.types import FilePart, FileWithBytes

MAX_FILE_BYTES = 5 * 1024 * 1024
"""The largest file the UI sends: base64 makes it a third larger, which keeps a message well
under an accord server's 10 MiB body limit."""


class AttachmentRefused(ValueError):
    """The attached file cannot be sent; the message says why, for a person."""


def file_part(file: Any) -> FilePart:
    """The FilePart of an attachment as the page sends it: `{"name", "mimeType", "bytes"}`,
    the bytes in base64."""
    if not isinstance(file, dict):
        raise AttachmentRefused('`file` must be an object: {"name", "mimeType", "bytes"}')
    name, mime_type, data = file.get("name"), file.get("mimeType"), file.get("bytes")
    if not isinstance(data, str):
        raise AttachmentRefused("`file.bytes` must be the file's content in base64")
    if not isinstance(name, str) or not isinstance(mime_type or "", str):
        raise AttachmentRefused("`file.name` and `file.mimeType` must be text")
    if _decoded_size(data) > MAX_FILE_BYTES:  # said before decoding anything that large
        raise AttachmentRefused(f"{name} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        size = len(base64.b64decode(data, validate=True))
    except binascii.Error:
        raise AttachmentRefused("`file.bytes` is not valid base64") from None
    if size > MAX_FILE_BYTES:
        raise AttachmentRefused(f"{name} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    content = FileWithBytes(
        bytes=data, mime_type=mime_type or "application/octet-stream", name=name
    )
    return FilePart(file=content)


def without_bytes(message: dict[str, Any]) -> dict[str, Any]:
    """A message as sent (wire JSON) with each inline file's bytes replaced by its size, so the
    conversation shown on every page stays small."""
    parts = []
    for part in message.get("parts", []):
        file = part.get("file") if part.get("kind") == "file" else None
        if isinstance(file, dict) and "bytes" in file:
            shown = {k: v for k, v in file.items() if k != "bytes"}
            part = {**part, "file": {**shown, "size": _decoded_size(file["bytes"])}}
        parts.append(part)
    return {**message, "parts": parts}


def _decoded_size(data: str) -> int:
    """How many bytes the base64 text `data` holds."""
    return len(data) * 3 // 4 - data[-2:].count("=")
