"""What parts become for a person: files saved and named, data as a table or indented JSON."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from rich.json import JSON
from rich.text import Text

from accord.types import FilePart, FileWithBytes

_SCALARS = (str, int, float, bool, type(None))


def file_size(file: FileWithBytes) -> int:
    """The decoded size of inline base64 content, without decoding it."""
    return len(file.bytes) * 3 // 4 - file.bytes[-2:].count("=")


def human_size(size: int) -> str:
    """`size` bytes in B, kB or MB (decimal units)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def describe_file(part: FilePart) -> str:
    """A file part in a few words: name, media type, and its size or URI."""
    file = part.file
    where = human_size(file_size(file)) if isinstance(file, FileWithBytes) else file.uri
    details = ", ".join(item for item in (file.mime_type, where) if item)
    name = f" {file.name}" if file.name else ""
    return f"[file{name} ({details})]"


def save_file(file: FileWithBytes, directory: Path) -> Path:
    """Write inline file content into `directory` under its own name, never over another file.

    Only the name's last component is used, so a name cannot point outside `directory`; a
    file without a name is called `file` with the extension of its media type.
    """
    name = Path(file.name or "").name
    if not name or name in (".", ".."):
        name = "file" + (mimetypes.guess_extension(file.mime_type or "") or "")
    try:
        content = base64.b64decode(file.bytes, validate=False)
    except (binascii.Error, ValueError):
        content = file.bytes.encode()
    directory.mkdir(parents=True, exist_ok=True)
    path = _unused(directory / name)
    path.write_bytes(content)
    return path


def _unused(path: Path) -> Path:
    """`path`, or `stem-2.ext`, `stem-3.ext`, ... when it exists."""
    candidate, number = path, 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
    return candidate


def data_view(data: dict[str, Any]) -> RenderableType:
    """Structured data: a two-column table when its values are plain, else indented JSON."""
    if data and all(isinstance(value, _SCALARS) for value in data.values()):
        width = max(len(key) for key in data)
        table = Text()
        for number, (key, value) in enumerate(data.items()):
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            table.append("\n" if number else "")
            table.append(key.ljust(width), style="bold")
            table.append(f"  {shown}")
        return table  # the values unpadded: no line ends in spaces
    return JSON.from_data(data, indent=2, ensure_ascii=False)
