"""What an MCP tool returned, as A2A parts an agent can send on: text, files and data."""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from accord.types import DataPart, FilePart, FileWithBytes, FileWithUri, Part, TextPart


def result_parts(result: CallToolResult) -> list[Part]:
    """The result's content blocks as parts, its structured content as a data part (the text
    block repeating it as JSON, as MCP servers add for older clients, left out)."""
    structured = result.structured_content
    parts: list[Part] = []
    for block in result.content:
        if isinstance(block, TextContent):
            if structured is None or not _repeats(block.text, structured):
                parts.append(TextPart(text=block.text))
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(FilePart(file=FileWithBytes(bytes=block.data, mime_type=block.mime_type)))
        elif isinstance(block, ResourceLink):
            link = FileWithUri(uri=block.uri, mime_type=block.mime_type, name=block.name)
            parts.append(FilePart(file=link))
        elif isinstance(block, EmbeddedResource):
            parts.append(_embedded(block))
    if structured is not None:
        parts.append(
            DataPart(data=structured if isinstance(structured, dict) else {"result": structured})
        )
    return parts


def _embedded(block: EmbeddedResource) -> FilePart:
    resource = block.resource
    name = resource.uri.rstrip("/").rpartition("/")[2] or None
    if isinstance(resource, BlobResourceContents):
        content = resource.blob
    else:
        content = base64.b64encode(resource.text.encode()).decode("ascii")
    return FilePart(file=FileWithBytes(bytes=content, mime_type=resource.mime_type, name=name))


def _repeats(text: str, structured: Any) -> bool:
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False
