"""`accord serve --public-url`: behind a proxy, the card's interfaces, the signature's `jku` and
push notifications' `iss` name the agent where clients reach it; without a public URL, no
notification goes out naming no issuer."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from jwt.utils import base64url_decode
from starlette.requests import Request
from starlette.responses import Response
from typer.testing import CliRunner

from accord.cli.main import app
from accord.keys import verify_card
from accord.keys.cards import JWKS_PATH
from accord.keys.jwks_client import JwksClient
from accord.push import SeenTokens, verify
from accord.store import open_store
from accord.types import TaskState
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from rpc import connect, send_params
from served_process import ServedProcess, accord_serve
from webhooks import Webhook, receiving

pytestmark = pytest.mark.processes

AGENT_MODULE = """
import accord
from agents_for_tests import EXTENDED_CARD, NeverFinishes

agent = accord.Agent(
    NeverFinishes(), name="Stuck", push_notifications=True, extended_card=EXTENDED_CARD
)
"""
"""An agent whose tasks work until a replica dies, then end `failed` on the one adopting them."""
PREFIX = "/a2a"
FAST = ("--runner-ttl", "1s", "--graceful-timeout", "2s", "--push-allow", "127.0.0.1")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The servers' directory: the agent's module, the SQLite store, the key store."""
    (tmp_path / "stuck.py").write_text(AGENT_MODULE)
    return tmp_path


def serve_stuck(workdir: Path, *options: str) -> Any:
    store = f"sqlite:///{workdir}/accord.db"
    return accord_serve("stuck:agent", "--store", store, *FAST, *options, cwd=workdir)


class PrefixProxy:
    """A reverse proxy on loopback: `{its URL}/a2a/...` is `{upstream}/...` (the `Host` the
    upstream sees is its own address, as behind many load balancers)."""

    def __init__(self) -> None:
        self.upstream = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        path = request.url.path
        if not path.startswith(PREFIX):
            await Response(status_code=404)(scope, receive, send)
            return
        target = self.upstream + (path.removeprefix(PREFIX) or "/")
        headers = {k: v for k, v in request.headers.items() if k not in ("host", "content-length")}
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
            answer = await http.request(
                request.method,
                target,
                params=request.query_params,
                content=await request.body(),
                headers=headers,
            )
        dropped = ("content-length", "content-encoding", "transfer-encoding", "connection")
        kept = {k: v for k, v in answer.headers.items() if k not in dropped}
        await Response(answer.content, answer.status_code, headers=kept)(scope, receive, send)


@contextmanager
def proxied() -> Iterator[tuple[PrefixProxy, str]]:
    """A PrefixProxy on loopback and the public URL it serves (`http://127.0.0.1:P/a2a`)."""
    proxy = PrefixProxy()
    with serve_app(proxy) as url:
        yield proxy, url + PREFIX


def jku_of(card: dict[str, Any]) -> str:
    header = json.loads(base64url_decode(card["signatures"][0]["protected"]))
    jku: str = header["jku"]
    return jku


# --- the card and its signature ----------------------------------------------------------------


async def test_behind_a_proxy_the_card_names_the_public_url_and_verifies_with_its_jwks(
    workdir: Path,
) -> None:
    with proxied() as (proxy, public), serve_stuck(workdir, "--public-url", public) as server:
        proxy.upstream = server.url
        assert f"clients reach it at {public}" in server.output
        async with httpx.AsyncClient() as http:
            for version in ("0.3", "1.0"):
                answer = await http.get(
                    public + "/.well-known/agent-card.json", headers={"A2A-Version": version}
                )
                card = answer.json()
                urls = [i["url"] for i in card["supportedInterfaces"]]
                if version == "0.3":
                    urls += [card["url"], *(i["url"] for i in card["additionalInterfaces"])]
                assert urls and all(url.startswith(public) for url in urls), urls
                assert jku_of(card) == public + JWKS_PATH  # the path prefix is kept
                # The JWKS the signature names is reachable at the public URL, and verifies it.
                assert await verify_card(card, JwksClient(jku_of(card), http=http))
        async with connect(public) as rpc:  # the extended card, signed by the pipeline
            extended = await rpc.result("agent/getAuthenticatedExtendedCard")
        assert extended["url"].startswith(public)
        assert jku_of(extended) == public + JWKS_PATH


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://agents.example.com", "http:// or https://"),
        ("agents.example.com/a2a", "http:// or https://"),
        ("https://", "http:// or https://"),
        ("https://agents.example.com:99999", "out of range"),
        ("https://agents.example.com/a2a?x=1", "query or a fragment"),
        ("https://agents.example.com/#top", "query or a fragment"),
        ("https://me:secret@agents.example.com", "credentials"),
        ("https://agents.example.com/a b", "spaces"),
    ],
)
def test_a_bad_public_url_is_a_clear_error(tmp_path: Path, url: str, problem: str) -> None:
    registry = str(tmp_path / "agents.json")
    for args in (["serve", "accord.samples.echo:agent"], ["host", "--registry", registry]):
        result = CliRunner().invoke(app, [*args, "--store", "memory", "--public-url", url])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: --public-url") and problem in result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit)


