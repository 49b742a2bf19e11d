"""Receipts for the expense sample: a message's file part checked, and described by its digest."""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from accord.samples.forms import Json
from accord.types import FilePart, FileWithBytes, Message

MAX_RECEIPT_BYTES = 2 * 1024 * 1024
RECEIPT_TYPES = {
    "image/png": ("a PNG image", re.compile(rb"\x89PNG\r\n\x1a\n")),
    "image/jpeg": ("a JPEG image", re.compile(rb"\xff\xd8\xff")),
    "image/webp": ("a WebP image", re.compile(rb"RIFF.{4}WEBP", re.DOTALL)),
    "application/pdf": ("a PDF document", re.compile(rb"%PDF-")),
}
"""The media types a receipt may have: what each is called, and how its content begins."""
MAX_NAME_LENGTH = 120


def accepted_types() -> str:
    """The accepted media types, for a person: "image/png, ... or application/pdf"."""
    *others, last = RECEIPT_TYPES
    return f"{', '.join(others)} or {last}"


def human_size(size: int) -> str:
    """`size` bytes in B, KiB or MiB (binary units, as the limit is stated)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


LIMIT = human_size(MAX_RECEIPT_BYTES)


class ReceiptRefused(ValueError):
    """The receipt cannot be accepted; the message says why, for a person."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What the sample keeps of a receipt: no bytes, only what identifies them."""

    name: str
    media_type: str
    size: int
    sha256: str

    def record(self) -> Json:
        return {"name": self.name, "mediaType": self.media_type, "size": self.size,
                "sha256": self.sha256}  # fmt: skip

    @classmethod
    def from_record(cls, data: object) -> Receipt | None:
        """The receipt `record()` wrote, or None when `data` is not one."""
        if not isinstance(data, dict):
            return None
        name, media_type, size, sha256 = (data.get(k) for k in ("name", "mediaType", "size",
                                                                "sha256"))  # fmt: skip
        if not (isinstance(name, str) and isinstance(media_type, str) and isinstance(sha256, str)):
            return None
        if isinstance(size, bool) or not isinstance(size, int):
            return None
        return cls(name, media_type, size, sha256)

    def __str__(self) -> str:
        return (
            f"{self.name} ({self.media_type}, {human_size(self.size)}, sha256 {self.sha256[:12]})"
        )


def receipt_in(message: Message) -> Receipt | None:
    """The receipt attached to `message` (None: no file part), or ReceiptRefused saying why not."""
    files = [part.file for part in message.parts if isinstance(part, FilePart)]
    if not files:
        return None
    if len(files) > 1:
        raise ReceiptRefused(f"attach one receipt per expense, not {len(files)} files")
    [file] = files
    name = PurePosixPath(file.name or "").name[:MAX_NAME_LENGTH] or "receipt"
    if not isinstance(file, FileWithBytes):
        raise ReceiptRefused(
            f"{name} was sent by URI ({file.uri}); only attached files are accepted (the "
            "file's bytes in the message), this agent fetches no URLs"
        )
    media_type = _media_type(file.mime_type, name)
    if media_type not in RECEIPT_TYPES:
        shown = media_type or "a file of unknown type"
        raise ReceiptRefused(f"{name} is {shown}; a receipt must be {accepted_types()}")
    if len(file.bytes) > (MAX_RECEIPT_BYTES + 2) // 3 * 4:  # said before decoding so much
        raise ReceiptRefused(_too_large(name, len(file.bytes) * 3 // 4))
    try:
        content = base64.b64decode(file.bytes, validate=True)
    except binascii.Error:
        raise ReceiptRefused(f"{name}'s bytes are not valid base64") from None
    if len(content) > MAX_RECEIPT_BYTES:
        raise ReceiptRefused(_too_large(name, len(content)))
    if not content:
        raise ReceiptRefused(f"{name} is empty")
    called, beginning = RECEIPT_TYPES[media_type]
    if not beginning.match(content):
        raise ReceiptRefused(f"{name} is said to be {media_type}, but its content is not {called}")
    return Receipt(name, media_type, len(content), hashlib.sha256(content).hexdigest())


def _media_type(declared: str | None, name: str) -> str | None:
    """The declared media type without parameters, else the one the file name suggests."""
    media_type = (declared or "").split(";")[0].strip().lower()
    if media_type in ("", "application/octet-stream"):
        media_type = mimetypes.guess_type(name)[0] or media_type
    return media_type or None


def _too_large(name: str, size: int) -> str:
    return f"{name} is {human_size(size)}; a receipt may be at most {LIMIT}"
