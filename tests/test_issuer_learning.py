"""Without a public URL, push notifications' issuer is the URL of the first request the
request pipeline serves, whatever the operation and the binding; `accord push retry` takes the
deadline a server may run with; a bad public URL is refused in Python as on the command line."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import accord
from accord import Client
from accord.cli.main import app as cli
from accord.core import Inbound, Principal
from accord.errors import TaskNotFound, Unauthenticated
from accord.keys.cards import JWKS_PATH
from accord.runtime.push import PushSender
from accord.server.extended_card import TARGET
from accord.server.grpc_binding import http_base_url
from accord.store import open_store
from accord.types import TransportProtocol
from live_server import serve_app
from push_agents import reporter
from rpc import connect, send_params
from served_process import STARTUP_TIMEOUT
from test_pipeline import INTERFACES  # every binding in both versions
from test_public_url import issuers, serve_stuck, task_left_working, until_failed, workdir
from test_push_outbox_delivery import accord as accord_cli
from test_push_outbox_delivery import push_config, pushing_agent, settled, until
from webhooks import Webhook, receiving

__all__ = ["workdir"]  # the fixture, shared with test_public_url


def push_sender(app: object) -> PushSender:
    sender = app.state.runtime.push  # type: ignore[attr-defined]
    assert isinstance(sender, PushSender)
    return sender


# --- a poll teaches the URL --------------------------------------------------------------------


@pytest.mark.processes
async def test_a_poll_for_an_unknown_task_lets_the_held_notification_go_out(
    workdir: Path,
) -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        with serve_stuck(workdir) as first:
            task_id = await task_left_working(first, hook, hook_url)
        with serve_stuck(workdir) as second:
            await until_failed(workdir, task_id)  # adopted and ended, its notification held
            await asyncio.sleep(1.5)  # a notification sent now would have come
            assert "failed" not in await issuers(hook, second.url + JWKS_PATH, hook_url)
            # A client that only polls, for a task this server does not know even.
            async with connect(second.url) as rpc:
                answer = await rpc.call("tasks/get", {"id": "no-such-task"})
                assert answer["error"]["code"] == TaskNotFound.code
            await hook.reached("failed").wait()
            found = await issuers(hook, second.url + JWKS_PATH, hook_url)
    assert found["failed"] == second.url + "/"


@pytest.mark.parametrize("interface", INTERFACES, ids=lambda i: f"{i[0].value}-{i[1]}")
async def test_any_binding_teaches_the_url_from_a_poll(
    interface: tuple[TransportProtocol, str],
) -> None:
    transport, version = interface
    app = accord.create_app(reporter, grpc_port=0)
    with serve_app(app) as url:
        async with Client(url, transport=transport.value, version=version) as client:
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
    expected = url + "/"
    if transport is TransportProtocol.GRPC:  # gRPC names where the HTTP bindings are
        expected = http_base_url("127.0.0.1", None, tls=False)
    assert push_sender(app).issuer == expected


def test_the_card_a_health_check_fetches_teaches_nothing() -> None:
    app = accord.create_app(reporter)
    with serve_app(app) as url:
        answer = httpx.get(url + "/.well-known/agent-card.json")
        assert answer.status_code == 200
        assert push_sender(app).issuer is None


class RefuseAll:
    async def authenticate(self, inbound: Inbound) -> Principal:
        raise Unauthenticated("no one may call", challenges=['Bearer realm="test"'])


async def test_a_request_refused_by_authentication_teaches_nothing() -> None:
    app = accord.create_app(reporter, authenticator=RefuseAll())
    with serve_app(app) as url:
        async with Client(url, transport="JSONRPC") as client:
            with pytest.raises(Unauthenticated):
                await client.get_task("no-such-task")
        assert push_sender(app).issuer is None


async def test_the_base_url_is_worked_out_only_while_the_issuer_is_unknown() -> None:
    app = accord.create_app(reporter)
    calls: list[str] = []

    def base_url() -> str:
        calls.append("base_url")
        return "http://agent.test/"

    inbound = Inbound("HTTP", "GET /agent/authenticatedExtendedCard", {})
    for _ in range(3):  # the agent has no extended card: the operation never asks for it
        reply = await app.state.pipeline.run(inbound, TARGET, None, base_url=base_url)
        assert reply.error is not None
    assert calls == ["base_url"]
    assert push_sender(app).issuer == "http://agent.test/"


# --- accord push retry --push-deadline --------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "seconds"), [((), 24 * 3600), (("--push-deadline", "90m"), 90 * 60)]
)
@pytest.mark.processes
async def test_push_retry_gives_requeued_deliveries_the_deadline_asked_for(
    tmp_path: Path, option: tuple[str, ...], seconds: int
) -> None:
    store_url = f"sqlite:///{tmp_path}/accord.db"
    hook = Webhook(failures=1_000)
    with receiving(hook) as hook_url:
        async with pushing_agent(open_store(store_url)) as (_, client, runtime):
            params = send_params("nobody listens", configuration=push_config(hook_url))
            await client.result("message/send", params)
            await until(lambda: len(hook.tries) >= 3)
            await settled(runtime)
            assert len(await runtime.store.parked_deliveries()) == 3
    before = datetime.now(UTC)
    retried = await accord_cli("push", "retry", "--all", *option, "--store", store_url)
    after = datetime.now(UTC)
    assert (retried.returncode, retried.stdout) == (0, "requeued 3 parked deliveries\n")
    store = open_store(store_url)
    await store.open()
    try:
        requeued = await store.claim_deliveries(after, after + timedelta(seconds=30), 10)
    finally:
        await store.close()
    assert requeued  # the head of the queue
    for delivery in requeued:
        assert delivery.attempts == 1  # its tries started over
        window = (before + timedelta(seconds=seconds), after + timedelta(seconds=seconds))
        assert window[0] <= delivery.deadline <= window[1]


@pytest.mark.parametrize(
    ("value", "complaint"),
    [("off", "--push-deadline cannot be off"), ("soon", "--push-deadline must be a duration")],
)
def test_push_retry_refuses_a_bad_deadline_as_serve_does(
    value: str, complaint: str, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/accord.db"
    runner = CliRunner()
    retry = runner.invoke(
        cli, ["push", "retry", "--all", "--push-deadline", value, "--store", store]
    )
    serve = runner.invoke(
        cli, ["serve", "accord.samples.echo:agent", "--store", store, "--push-deadline", value]
    )
    assert retry.exit_code == serve.exit_code == 2
    assert complaint in retry.stderr and retry.stderr == serve.stderr
    assert list(tmp_path.iterdir()) == []  # refused before the store was opened


# --- a bad public URL in Python ----------------------------------------------------------------

BAD_URLS = [
    ("ftp://agents.example.com", "must be an http:// or https:// URL with a host"),
    ("https://agents.example.com:99999", "out of range"),
    ("https://me:secret@agents.example.com", "cannot carry credentials"),
    ("https://agents.example.com/a2a?x=1", "cannot have a query or a fragment"),
    ("https://agents.example.com/a b", "cannot contain spaces"),
]


def cli_message(url: str) -> str:
    """What `accord serve --public-url URL` says, without its `error: ` prefix."""
    result = CliRunner().invoke(
        cli, ["serve", "accord.samples.echo:agent", "--store", "memory", "--public-url", url]
    )
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("error: --public-url")
    return line.removeprefix("error: ")


@pytest.mark.parametrize(("url", "problem"), BAD_URLS)
def test_create_app_refuses_a_bad_public_url_as_the_cli_does(url: str, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        accord.create_app(reporter, public_url=url)
    assert str(refused.value).startswith("public_url") and problem in str(refused.value)
    # The same words, naming the option rather than the argument.
    assert "--" + str(refused.value).replace("public_url", "public-url", 1) == cli_message(url)


@pytest.mark.parametrize(("url", "problem"), BAD_URLS[:2])
@pytest.mark.processes
def test_agent_serve_refuses_a_bad_public_url(url: str, problem: str, tmp_path: Path) -> None:
    # In a process of its own: an agent that took the URL would serve until stopped.
    script = (
        "from accord.samples.echo import agent\n"
        f"agent.serve(port=0, store='memory', public_url={url!r})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True, text=True, timeout=STARTUP_TIMEOUT, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2  # one line, as `accord serve` says it
    assert result.stderr.startswith("error: public_url") and problem in result.stderr


def test_a_good_public_url_is_kept() -> None:
    app = accord.create_app(reporter, public_url="https://agents.example.com/a2a")
    assert push_sender(app).issuer == "https://agents.example.com/a2a"
