"""A LangGraph graph served by accord (`accord.integrations.langgraph`): plain function nodes,
an `interrupt()`, LangChain's fake chat model for streamed tokens, driven by the official
a2a-sdk client in 1.0 and 0.3."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from a2a.types import TaskState

from adapted_agents import (
    CALLER,
    INTERFACES,
    SECRET,
    Gate,
    Held,
    answered_data,
    booking,
    card_of,
    check_cancel_stops_the_run,
    check_failure_shows_a_reference,
    conversation,
    exchange,
    flipped_image,
    framework,
    last_task,
    message,
    notes,
    sdk,
    served,
    skills_of,
    streamed,
    text_of,
    turns_of_one_context,
)

framework("langgraph", "langgraph")

from langchain_core.language_models.fake_chat_models import (  # noqa: E402
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.config import get_stream_writer  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode  # noqa: E402
from langgraph.types import interrupt  # noqa: E402

from accord.integrations.langgraph import as_agent  # noqa: E402


def said(state: MessagesState) -> list[HumanMessage]:
    return [m for m in state["messages"] if isinstance(m, HumanMessage)]


HELD = Held("held")


async def chat(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    """Answers through a chat model that streams its tokens."""
    await HELD.hold(said(state)[-1].text)
    turns = len(said(state))
    principal = config["configurable"]["principal"]
    reply = AIMessage(content=f"turn {turns}: hello {principal.id}")
    model = GenericFakeChatModel(messages=iter([reply]))
    return {"messages": [await model.ainvoke(state["messages"], config)]}


def book(state: MessagesState) -> dict[str, Any]:
    """Asks where to, then books."""
    get_stream_writer()("looking for flights")
    city = interrupt("Which city?")
    return {"messages": [AIMessage(content=f"Booked {city}")]}


def flip(state: MessagesState) -> dict[str, Any]:
    """Answers with the image it was sent, reversed."""
    [image] = [b for b in said(state)[-1].content_blocks if b["type"] == "image"]
    flipped = base64.b64encode(base64.b64decode(image["base64"])[::-1]).decode()
    block = {"type": "image", "base64": flipped, "mime_type": image["mime_type"]}
    return {"messages": [AIMessage(content=[{"type": "text", "text": "flipped"}, block])]}


def route(state: MessagesState) -> str:
    text = said(state)[-1].text
    return text if text in ("book", "flip", "wait", "fail") else "chat"


def graph(gate: Gate | None = None) -> Any:
    async def wait(state: MessagesState) -> dict[str, Any]:
        assert gate is not None
        await gate.hold()
        return {}

    def fail(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError(SECRET)

    builder = StateGraph(MessagesState)
    for node in (chat, book, flip, wait, fail):
        builder.add_node(node.__name__, node)
        builder.add_edge(node.__name__, END)
    builder.add_conditional_edges(START, route)
    return builder.compile(name="Travel")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(as_agent(graph(), description="Books trips.")) as url:
        yield url


@tool
def lookup(city: str) -> str:
    """Looks a city up.

    Returns what is known of it."""
    return city


async def test_the_card_has_the_graph_name_and_its_tools_as_skills() -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "tools")
    with served(as_agent(builder.compile(name="Guide"))) as url:
        card = await card_of(url)
    assert card["name"] == "Guide"
    assert skills_of(card) == [("lookup", "Looks a city up.")]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_tokens_stream_as_chunks_and_steps_as_notes(
    url: str, interface: tuple[str, str]
) -> None:
    answer = await streamed(url, interface, "hi")
    # "turn", " ", "1:", " ", ...: the fake model's tokens
    assert answer.appends == [False] + [True] * 6
    assert answer.notes == ["step chat"]
    assert answer.text == f"turn 1: hello {CALLER.id}"


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "send"])
async def test_an_interrupt_asks_and_the_answer_resumes_the_thread(
    url: str, interface: tuple[str, str], streaming: bool
) -> None:
    # the thread kept "book" (the answer resumed it: no message of its own)
    assert await booking(url, interface, streaming=streaming) == "turn 2: hello alice"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_custom_stream_data_is_a_note(url: str, interface: tuple[str, str]) -> None:
    async with sdk(url, interface) as client:
        events = await exchange(client, message("book"))
    assert notes(events) == ["looking for flights"]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_files_go_in_and_out(url: str, interface: tuple[str, str]) -> None:
    assert text_of(await flipped_image(url, interface, "flip")) == "flipped"


class Count(TypedDict):
    n: int


def double(state: Count) -> Count:
    return {"n": state["n"] * 2}


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_graph_without_messages_answers_its_state(interface: tuple[str, str]) -> None:
    builder = StateGraph(Count)
    builder.add_node("double", double)
    builder.add_edge(START, "double")
    adapted = as_agent(builder.compile(), graph_input=lambda context: {"n": int(context.text)})
    with served(adapted) as url:
        async with sdk(url, interface) as client:
            task = last_task(await exchange(client, message("21")))
    assert answered_data(task) == [{"n": 42}]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_cancel_stops_the_run(interface: tuple[str, str]) -> None:
    gate = Gate()
    await check_cancel_stops_the_run(as_agent(graph(gate)), gate, interface)


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_failure_tells_the_caller_only_a_reference(
    url: str, interface: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    await check_failure_shows_a_reference(url, interface, "fail", caplog)


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_context_is_one_thread(url: str, interface: tuple[str, str]) -> None:
    answers = await conversation(url, interface, ["hi", "again"], streaming=False)
    assert answers == ["turn 1: hello alice", "turn 2: hello alice"]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_two_messages_of_one_context_take_turns(url: str, interface: tuple[str, str]) -> None:
    answers, overlapped = await turns_of_one_context(url, interface, HELD)
    assert answers == ["turn 2: hello alice", "turn 3: hello alice", "turn 4: hello alice"]
    assert not overlapped  # the second waited for the first to end


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_new_task_leaves_the_interrupt_unanswered(
    url: str, interface: tuple[str, str]
) -> None:
    async with sdk(url, interface, streaming=False) as client:
        asked = last_task(await exchange(client, message("book")))
        other = last_task(await exchange(client, message("hi", context_id=asked.context_id)))
    assert other.id != asked.id
    assert other.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(other) == "turn 2: hello alice"
