"""accord.mcp without I/O: tools from cards, tool arguments, and content both ways."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from accord.mcp.agent_results import tool_result
from accord.mcp.tool_parts import result_parts
from accord.mcp.tool_specs import BadArguments, agent_tools, read_arguments, tool_name
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)


def card(name: str, *skills: AgentSkill, modes: list[str] | None = None) -> AgentCard:
    return AgentCard(
        name=name,
        description=f"{name} does things.",
        url="http://agent.example",
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=modes or ["text/plain"],
        default_output_modes=["text/plain"],
        skills=list(skills),
    )


def skill(skill_id: str, modes: list[str] | None = None) -> AgentSkill:
    return AgentSkill(
        id=skill_id, name=skill_id, description=f"Does {skill_id}.", tags=["t"], input_modes=modes
    )


def task(state: TaskState, *artifacts: list[Part], said: list[Part] | None = None) -> Task:
    message = Message.agent("") if said is not None else None
    if message is not None:
        message = message.model_copy(update={"parts": said})
    return Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=state, message=message),
        artifacts=[Artifact(artifact_id=f"a{i}", parts=p) for i, p in enumerate(artifacts)] or None,
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_tool_per_skill_and_per_agent_without_skills_with_unique_names() -> None:
    cards = [
        card("Weather Bot", skill("forecast"), skill("Radar Map!")),
        card("Weather Bot"),
        card("Other", skill("forecast")),
    ]
    tools = agent_tools(cards)
    assert [(t.name, t.agent) for t in tools] == [
        ("forecast", 0),
        ("radar_map", 0),
        ("weather_bot", 1),
        ("forecast_2", 2),
    ]
    assert tools[0].description.startswith("Does forecast.\nA skill of the A2A agent Weather Bot.")
    assert tools[2].description.startswith("Weather Bot does things.")


def test_names_fit_mcp() -> None:
    assert tool_name("x" * 300) == "x" * 128
    assert tool_name("  ¿qué? ") == "qu"
    assert tool_name("!!!") == "agent"


def test_the_schema_offers_data_and_files_as_the_skill_takes_them() -> None:
    text, data, files, anything = agent_tools(
        [
            card(
                "A",
                skill("text"),
                skill("json", ["application/json"]),
                skill("photo", ["image/png", "text/plain"]),
                skill("any", ["*/*"]),
            )
        ]
    )
    assert set(text.input_schema()["properties"]) == {"message", "taskId", "contextId"}
    assert "data" in data.input_schema()["properties"]
    assert "files" not in data.input_schema()["properties"]
    assert "files" in files.input_schema()["properties"]
    assert {"data", "files"} <= set(anything.input_schema()["properties"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.dictionaries(
        st.sampled_from(["message", "taskId", "contextId", "data", "files", "x"]), json_values
    )
)
def test_any_arguments_are_read_or_refused_with_a_reason(arguments: dict[str, Any]) -> None:
    try:
        read = read_arguments(arguments)
    except BadArguments as exc:
        assert str(exc).startswith("bad arguments: ")
        return
    assert read.message == arguments["message"]


def test_arguments_refused_name_each_problem() -> None:
    with pytest.raises(BadArguments) as refused:
        read_arguments({"taskId": "", "files": [{"name": "x"}]})
    reason = str(refused.value)
    assert "message: Field required" in reason
    assert "taskId: String should have at least 1 character" in reason
    assert "files.0.data: Field required" in reason


def test_a_tool_takes_only_the_arguments_of_its_schema() -> None:
    (tool,) = agent_tools([card("A", skill("photo", ["image/png"]))])
    files = [{"data": "aGk=", "mimeType": "image/png"}]
    assert tool.read_arguments({"message": "hi", "files": files}).files
    with pytest.raises(BadArguments, match="data: not an argument of photo"):
        tool.read_arguments({"message": "hi", "data": {}})


def test_a_completed_task_gives_text_data_and_files() -> None:
    answer = task(
        TaskState.COMPLETED,
        [TextPart(text="tick 1\n"), TextPart(text="tick 2\n"), DataPart(data={"n": 2})],
        [
            FilePart(file=FileWithBytes(bytes=b64(b"notes"), mime_type="text/plain", name="n.txt")),
            FilePart(file=FileWithBytes(bytes=b64(b"%PDF"), mime_type="application/pdf")),
            FilePart(file=FileWithUri(uri="https://files.example/x.png", mime_type="image/png")),
        ],
    )
    result = tool_result(answer)
    first, data_text, notes, pdf, link = result.content
    assert first == TextContent(text="tick 1\ntick 2\n")
    assert json.loads(data_text.text) == {"n": 2}  # type: ignore[union-attr]
    assert isinstance(notes, EmbeddedResource)
    assert notes.resource == TextResourceContents(
        uri="a2a://tasks/t1/a1/n.txt", mime_type="text/plain", text="notes"
    )
    assert isinstance(pdf, EmbeddedResource) and isinstance(pdf.resource, BlobResourceContents)
    assert pdf.resource.uri == "a2a://tasks/t1/a1/1"
    assert isinstance(link, ResourceLink) and link.uri == "https://files.example/x.png"
    assert result.structured_content == {
        "state": "completed",
        "taskId": "t1",
        "contextId": "c1",
        "data": [{"n": 2}],
    }
    assert not result.is_error


def test_a_failed_task_is_an_error_result() -> None:
    result = tool_result(task(TaskState.REJECTED))
    assert result.is_error
    assert result.content == [TextContent(text="The agent's task ended rejected.")]


def test_a_request_for_credentials_says_how_to_answer() -> None:
    result = tool_result(task(TaskState.AUTH_REQUIRED, said=[DataPart(data={"need": "key"})]))
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    assert texts[0] == '{"need": "key"}'
    assert texts[-1].startswith(
        'The agent waits for authentication: call this tool again with taskId "t1"'
    )
    assert result.structured_content["data"] == [{"need": "key"}]


def test_a_tool_result_becomes_parts() -> None:
    result = CallToolResult(
        content=[
            TextContent(text='{"quotient": 0.5}'),
            TextContent(text="half"),
            ImageContent(data=b64(b"png"), mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="file:///r/notes.md", mime_type="text/markdown", text="# hi"
                )
            ),
            ResourceLink(uri="https://x.example/f.pdf", name="f.pdf"),
        ],
        structured_content={"quotient": 0.5},
    )
    half, image, notes, link, data = result_parts(result)
    assert half == TextPart(text="half")
    assert image == FilePart(file=FileWithBytes(bytes=b64(b"png"), mime_type="image/png"))
    assert notes == FilePart(
        file=FileWithBytes(bytes=b64(b"# hi"), mime_type="text/markdown", name="notes.md")
    )
    assert link == FilePart(file=FileWithUri(uri="https://x.example/f.pdf", name="f.pdf"))
    assert data == DataPart(data={"quotient": 0.5})


def test_structured_content_that_is_no_object_is_wrapped() -> None:
    parts = result_parts(CallToolResult(content=[], structured_content=[1, 2]))
    assert parts == [DataPart(data={"result": [1, 2]})]
