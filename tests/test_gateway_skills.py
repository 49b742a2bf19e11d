"""A gateway in front of several upstreams (`accord.gateway.several`): the official a2a-sdk's
echo and accord's currency sample behind one card, each message routed by its task, its
context or the skill it names, after a restart on the same store too; skill ids two upstreams
share, an upstream that is down, upstreams found in a registry."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import accord
from accord import Client
from accord.cli.main import app
from accord.client import RegistryClient
from accord.errors import InternalError, InvalidParams
from accord.gateway.router import UPSTREAM_KEY, RecentContexts
from accord.gateway.skills import named_skill
from accord.keys import KeyStore, StaticKeys, verify_card
from accord.registry import Registry, create_registry_app, open_catalog
from accord.samples import currency
from accord.store import open_store
from accord.types import (
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskState,
    TextPart,
    new_id,
)
from live_server import serve_app
from registry_cards import CURATOR, security
from test_interop_official_server import OfficialEcho, official_server


def asking(text: str, skill: Any = None, **ids: str) -> Message:
    metadata = {"skill": skill} if skill is not None else None
    return Message(
        message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)], metadata=metadata, **ids
    )


@pytest.fixture(name="upstreams", scope="module")
def upstreams_fixture() -> Iterator[dict[str, str]]:
    """The official SDK's echo (skill `echo`) and accord's currency sample (skill
    `convert_currency`, which asks for what a request lacks), served."""
    with official_server(OfficialEcho()) as echo, serve_app(currency.agent.app()) as money:
        echo.list_interface("JSONRPC", "0.3")
        yield {"echo": echo.url, "money": money}


@contextmanager
def gateway(*urls: str, store: str | None = None, **options: Any) -> Iterator[str]:
    agent = accord.gateway.several(list(urls), **options)
    stored = {"store": open_store(store)} if store else {}
    with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0), **stored)) as url:
        yield url


def texts(task: Task | Message) -> list[str]:
    assert isinstance(task, Task), task
    return [artifact.text for artifact in task.artifacts or ()]


async def test_one_card_with_every_skill_each_message_where_its_skill_is(
    upstreams: dict[str, str],
) -> None:
    with gateway(upstreams["echo"], upstreams["money"]) as url:
        async with Client(url, transport="HTTP+JSON", version="1.0") as client:
            card = await client.get_card()
            echoed = await client.send(asking("hello", skill="echo"))
            asked = await client.send(asking("convert 100 USD", skill="convert_currency"))
            assert isinstance(asked, Task)
            # no skill named: the task, then its context, say where
            answered = await client.send(asking("to EUR", task_id=asked.id))
            again = await client.send(asking("50 CHF to USD", context_id=asked.context_id))
            with pytest.raises(InvalidParams, match="convert_currency") as unnamed:
                await client.send(asking("hello"))
            with pytest.raises(InvalidParams, match="no skill 'fly'"):
                await client.send(asking("hello", skill="fly"))
            with pytest.raises(InvalidParams, match="must be a skill's id"):
                await client.send(asking("hello", skill=7))
    assert [skill.id for skill in card.skills] == ["echo", "convert_currency"]
    assert texts(echoed) == ["hello"]
    assert isinstance(echoed, Task) and echoed.metadata == {UPSTREAM_KEY: "official-echo"}
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert answered.id == asked.id and "EUR" in texts(answered)[0]
    assert isinstance(again, Task) and again.context_id == asked.context_id
    assert again.status.state is TaskState.COMPLETED and "CHF" in texts(again)[0]
    assert "'skill'" in unnamed.value.message


async def test_a_default_upstream_takes_messages_naming_no_skill(
    upstreams: dict[str, str],
) -> None:
    with gateway(f"words={upstreams['echo']}", upstreams["money"], default="words") as url:
        async with Client(url, version="1.0") as client:
            task = await client.send(asking("hello"))
    assert texts(task) == ["hello"] and task.metadata == {UPSTREAM_KEY: "words"}


async def test_follow_ups_and_cancel_reach_the_upstream_after_a_restart(
    upstreams: dict[str, str], tmp_path: Path
) -> None:
    """The upstream of each task and context is in the gateway's store: a new gateway on the
    same store sends a task's next message, a context's new task and a cancel where they
    belong, naming no skill."""
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    urls = (upstreams["echo"], upstreams["money"])
    with gateway(*urls, store=store) as url:
        async with Client(url, version="1.0") as client:
            first = await client.send(asking("convert 100 USD", skill="convert_currency"))
            second = await client.send(asking("convert 5 GBP", skill="convert_currency"))
    assert isinstance(first, Task) and isinstance(second, Task)
    with gateway(*urls, store=store) as url:
        async with Client(url, transport="GRPC", version="0.3") as client:
            answered = await client.send(asking("to JPY", task_id=first.id))
            in_context = await client.send(asking("10 EUR to USD", context_id=first.context_id))
            canceled = await client.cancel_task(second.id)
            got = await client.get_task(first.id)
    async with Client(upstreams["money"]) as direct:
        theirs = await direct.get_task(second.id)
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert "JPY" in texts(answered)[0]
    assert isinstance(in_context, Task) and in_context.status.state is TaskState.COMPLETED
    assert canceled.status.state is TaskState.CANCELED
    assert theirs.status.state is TaskState.CANCELED
    assert got.status.state is TaskState.COMPLETED and got.metadata == {UPSTREAM_KEY: "currency"}


async def test_a_context_an_upstream_answered_with_a_message_is_followed_there(
    upstreams: dict[str, str],
) -> None:
    """A plain reply leaves no task, yet names a context: the next message naming it goes to
    the same upstream, naming no skill."""
    with gateway(upstreams["echo"], upstreams["money"]) as url:
        async with Client(url, version="1.0") as client:
            reply = await client.send(asking("reply please", skill="echo"))
            assert isinstance(reply, Message) and reply.context_id
            again = await client.send(asking("reply again", context_id=reply.context_id))
            task = await client.send(asking("a task now", context_id=reply.context_id))
    assert isinstance(again, Message) and again.text == "reply again"
    assert again.context_id == reply.context_id
    assert texts(task) == ["a task now"] and task.context_id == reply.context_id


def test_contexts_known_from_replies_are_remembered_the_most_recently_used_kept() -> None:
    replied = RecentContexts(limit=2)
    replied.remember("a", "echo")
    replied.remember("b", "money")
    assert replied.upstream("a") == "echo"  # now the most recently used
    replied.remember("c", "money")
    assert [replied.upstream(c) for c in "abc"] == ["echo", None, "money"]


async def test_a_skill_id_two_upstreams_share_is_served_once_for_each() -> None:
    with official_server(OfficialEcho()) as one, official_server(OfficialEcho()) as two:
        one.list_interface("JSONRPC", "0.3")
        two.list_interface("HTTP+JSON", "1.0")
        with gateway(one.url, two.url) as url:
            async with Client(url, version="1.0") as client:
                card = await client.get_card()
                with pytest.raises(InvalidParams, match="official-echo-2/echo"):
                    await client.send(asking("hello", skill="echo"))
                task = await client.send(asking("hello", skill="official-echo-2/echo"))
        async with Client(two.url) as direct:
            theirs = await direct.get_task(task.id)
    assert [s.id for s in card.skills] == ["official-echo/echo", "official-echo-2/echo"]
    assert texts(task) == ["hello"] and theirs.id == task.id


async def test_an_upstream_down_is_named_in_the_error_and_in_health(
    upstreams: dict[str, str],
) -> None:
    with official_server(OfficialEcho()) as doomed:
        doomed.list_interface("JSONRPC", "0.3")
        agent = accord.gateway.several([upstreams["money"], f"doomed={doomed.url}"])
    with serve_app(agent.app()) as url:
        async with Client(url, version="1.0") as client:
            with pytest.raises(InternalError, match=r"upstream 'doomed': .* cannot be reached"):
                await client.send(asking("hello", skill="echo"))
            task = await client.send(asking("convert 1 USD to EUR", skill="convert_currency"))
        async with httpx.AsyncClient() as http:
            health = await http.get(f"{url}/health")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert health.status_code == 503
    assert health.json()["upstreams"]["doomed"]["up"] is False
    assert health.json()["upstreams"]["currency"]["up"] is True


@asynccontextmanager
async def registry(tmp_path: Path, *agent_urls: str) -> AsyncIterator[str]:
    catalog = open_catalog(f"sqlite:///{tmp_path / 'registry.db'}")
    app = create_registry_app(Registry(catalog), security=security(), checks=False)
    with serve_app(app) as url:
        async with RegistryClient(url, headers=CURATOR) as client:
            for agent_url in agent_urls:
                await client.add(agent_url)
        yield url


async def test_upstreams_from_a_registry_read_again(
    upstreams: dict[str, str], tmp_path: Path
) -> None:
    async with registry(tmp_path, upstreams["money"]) as registry_url:
        agent = accord.gateway.several(registry=registry_url, refresh=0)
        with serve_app(agent.app()) as url:
            async with Client(url, version="1.0") as client:
                converted = await client.send(asking("convert 2 USD to EUR"))
                async with RegistryClient(registry_url, headers=CURATOR) as listing:
                    await listing.add(upstreams["echo"])
                echoed = await client.send(asking("hello", skill="echo"))
    assert isinstance(converted, Task) and converted.status.state is TaskState.COMPLETED
    assert texts(echoed) == ["hello"]


async def test_the_card_follows_the_upstreams_a_registry_reading_changes(
    upstreams: dict[str, str], tmp_path: Path
) -> None:
    """Served anew and signed again once a reading added an upstream: a conditional GET with
    the old ETag or date gets the new card, one with the new ETag a 304."""
    keys = KeyStore.ephemeral()
    card_path = "/.well-known/agent-card.json"
    async with registry(tmp_path, upstreams["money"]) as registry_url:
        agent = accord.gateway.several(registry=registry_url, refresh=0)
        with serve_app(agent.app(keys=keys)) as url:
            async with httpx.AsyncClient(base_url=url) as http:
                before = await http.get(card_path)
                async with RegistryClient(registry_url, headers=CURATOR) as listing:
                    await listing.add(upstreams["echo"])
                async with Client(url, version="1.0") as client:
                    await client.send(asking("convert 2 USD to EUR"))  # reads them again
                after = await http.get(card_path, headers={"If-None-Match": before.headers["ETag"]})
                since = {"If-Modified-Since": before.headers["Last-Modified"]}
                dated = await http.get(card_path, headers=since)
                same = await http.get(card_path, headers={"If-None-Match": after.headers["ETag"]})
    assert [skill["id"] for skill in before.json()["skills"]] == ["convert_currency"]
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    assert {skill["id"] for skill in after.json()["skills"]} == {"convert_currency", "echo"}
    assert "official-echo" in after.json()["description"]
    assert await verify_card(after.json(), StaticKeys(keys.jwks())) == keys.active().kid
    assert parsedate_to_datetime(after.headers["Last-Modified"]) >= parsedate_to_datetime(
        before.headers["Last-Modified"]
    )
    assert same.status_code == 304
    assert dated.status_code == 200 or (
        after.headers["Last-Modified"] == before.headers["Last-Modified"]  # the same second
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@given(
    st.fixed_dictionaries({}, optional={"skill": JSON, "other": JSON}),
    st.fixed_dictionaries({}, optional={"skill": JSON}),
)
def test_the_skill_named_is_a_string_or_refused(
    on_message: dict[str, Any], on_request: dict[str, Any]
) -> None:
    """Any JSON a caller puts under `skill`: a skill id (the message's first), else None
    when neither names one, else InvalidParams."""
    message = Message(
        message_id="m", role=Role.USER, parts=[TextPart(text="x")], metadata=on_message or None
    )
    params = MessageSendParams(message=message, metadata=on_request or None)
    named = on_message if "skill" in on_message else on_request
    try:
        skill = named_skill(params)
    except InvalidParams:
        assert not isinstance(named["skill"], str) or named["skill"] == ""
    else:
        assert skill == named.get("skill")
        assert skill is None or (isinstance(skill, str) and skill)


async def test_a_route_serves_its_upstream_at_its_prefix_on_the_same_store(
    upstreams: dict[str, str],
) -> None:
    agent = accord.gateway.several([upstreams["echo"]], routes={"/money": upstreams["money"]})
    with serve_app(agent.app()) as url:
        async with Client(f"{url}/money", transport="HTTP+JSON", version="1.0") as money:
            card = await money.get_card()
            task = await money.send(asking("convert 3 USD to EUR"))  # no skill: the prefix's
        async with Client(url, version="0.3") as root:
            union = await root.get_card()
            stored = await root.get_task(task.id)
    assert card.name == "Currency" and [s.id for s in card.skills] == ["convert_currency"]
    assert money.interface is not None and money.interface.url.startswith(f"{url}/money")
    assert [s.id for s in union.skills] == ["echo", "convert_currency"]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert stored.metadata == {UPSTREAM_KEY: "money"}


def test_a_route_that_would_hide_the_gateways_own_paths_is_refused(
    upstreams: dict[str, str],
) -> None:
    for prefix in ("/v1", "/health", "/.well-known"):
        with pytest.raises(ValueError, match=f"would hide the gateway's own {prefix}"):
            accord.gateway.several(routes={prefix: upstreams["money"]}).app()
    with pytest.raises(ValueError, match="takes no public URL"):
        accord.gateway.several(routes={"/m": upstreams["money"]}).app(public_url="https://a.b")
    with pytest.raises(ValueError, match="a path like /billing"):
        accord.gateway.several(routes={"/a b": upstreams["money"]})


def test_the_gateway_command_says_what_is_wrong_with_its_upstreams(
    upstreams: dict[str, str],
) -> None:
    both = [upstreams["echo"], upstreams["money"]]
    said = {
        "give an upstream's URL, a --route PREFIX=URL or a --registry URL": [],
        "--route takes PREFIX=URL": ["--route", "/money"],
        "the default upstream 'nobody' is none of official-echo, currency": [
            *both,
            "--default",
            "nobody",
        ],
        "cannot read an upstream's card: cannot connect to http://127.0.0.1:9/": [
            *both,
            "http://127.0.0.1:9/",
        ],
    }
    for line, arguments in said.items():
        result = CliRunner().invoke(app, ["gateway", *arguments])
        assert result.exit_code == 2, result.output
        assert line in result.output