# --- push notifications' issuer ----------------------------------------------------------------


async def task_left_working(server: ServedProcess, hook: Webhook, hook_url: str) -> str:
    """Start a task that pushes to `hook`; once it is working, stop `server` (it hands the task
    over to the next replica that starts). The task's id."""
    async with connect(server.url) as rpc:
        configuration = {"blocking": False, "pushNotificationConfig": {"url": hook_url}}
        task = await rpc.result("message/send", send_params("work", configuration=configuration))
    await hook.reached("working").wait()
    await asyncio.sleep(0.2)  # the delivery is recorded as done, not left to its lease
    server.stop()
    return str(task["id"])


async def until_failed(workdir: Path, task_id: str) -> None:
    """Wait until a server on `workdir`'s store adopted the task and ended it `failed`: read
    in the store, as a request would tell the server its URL."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    store = open_store(f"sqlite:///{workdir}/accord.db")
    await store.open()
    try:
        while (stored := await store.get(task_id)) is None or (
            stored.task.status.state != TaskState.FAILED
        ):
            assert time.monotonic() < deadline, "the task was not taken over"
            await asyncio.sleep(0.1)
    finally:
        await store.close()


async def issuers(hook: Webhook, keys: str, hook_url: str) -> dict[str, str]:
    """Each state notified to `hook`, with the issuer its verified token names."""
    seen = SeenTokens()
    found = {}
    for headers, body in list(hook.received):
        notification = await verify(body, headers, keys=keys, audience=hook_url, seen=seen)
        found[json.loads(body)["status"]["state"]] = str(notification.claims["iss"])
    return found


async def test_with_a_public_url_a_delivery_before_any_request_names_it(workdir: Path) -> None:
    public = "https://agents.example.com/a2a"
    hook = Webhook()
    with receiving(hook) as hook_url:
        with serve_stuck(workdir, "--public-url", public) as first:
            await task_left_working(first, hook, hook_url)
        # The next server adopts the stopped one's task and ends it: no request reaches it but
        # the GET of its card that tells it is up.
        with serve_stuck(workdir, "--public-url", public) as second:
            await hook.reached("failed").wait()
            found = await issuers(hook, second.url + JWKS_PATH, hook_url)
    assert found == {"submitted": public, "working": public, "failed": public}


async def test_without_a_public_url_no_delivery_goes_out_naming_no_issuer(workdir: Path) -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        with serve_stuck(workdir) as first:
            task_id = await task_left_working(first, hook, hook_url)
        with serve_stuck(workdir) as second:
            await until_failed(workdir, task_id)
            await asyncio.sleep(1.5)  # a notification sent now would have come
            assert "failed" not in await issuers(hook, second.url + JWKS_PATH, hook_url)
            # The first message the server serves tells it its URL; the waiting one goes out.
            async with connect(second.url) as rpc:
                await rpc.result(
                    "message/send", send_params("hi", configuration={"blocking": False})
                )
            await hook.reached("failed").wait()
            found = await issuers(hook, second.url + JWKS_PATH, hook_url)
    assert found == {
        "submitted": first.url + "/",
        "working": first.url + "/",
        "failed": second.url + "/",
    }
