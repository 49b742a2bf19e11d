"""What an agent answered, as an MCP tool result: its parts as content blocks (text, image,
audio, embedded resource, resource link), its data as structured content, its questions as
results that say how to answer them."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from accord.types import (
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)


def tool_result(answer: Task | Message) -> CallToolResult:
    """The tool result of an agent's answer: a plain reply, or a task in the state it is in."""
    if isinstance(answer, Message):
        content, data = _content(answer.parts, f"a2a://messages/{answer.message_id}")
        ids = {"contextId": answer.context_id} if answer.context_id else {}
        return CallToolResult(content=content, structured_content=_structured(ids, data))
    task = answer
    state = task.status.state
    ids = {"state": state.value, "taskId": task.id, "contextId": task.context_id}
    said = task.status.message.parts if task.status.message else []
    if state.is_interrupted:
        return _question(task, said, ids)
    if state.is_terminal and state is not TaskState.COMPLETED:
        content, _ = _content(said, _task_uri(task.id, "status"))
        if not any(isinstance(block, TextContent) for block in content):
            content.insert(0, TextContent(text=f"The agent's task ended {state.value}."))
        return CallToolResult(content=content, structured_content=ids, is_error=True)
    content, data = _content(said, _task_uri(task.id, "status"))
    for artifact in task.artifacts or ():
        parts = _joined_chunks(artifact.parts)
        more, more_data = _content(parts, _task_uri(task.id, artifact.artifact_id))
        content += more
        data += more_data
    if not state.is_terminal:  # a stream that ended early: say where the task stands
        content.append(TextContent(text=f"The task is still {state.value} (taskId {task.id})."))
    return CallToolResult(content=content, structured_content=_structured(ids, data))


def _joined_chunks(parts: Sequence[Part]) -> list[Part]:
    """An artifact's parts with each run of text parts (the chunks it was streamed in) as one."""
    joined: list[Part] = []
    for part in parts:
        if isinstance(part, TextPart) and joined and isinstance(joined[-1], TextPart):
            joined[-1] = TextPart(text=joined[-1].text + part.text)
        else:
            joined.append(part)
    return joined


def _question(task: Task, said: Sequence[Part], ids: dict[str, Any]) -> CallToolResult:
    """An agent waiting for input (or for credentials): what it asks and how to answer."""
    content, data = _content(said, _task_uri(task.id, "status"))
    asked = "\n".join(block.text for block in content if isinstance(block, TextContent))
    what = "input" if task.status.state is TaskState.INPUT_REQUIRED else "authentication"
    if not asked:
        content.insert(0, TextContent(text=f"The agent asks for {what}."))
    content.append(
        TextContent(
            text=f"The agent waits for {what}: call this tool again with taskId"
            f' "{task.id}" and the answer as the message.'
        )
    )
    structured = _structured({**ids, "question": asked or None}, data)
    return CallToolResult(content=content, structured_content=structured)


def _structured(ids: dict[str, Any], data: list[dict[str, Any]]) -> dict[str, Any]:
    found = {name: value for name, value in ids.items() if value is not None}
    return {**found, "data": data} if data else found


def _task_uri(task_id: str, where: str) -> str:
    return f"a2a://tasks/{task_id}/{where}"


def _content(parts: Sequence[Part], uri: str) -> tuple[list[ContentBlock], list[dict[str, Any]]]:
    """Parts as content blocks, and the data of the data parts (also shown as JSON text)."""
    content: list[ContentBlock] = []
    data: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        if isinstance(part, TextPart):
            content.append(TextContent(text=part.text))
        elif isinstance(part, DataPart):
            data.append(part.data)
            content.append(TextContent(text=json.dumps(part.data, ensure_ascii=False)))
        else:
            content.append(_file_content(part, f"{uri}/{part.file.name or index}"))
    return content, data


def _file_content(part: FilePart, uri: str) -> ContentBlock:
    """A file: an image or audio block, an embedded resource, or a link to where it is."""
    file = part.file
    mime = (file.mime_type or "application/octet-stream").lower()
    if not isinstance(file, FileWithBytes):
        return ResourceLink(uri=file.uri, name=file.name or file.uri, mime_type=file.mime_type)
    if mime.startswith("image/"):
        return ImageContent(data=file.bytes, mime_type=mime)
    if mime.startswith("audio/"):
        return AudioContent(data=file.bytes, mime_type=mime)
    text = _as_text(file.bytes) if mime.startswith("text/") or mime.endswith("json") else None
    if text is not None:
        return EmbeddedResource(resource=TextResourceContents(uri=uri, mime_type=mime, text=text))
    return EmbeddedResource(resource=BlobResourceContents(uri=uri, mime_type=mime, blob=file.bytes))


def _as_text(encoded: str) -> str | None:
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def progress_note(event: StreamEvent) -> str:
    """A line saying what a stream event is, for a progress notification."""
    if isinstance(event, TaskStatusUpdateEvent):
        said = event.status.message.text if event.status.message else ""
        return said or event.status.state.value
    if isinstance(event, TaskArtifactUpdateEvent):
        text = event.artifact.text
        return text or f"artifact {event.artifact.name or event.artifact.artifact_id}"
    if isinstance(event, Task):
        return event.status.state.value
    return event.text or "reply"
