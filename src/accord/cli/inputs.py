"""Command-line inputs as message parts: a file as inline base64 bytes, JSON text as data."""

from __future__ import annotations

import json
from pathlib import Path

from accord.cli.errors import BadArgument
from accord.types import DataPart, FilePart

_JSON_TYPE_NAMES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def file_part(path: Path) -> FilePart:
    """The file at `path` with its name and guessed media type."""
    try:
        return FilePart.from_path(path)
    except OSError as exc:
        raise BadArgument(f"cannot read --file {path}: {exc.strerror or exc}") from None


def data_part(text: str) -> DataPart:
    """The JSON object in `text` as structured data."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadArgument(f"--data is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        kind = _JSON_TYPE_NAMES.get(type(data), "a number")
        raise BadArgument(f"--data must be a JSON object, got {kind}")
    return DataPart(data=data)
