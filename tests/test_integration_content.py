"""What every framework adapter shares: the caller's parts read for a framework, results made
parts, the bounded memory of contexts, and one run at a time per context."""

from __future__ import annotations

import asyncio
import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from accord.integrations.content import InFile, data_part, files_of, prompt_text
from accord.integrations.memory import ContextMemory
from accord.integrations.turns import ContextTurns
from accord.types import (
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    Role,
    TextPart,
    new_id,
)
from adapted_agents import framework

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=10,
)
PARTS = st.one_of(
    st.builds(TextPart, text=st.text()),
    st.builds(DataPart, data=st.dictionaries(st.text(), JSON)),
    st.builds(
        FilePart,
        file=st.builds(FileWithBytes, bytes=st.text(), mime_type=st.none() | st.text()),
    ),
    st.builds(FilePart, file=st.builds(FileWithUri, uri=st.text(), name=st.none() | st.text())),
)


def sent(*parts: Part) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=list(parts))


@given(st.lists(PARTS, max_size=6))
def test_any_message_reads_without_failing(parts: list[Part]) -> None:
    message = sent(*parts)
    files = files_of(message)
    assert len(files) <= sum(isinstance(p, FilePart) for p in parts)
    linked = [
        p.file.uri for p in parts if isinstance(p, FilePart) and isinstance(p.file, FileWithUri)
    ]
    assert [f.url for f in files if f.uri is not None] == linked
    text = prompt_text(message)
    assert all(p.text in text for p in parts if isinstance(p, TextPart))


@given(st.binary(), st.sampled_from(["image/png", "application/pdf", None]))
def test_inline_files_arrive_as_their_bytes(data: bytes, media_type: str | None) -> None:
    encoded = base64.b64encode(data).decode()
    [file] = files_of(sent(FilePart(file=FileWithBytes(bytes=encoded, mime_type=media_type))))
    assert file.data == data
    assert file.media_type == (media_type or "application/octet-stream")
    assert file.url == f"data:{file.media_type};base64,{encoded}"


def test_content_that_is_not_base64_is_left_out() -> None:
    broken = FilePart(file=FileWithBytes(bytes="not base64!", mime_type="image/png"))
    linked = FilePart(file=FileWithUri(uri="https://example.com/a.png", mime_type="image/png"))
    assert files_of(sent(broken, linked)) == [InFile("image/png", uri="https://example.com/a.png")]


def test_data_parts_are_read_as_json_between_the_text() -> None:
    message = sent(TextPart(text="book"), DataPart(data={"city": "Oslo"}), TextPart(text="now"))
    assert prompt_text(message) == 'book\n{"city": "Oslo"}\nnow'


class Forecast(BaseModel):
    city: str
    celsius: int


@pytest.mark.parametrize(
    ("value", "data"),
    [
        ({"a": 1}, {"a": 1}),
        (Forecast(city="Oslo", celsius=-3), {"city": "Oslo", "celsius": -3}),
        ([1, 2], {"result": [1, 2]}),
        ("text", {"result": "text"}),
    ],
)
def test_a_result_becomes_a_data_part(value: object, data: dict[str, object]) -> None:
    assert data_part(value).data == data


def test_the_memory_forgets_the_least_recently_used_context() -> None:
    memory: ContextMemory[int] = ContextMemory(limit=2)
    memory.put("a", 1)
    memory.put("b", 2)
    assert memory.get("a") == 1  # "b" is now the least recently used
    memory.put("c", 3)
    assert (memory.get("a"), memory.get("b"), memory.get("c")) == (1, None, 3)
    assert len(memory) == 2


def test_a_memory_keeps_at_least_one_context() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ContextMemory(limit=0)


async def test_the_runs_of_a_context_take_turns_in_order_and_others_do_not_wait() -> None:
    turns = ContextTurns()
    order: list[str] = []
    release = asyncio.Event()

    async def run(context_id: str, name: str, hold: bool = False) -> None:
        async with turns.turn(context_id):
            order.append(f"{name} starts")
            if hold:
                await release.wait()
            order.append(f"{name} ends")

    first = asyncio.create_task(run("a", "a1", hold=True))
    await asyncio.sleep(0)
    later = [asyncio.create_task(run("a", name)) for name in ("a2", "a3")]
    await asyncio.wait_for(run("b", "b1"), 5)  # another context goes ahead
    assert order == ["a1 starts", "b1 starts", "b1 ends"]
    assert len(turns) == 1  # "b" forgotten once its run ended
    release.set()
    await asyncio.wait_for(asyncio.gather(first, *later), 5)
    assert order[3:] == ["a1 ends", "a2 starts", "a2 ends", "a3 starts", "a3 ends"]
    assert len(turns) == 0


async def test_a_run_cancelled_while_waiting_for_its_turn_gives_it_up() -> None:
    turns = ContextTurns()
    release = asyncio.Event()

    async def held() -> None:
        async with turns.turn("a"):
            await release.wait()

    first = asyncio.create_task(held())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(held())
    await asyncio.sleep(0)
    waiting.cancel()
    release.set()
    await asyncio.wait_for(first, 5)
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert len(turns) == 0


@pytest.mark.parametrize("required", ["1", ""], ids=["required", "optional"])
def test_a_missing_framework_skips_or_fails_when_required(
    required: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_REQUIRE_SERVICES", required)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome, match="the `nothing` extra"):
        framework("accord_no_such_framework", "nothing")
