"""Command-line inputs as message parts: a file as inline base64 bytes, JSON text as data."""

from __future__ import annotations

from pathlib import Path

from accord.cli.errors import BadArgument
from accord.cli.options import json_object
from accord.types import DataPart, FilePart


def file_part(path: Path, option: str = "--file") -> FilePart:
    """The file at `path` with its name and guessed media type."""
    try:
        return FilePart.from_path(path)
    except OSError as exc:
        raise BadArgument(f"cannot read {option} {path}: {exc.strerror or exc}") from None


def data_part(text: str, option: str = "--data") -> DataPart:
    """The JSON object in `text` as structured data."""
    return DataPart(data=json_object(text, option))
