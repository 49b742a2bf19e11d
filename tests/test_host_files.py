"""The host passes a user's files (and data) on to the agents that take them, on loopback, and
says which file it could not pass on and why."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from accord import Client, create_app
from accord.host import AgentRegistry, host_agent
from accord.host.forwarding import accepts, media_type
from accord.samples import currency, expense
from accord.types import (
    AgentCard,
    AgentSkill,
    DataPart,
    FilePart,
    FileWithBytes,
    Part,
    TaskState,
    TextPart,
)
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from sample_servers import follow, statuses

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def png(name: str = "receipt.png", mime_type: str | None = "image/png") -> FilePart:
    content = FileWithBytes(bytes=base64.b64encode(PNG).decode(), mime_type=mime_type, name=name)
    return FilePart(file=content)


@pytest.fixture(scope="module")
def host_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A host in front of Expense (takes images) and Currency (text only), all on loopback."""
    registry = tmp_path_factory.mktemp("host") / "agents.json"
    with ExitStack() as stack:
        agents = [
            stack.enter_context(served(create_app(a))) for a in (expense.agent, currency.agent)
        ]
        yield stack.enter_context(served(create_app(host_agent(AgentRegistry(registry, agents)))))


async def test_an_attached_receipt_reaches_the_agent_that_takes_images(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        text = "please reimburse my taxi, 42.50 EUR on 2025-03-14"
        events = await follow(client, text, parts=[png()])
        state, question = statuses(events)[-1]
        assert state is TaskState.INPUT_REQUIRED, question
        digest = hashlib.sha256(PNG).hexdigest()[:12]
        assert question.startswith("Expense asks: Please check and complete this form.")
        assert f"Receipt receipt.png (image/png, 2.0 KiB, sha256 {digest}) attached." in question
        assert "did not pass on" not in question


async def test_a_file_without_a_type_is_known_by_its_name(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "reimburse my taxi", parts=[png("scan.png", None)])
        assert "Receipt scan.png (image/png" in statuses(events)[-1][1]


async def test_data_in_the_first_message_reaches_the_agent(host_url: str) -> None:
    filled = DataPart(
        data={"date": "2025-03-14", "amount": 42.5, "currency": "EUR", "purpose": "taxi"}
    )
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "reimburse my expense", parts=[filled])
        state, summary = statuses(events)[-1]
        assert state is TaskState.COMPLETED, summary
        assert "approved: 42.50 EUR for taxi on 2025-03-14" in summary


async def test_a_file_the_chosen_agent_does_not_take_is_named_with_why(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "convert 100 USD to EUR", parts=[png("stars.png")])
        refusal = "I did not pass on stars.png (image/png): Currency takes only text/plain."
        assert (TaskState.WORKING, refusal) in statuses(events)
        state, summary = statuses(events)[-1]
        assert state is TaskState.COMPLETED, summary
        assert summary.startswith("Currency: 100.00 USD = ")
        assert summary.endswith(refusal)


async def test_the_refusal_goes_with_a_question_too(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "convert 100 USD", parts=[png("stars.png")])
        state, question = statuses(events)[-1]
        assert state is TaskState.INPUT_REQUIRED
        assert question.startswith("Currency asks: To which currency?")
        assert (
            "I did not pass on stars.png (image/png): Currency takes only text/plain." in question
        )


def card(modes: list[str], skill_modes: list[str] | None = None) -> AgentCard:
    skill = AgentSkill(id="s", name="s", description="s", tags=[], input_modes=skill_modes)
    return AgentCard(
        name="A", description="a", url="http://127.0.0.1:1", version="1",
        capabilities={}, default_input_modes=modes, default_output_modes=["text/plain"],
        skills=[skill],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("modes", "skill_modes", "part", "taken"),
    [
        (["text/plain"], None, png(), False),
        (["text/plain"], ["image/png"], png(), True),  # a skill takes it
        (["image/*"], None, png(), True),
        (["*/*"], None, png(), True),
        ([], None, png(), True),  # no modes named: no limit stated
        (["Image/PNG; q=1"], None, png(), True),
        (["text/plain"], None, DataPart(data={}), False),
        (["application/json"], None, DataPart(data={}), True),
        (["image/png"], None, png("a.pdf", "application/octet-stream"), False),
    ],
)
def test_what_a_card_takes(
    modes: list[str], skill_modes: list[str] | None, part: Part, taken: bool
) -> None:
    assert accepts(card(modes, skill_modes), part) is taken


def test_media_types_of_parts() -> None:
    assert media_type(TextPart(text="x")) == "text/plain"
    assert media_type(png("a.pdf", "application/octet-stream")) == "application/pdf"
    assert media_type(png("noname", None)) == "application/octet-stream"
    assert media_type(png("x.png", "image/PNG; charset=binary")) == "image/png"
