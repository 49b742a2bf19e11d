"""The multi-agent host against real sample agents on loopback: delegation, relays, errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from accord import Agent, Client, create_app
from accord.agents import AgentExecutor
from accord.errors import InvalidParams
from accord.host import AgentRegistry, host_agent
from accord.host.delegation import HOST_METADATA
from accord.samples import coder, currency, echo, expense, image, movies, vault
from accord.store import open_store
from accord.types import (
    AgentSkill,
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Task,
    TaskState,
)
from agents_for_tests import (
    CURATOR,
    HOST_TOKEN,
    SAFETY_TIMEOUT,
    NeverFinishes,
    Raises,
    rejects_before_task,
)
from conftest import SchemaErrors
from rpc import served
from sample_servers import artifact_updates, check_card, finished, follow, statuses

SAMPLES: dict[str, Agent] = {
    "currency": currency.agent,
    "expense": expense.agent,
    "image": image.agent,
    "movies": movies.agent,
    "coder": coder.agent,
    "vault": vault.agent,
}


@pytest.fixture(scope="module")
def sample_urls() -> Iterator[dict[str, str]]:
    """The five samples, each served on its own loopback port (shared by this module's tests)."""
    with ExitStack() as stack:
        yield {name: stack.enter_context(served(create_app(a))) for name, a in SAMPLES.items()}


@contextmanager
def serving_host(registry_file: Path, agents: list[str]) -> Iterator[str]:
    """A host knowing `agents` (kept in `registry_file`), served on loopback; its URL."""
    agent = host_agent(AgentRegistry(registry_file, agents), token=HOST_TOKEN)
    with served(create_app(agent)) as url:
        yield url


@pytest.fixture
def host_url(tmp_path: Path, sample_urls: dict[str, str]) -> Iterator[str]:
    with serving_host(tmp_path / "agents.json", list(sample_urls.values())) as url:
        yield url


def says(events: list[object]) -> list[str]:
    return [text for _, text in statuses(events)]  # type: ignore[arg-type]


async def test_delegates_to_the_agent_whose_skill_fits(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "Who directed Alien?")
        assert statuses(events)[-1][0] is TaskState.COMPLETED
        assert any(text.startswith("Asking Movies") for text in says(events))
        [answer] = [e for e in statuses(events) if e[0] is TaskState.COMPLETED]
        assert "Ridley Scott" in answer[1]


async def test_a_request_for_two_agents_goes_to_both_and_gathers_both_results(
    host_url: str, sample_urls: dict[str, str]
) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "convert 100 USD to EUR and draw a picture of a cat")
        state, summary = statuses(events)[-1]
        assert state is TaskState.COMPLETED, summary
        assert "Currency: 100.00 USD = " in summary
        assert "Image: Here is your picture of: draw a picture of a cat" in summary
        progress = says(events)
        assert "Currency: Looking up rates from USD to EUR" in progress
        assert "Image: Drawing: draw a picture of a cat" in progress
        updates = artifact_updates(events)
        by_agent = {u.artifact.metadata[HOST_METADATA]["agent"]: u.artifact for u in updates}
        assert set(by_agent) == {"Currency", "Image"}
        assert by_agent["Currency"].name == "Currency: conversion"
        assert by_agent["Image"].metadata[HOST_METADATA]["url"] == sample_urls["image"]
        png = by_agent["Image"].parts[0]
        assert isinstance(png, FilePart) and isinstance(png.file, FileWithBytes)
        assert png.file.mime_type == "image/png"

        task = finished(await client.get_task(events[0].id))  # type: ignore[union-attr]
        assert {a.name for a in task.artifacts or []} == {
            "Currency: conversion",
            "Image: draw-a-picture-of-a-cat.png",
        }


async def test_a_remote_question_is_relayed_and_the_answer_goes_back(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        first = await follow(client, "convert 100 USD")
        task_id = first[0].id  # type: ignore[union-attr]
        state, question = statuses(first)[-1]
        assert (state, question) == (TaskState.INPUT_REQUIRED, "Currency asks: To which currency?")
        waiting = await client.get_task(task_id)
        asked = waiting.status.message
        assert asked is not None and asked.metadata is not None
        assert asked.metadata[HOST_METADATA]["agent"] == "Currency"
        remote_task_id = asked.metadata[HOST_METADATA]["taskId"]

        second = await follow(client, "EUR", task_id=task_id)
        state, summary = statuses(second)[-1]
        assert state is TaskState.COMPLETED, summary
        assert summary.startswith("Currency: 100.00 USD = ")
        assert "Passing your answer to Currency" in says(second)
        [conversion] = artifact_updates(second)
        origin = conversion.artifact.metadata[HOST_METADATA]  # type: ignore[index]
        assert origin["taskId"] == remote_task_id  # the same remote task went on


async def test_the_expense_form_is_relayed_with_a_wrong_field_then_completed(
    host_url: str,
) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        first = await follow(client, "Please reimburse my taxi to the airport, 42.50 EUR")
        task_id = first[0].id  # type: ignore[union-attr]
        task = await client.get_task(task_id)
        assert task.status.state is TaskState.INPUT_REQUIRED
        message = task.status.message
        assert message is not None
        assert message.text.startswith("Expense asks: Please check and complete this form.")
        [form] = [p.data for p in message.parts if isinstance(p, DataPart)]
        assert form["type"] == "form" and form["formData"]["amount"] == 42.5

        wrong = DataPart(data={"date": "2025-03-14", "currency": "EUR", "purpose": "x"})
        second = await follow(client, "", task_id=task_id, parts=[wrong])
        task = await client.get_task(task_id)
        assert task.status.state is TaskState.INPUT_REQUIRED, statuses(second)
        assert task.status.message is not None
        [form] = [p.data for p in task.status.message.parts if isinstance(p, DataPart)]
        assert set(form["errors"]) == {"purpose"}

        fixed = DataPart(data={"purpose": "taxi to the airport"})
        third = await follow(client, "", task_id=task_id, parts=[fixed])
        state, summary = statuses(third)[-1]
        assert state is TaskState.COMPLETED, summary
        assert "Expense: Reimbursement EXP-" in summary
        [record] = artifact_updates(third)
        assert record.artifact.name == "Expense: reimbursement"
        assert record.artifact.parts[0].data["amount"] == 42.5  # type: ignore[union-attr]


async def test_streamed_chunks_of_a_remote_artifact_arrive_as_chunks(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        events = await follow(client, "write a CLI todo app in python")
        assert statuses(events)[-1][0] is TaskState.COMPLETED, statuses(events)[-1]
        updates = artifact_updates(events)
        assert any(u.append for u in updates) and any(u.last_chunk for u in updates)
        task = finished(await client.get_task(events[0].id))  # type: ignore[union-attr]
        for artifact in task.artifacts or []:
            assert artifact.name and artifact.name.startswith("Coder: ")
        remote_files = {u.artifact.artifact_id for u in updates}
        assert len(task.artifacts or []) == len(remote_files) > 1


async def test_a_request_no_agent_fits_is_rejected_naming_the_agents(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        result = await client.send("xylophone zebra quux")
        task = finished(result, TaskState.REJECTED)
        assert task.status.message is not None
        text = task.status.message.text
        assert text.startswith("None of the agents I know can help with that.")
        assert "Currency" in text and "Image" in text


async def test_asked_for_its_agents_the_host_lists_them(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        reply = await client.send("Which agents do you know?")
        assert isinstance(reply, Message)
        assert reply.text.startswith("I can ask these agents:")
        assert "- Movies (" in reply.text


async def test_an_unreachable_agent_is_reported_in_words(tmp_path: Path) -> None:
    with served(create_app(echo.agent)) as echo_url:
        registry = AgentRegistry(tmp_path / "agents.json", [echo_url])
        assert len(await registry.agents()) == 1
    # The echo agent is gone now; the host still knows its card.
    with serving_host(tmp_path / "agents.json", []) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            result = await client.send("echo hello")
    task = finished(result, TaskState.FAILED)
    assert task.status.message is not None
    text = task.status.message.text
    assert text.startswith(f"Echo (failed): could not talk to Echo at {echo_url}: ")
    assert "cannot connect" in text


async def test_one_failing_agent_does_not_sink_the_other(
    tmp_path: Path, sample_urls: dict[str, str]
) -> None:
    with served(create_app(echo.agent)) as echo_url:
        registry = AgentRegistry(tmp_path / "agents.json", [echo_url, sample_urls["image"]])
        await registry.agents()
    with serving_host(tmp_path / "agents.json", []) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            result = await client.send("echo hello and draw a red circle")
    task = finished(result)
    assert task.status.message is not None
    lines = task.status.message.text.splitlines()
    assert lines[0].startswith("Echo (failed): could not talk to Echo")
    assert lines[1] == "Image: Here is your picture of: draw a red circle"
    assert [a.name for a in task.artifacts or []] == ["Image: draw-a-red-circle.png"]


async def test_a_plain_message_reply_is_gathered(tmp_path: Path) -> None:
    with (
        served(create_app(echo.message_agent)) as echo_url,
        serving_host(tmp_path / "agents.json", [echo_url]) as url,
    ):
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            result = await client.send("echo this message")
    task = finished(result)
    assert task.status.message is not None
    assert task.status.message.text == "Echo (message): echo this message"


async def test_the_host_card_validates_and_describes_its_skills(
    tmp_path: Path, schema_errors: SchemaErrors
) -> None:
    card = await check_card(host_agent(AgentRegistry(tmp_path / "agents.json")), schema_errors)
    assert [skill["id"] for skill in card["skills"]] == ["delegate", "list_agents"]


async def test_two_agents_asking_are_asked_one_after_the_other(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        first = await follow(client, "convert 100 USD and reimburse my taxi, 42.50 EUR")
        task_id = first[0].id  # type: ignore[union-attr]
        assert statuses(first)[-1] == (
            TaskState.INPUT_REQUIRED,
            "Currency asks: To which currency?",
        )

        second = await follow(client, "to EUR", task_id=task_id)
        state, asked = statuses(second)[-1]
        assert (state, asked) == (
            TaskState.INPUT_REQUIRED,
            "Expense asks: Please check and complete this form.",
        )
        assert [u.artifact.name for u in artifact_updates(second)] == ["Currency: conversion"]

        answer = {"date": "2025-03-14", "purpose": "taxi to the airport"}
        third = await follow(client, "", task_id=task_id, parts=[DataPart(data=answer)])
        state, summary = statuses(third)[-1]
        assert state is TaskState.COMPLETED, summary
        currency_line, expense_line = summary.splitlines()
        assert currency_line.startswith("Currency: 100.00 USD = ")
        assert expense_line.startswith("Expense: Reimbursement EXP-")
        task = finished(await client.get_task(task_id))
        assert [a.name for a in task.artifacts or []] == [
            "Currency: conversion",
            "Expense: reimbursement",
        ]


async def test_an_auth_required_agent_is_relayed_as_auth_required(host_url: str) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        asked = await client.send("open the vault")
        assert isinstance(asked, Task) and asked.status.state is TaskState.AUTH_REQUIRED
        assert asked.status.message is not None
        assert asked.status.message.text.startswith("Vault needs you to sign in: ")
        needed = [p.data for p in asked.status.message.parts if isinstance(p, DataPart)]
        assert needed == [vault.NEEDED]
        secret = DataPart(data={"passphrase": vault.DEFAULT_PASSPHRASE})
        done = finished(await client.send("", parts=[secret], task_id=asked.id))
        assert [a.name for a in done.artifacts or []] == ["Vault: secret"]


async def test_canceling_the_host_task_cancels_the_remote_one(tmp_path: Path) -> None:
    worker = NeverFinishes()
    skill = AgentSkill(id="work", name="Work", description="Works forever.", tags=["work"])
    with (
        served(create_app(Agent(worker, name="Worker", skills=[skill]))) as worker_url,
        serving_host(tmp_path / "agents.json", [worker_url]) as url,
    ):
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            async with client.stream("work, please") as events:
                async for event in events:  # until the host has heard from the worker
                    if statuses([event]) == [(TaskState.WORKING, "Worker: working on it")]:
                        break
                canceled = await client.cancel_task(event.task_id)  # type: ignore[union-attr]
            assert canceled.status.state is TaskState.CANCELED
            await worker.cancel_called.wait()
            await worker.stopped.wait()
            remote_id = canceled.history[-1].metadata[HOST_METADATA]["taskId"]  # type: ignore[index]
        async with Client(worker_url, timeout=SAFETY_TIMEOUT) as remote:
            assert (await remote.get_task(remote_id)).status.state is TaskState.CANCELED


async def test_canceling_a_host_task_waiting_for_the_user_cancels_the_remote_task_that_asked(
    host_url: str, sample_urls: dict[str, str]
) -> None:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        first = await follow(client, "convert 100 USD")
        task_id = first[0].id  # type: ignore[union-attr]
        waiting = await client.get_task(task_id)
        assert waiting.status.state is TaskState.INPUT_REQUIRED
        assert waiting.status.message is not None and waiting.status.message.metadata is not None
        remote_id = waiting.status.message.metadata[HOST_METADATA]["taskId"]
        canceled = await client.cancel_task(task_id)
        assert canceled.status.state is TaskState.CANCELED
    async with Client(sample_urls["currency"], timeout=SAFETY_TIMEOUT) as remote:
        assert (await remote.get_task(remote_id)).status.state is TaskState.CANCELED


def broken(name: str, executor: AgentExecutor) -> Agent:
    skill = AgentSkill(id="break", name="Break", description="Breaks things.", tags=["break"])
    return Agent(executor, name=name, skills=[skill])


@pytest.mark.parametrize(
    ("executor", "reason"),
    [
        (
            Raises(RuntimeError("the disk is full")),
            "Crashy (failed): The agent failed (reference ",
        ),
        (
            rejects_before_task(InvalidParams("no breaking on Sundays")),
            "Crashy (failed): Crashy answered with an error: no breaking on Sundays",
        ),
    ],
)
async def test_a_failing_remote_agent_is_reported_in_words(
    tmp_path: Path, executor: AgentExecutor, reason: str
) -> None:
    with (
        served(create_app(broken("Crashy", executor))) as crashy_url,
        serving_host(tmp_path / "agents.json", [crashy_url]) as url,
    ):
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            task = finished(await client.send("break it"), TaskState.FAILED)
    assert task.status.message is not None
    assert task.status.message.text.startswith(reason), task.status.message.text


async def test_an_agent_that_does_not_stream_is_asked_with_blocking_sends(tmp_path: Path) -> None:
    card = currency.agent.card("")
    plain = Agent(currency.CurrencyAgent(), name="Currency", skills=card.skills, streaming=False)
    with (
        served(create_app(plain)) as currency_url,
        serving_host(tmp_path / "agents.json", [currency_url]) as url,
    ):
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            asked = await client.send("convert 100 USD")
            assert isinstance(asked, Task) and asked.status.message is not None
            assert asked.status.message.text == "Currency asks: To which currency?"
            done = finished(await client.send("EUR", task_id=asked.id))
    assert done.status.message is not None
    assert done.status.message.text.startswith("Currency: 100.00 USD = ")
    assert [a.name for a in done.artifacts or []] == ["Currency: conversion"]


async def test_a_question_waits_across_a_restart_of_the_host(
    tmp_path: Path, sample_urls: dict[str, str]
) -> None:
    def host_app() -> Starlette:
        agent = host_agent(AgentRegistry(tmp_path / "agents.json", [sample_urls["currency"]]))
        return create_app(agent, store=open_store(f"sqlite:///{tmp_path / 'host.db'}"))

    with served(host_app()) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            asked = await client.send("convert 100 USD")
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    with served(host_app()) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            done = finished(await client.send("to JPY", task_id=asked.id))
    assert done.status.message is not None
    assert done.status.message.text.startswith("Currency: 100.00 USD = ")
    assert " JPY (1 USD = " in done.status.message.text


async def test_a_host_that_knows_itself_stops_after_a_few_hops(tmp_path: Path) -> None:
    with serving_host(tmp_path / "agents.json", []) as url:
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT, headers=CURATOR) as http:
            assert (await http.post(url + "/host/agents", json={"url": url})).status_code == 201
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            task = finished(await client.send("convert 100 USD to EUR"), TaskState.FAILED)
    assert task.status.message is not None
    text = task.status.message.text
    assert text.startswith("Host (failed): Host (failed): Host (rejected): ")
    assert "already passed through 3 hosts" in text
