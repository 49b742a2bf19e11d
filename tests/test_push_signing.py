"""Signed, guarded webhooks end to end: a real receiver on loopback verifies each notification
with accord.push.verify; forged, changed, misaddressed, expired and replayed ones are refused."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from accord import Agent, create_app
from accord.core.push import PushTarget
from accord.core.records import EventRecord
from accord.keys import KeyStore, StaticKeys
from accord.keys.notifications import SIGNATURE_HEADER, sign_notification
from accord.push import NotificationRefused, SeenTokens, verify
from accord.runtime.delivery import DeliveryWorker, RetrySchedule
from accord.runtime.push import PushSender
from accord.samples.echo import agent as echo
from accord.store import InMemoryTaskStore
from accord.types import (
    PushNotificationConfig,
    Task,
    TaskState,
    TaskStatus,
)
from accord.web.webhook_guard import WebhookGuard
from agents_for_tests import SAFETY_TIMEOUT
from certificates import Issued, TestCA
from live_server import serve_app
from rpc import RpcClient, connect, send_params, served
from webhooks import AGENT_URL, LOOPBACK, Webhook, receiving


def pushing(base: Agent) -> Agent:
    return Agent(base.executor, name=base.name, push_notifications=True)


def push_config(url: str) -> dict[str, Any]:
    return {"pushNotificationConfig": {"url": url, "token": "tok-1"}}


@dataclass
class Agency:
    """A served agent that pushes: its URL, JWKS URL, keys and JSON-RPC client."""

    url: str
    keys: KeyStore
    client: RpcClient
    app: Starlette

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/.well-known/jwks.json"

    @property
    def sender(self) -> PushSender:
        sender = self.app.state.runtime.push
        assert isinstance(sender, PushSender)
        return sender

    async def idle(self) -> None:
        """Wait until every queued delivery went out (or was given up)."""
        deliveries = self.app.state.runtime.deliveries
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while deliveries.busy:
            assert time.monotonic() < deadline, "deliveries still pending"
            await asyncio.sleep(0.02)


@asynccontextmanager
async def agency(
    push_allow: list[str] | None = None, schedule: RetrySchedule | None = None
) -> AsyncIterator[Agency]:
    keys = KeyStore.ephemeral()
    allow = LOOPBACK if push_allow is None else push_allow
    app = create_app(pushing(echo), keys=keys, push_allow=allow, push_schedule=schedule)
    with served(app) as url:
        async with connect(url) as client:
            yield Agency(url, keys, client, app)


async def test_every_state_change_arrives_in_order_and_verifies() -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        async with agency() as agent:
            params = send_params("hello", configuration=push_config(hook_url))
            task = await agent.client.result("message/send", params)
            await hook.reached("completed").wait()
            seen = SeenTokens()
            notifications = [
                await verify(
                    body, headers, keys=agent.jwks_url, audience=hook_url, token="tok-1", seen=seen
                )
                for headers, body in hook.received
            ]
    assert [n.json()["status"]["state"] for n in notifications] == [
        "submitted",
        "working",
        "completed",
    ]
    assert {n.task_id for n in notifications} == {task["id"]}
    claims = notifications[0].claims
    assert claims["aud"] == hook_url and claims["iss"].startswith(agent.url)
    assert 0 < claims["exp"] - claims["iat"] <= 300
    assert len({n.claims["jti"] for n in notifications}) == 3
    headers = hook.received[0][0]
    assert headers["x-a2a-notification-token"] == "tok-1"


async def test_verify_refuses_what_the_agent_did_not_send_as_it_is() -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        async with agency() as agent:
            params = send_params("hello", configuration=push_config(hook_url))
            await agent.client.result("message/send", params)
            await hook.reached("completed").wait()
            headers, body = hook.received[-1]
            keys = StaticKeys(agent.keys.jwks())

            async def check(
                body: bytes = body, headers: dict[str, str] = headers, **options: Any
            ) -> None:
                defaults = {"keys": keys, "audience": hook_url, "seen": SeenTokens()}
                await verify(body, headers, **{**defaults, **options})

            await check()  # the real one passes
            expired = sign_notification(
                agent.keys.active(),
                issuer=agent.url,
                audience=hook_url,
                task_id="t",
                body=body,
                now=time.time() - 1000,
            )
            unsigned = {k: v for k, v in headers.items() if k != SIGNATURE_HEADER.lower()}
            refusals: dict[str, dict[str, Any]] = {
                "not the one the agent signed": {"body": body.replace(b"completed", b"canceled")},
                "Audience doesn't match": {"audience": hook_url + "/other"},
                "X-A2A-Notification-Token": {"token": "another"},
                "Invalid issuer": {"issuer": "https://someone.else/"},
                "no trusted key": {"keys": StaticKeys(KeyStore.ephemeral().jwks())},
                "header is missing": {"headers": unsigned},
                "expired": {"headers": {**headers, SIGNATURE_HEADER: expired}},
            }
            for reason, changed in refusals.items():
                with pytest.raises(NotificationRefused, match=reason):
                    await check(**changed)

            seen = SeenTokens()
            await check(seen=seen)
            with pytest.raises(NotificationRefused, match="replayed"):
                await check(seen=seen)


async def test_a_webhook_failing_twice_gets_the_notification_on_the_third_try() -> None:
    hook = Webhook(failures=2)
    with receiving(hook) as hook_url:
        async with agency(schedule=RetrySchedule(first_delay=0.05, max_delay=0.1)) as agent:
            params = send_params("retry me", configuration=push_config(hook_url))
            await agent.client.result("message/send", params)
            await hook.reached("completed").wait()
            seen = SeenTokens()
            for headers, body in hook.received:
                await verify(body, headers, keys=agent.jwks_url, audience=hook_url, seen=seen)
    assert hook.states() == ["submitted", "working", "completed"]
    assert len(hook.tries) == 5  # the first notification took three tries
    first_tries = {headers[SIGNATURE_HEADER.lower()] for headers in hook.tries[:3]}
    assert len(first_tries) == 3  # each try is signed anew


async def test_a_redirect_to_a_refused_address_is_not_followed() -> None:
    target = Webhook()
    with receiving(target, host="127.0.0.2") as refused_url:
        hits: list[str] = []

        async def redirect(request: Request) -> Response:
            hits.append(request.url.path)
            return Response(status_code=307, headers={"Location": refused_url})

        redirector = Starlette(routes=[Route("/hook", redirect, methods=["POST"])])
        with serve_app(redirector) as redirector_url:
            async with agency() as agent:  # 127.0.0.1 allowed, 127.0.0.2 not
                params = send_params("go", configuration=push_config(redirector_url + "/hook"))
                await agent.client.result("message/send", params)
                await agent.idle()
    assert hits == ["/hook"] * 3  # each notification POSTed once: a redirect is not retried
    assert target.tries == []


async def test_webhooks_on_loopback_are_refused_unless_allowed() -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        named = hook_url.replace("127.0.0.1", "localhost")
        async with agency(push_allow=[]) as agent:
            for url in (hook_url, named):
                error = await agent.client.error(
                    "message/send", send_params("x", configuration=push_config(url))
                )
                assert error["code"] == -32602
                assert "loopback" in error["message"] and "`url`" in error["message"]
    assert hook.tries == []


async def test_the_post_goes_to_the_address_checked_not_a_later_answer() -> None:
    hook = Webhook()
    answers = iter(["93.184.215.14"])  # checked when the config is set, then it "rebinds"

    async def rebinding(host: str, port: int) -> list[str]:
        return [next(answers, "127.0.0.1")]

    with receiving(hook) as hook_url:
        async with agency(push_allow=[]) as agent:
            agent.sender.guard = WebhookGuard(resolver=rebinding)
            url = hook_url.replace("127.0.0.1", "hooks.test")
            await agent.client.result(
                "message/send", send_params("x", configuration=push_config(url))
            )
            await agent.idle()
    assert hook.tries == []  # refused at send time: the name now resolves to loopback


async def test_the_post_is_pinned_to_the_checked_address_with_the_name_as_host() -> None:
    hook = Webhook()

    async def hooks_test(host: str, port: int) -> list[str]:
        assert host == "hooks.test"
        return ["127.0.0.1"]

    with receiving(hook) as hook_url:
        async with agency() as agent:
            agent.sender.guard = WebhookGuard(LOOPBACK, resolver=hooks_test)
            url = hook_url.replace("127.0.0.1", "hooks.test")  # no DNS knows this name
            await agent.client.result(
                "message/send", send_params("x", configuration=push_config(url))
            )
            await hook.reached("completed").wait()
            headers, body = hook.received[0]
            await verify(body, headers, keys=agent.jwks_url, audience=url, seen=SeenTokens())
    assert headers["host"] == url.split("/")[2]


# --- one bad config does not stop the others -------------------------------------------------


def finished(task_id: str, state: TaskState) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state))


async def test_a_delivery_that_breaks_does_not_stop_the_other_webhooks_of_its_task() -> None:
    hook = Webhook()
    with receiving(hook) as hook_url:
        sender = PushSender(guard=WebhookGuard(LOOPBACK), issuer=AGENT_URL)
        # Configs the service refuses today, as an older server may have stored them.
        broken = [
            PushTarget(PushNotificationConfig(url="http://[::1", token="t")),
            PushTarget(PushNotificationConfig(url=hook_url, token="tök")),
        ]
        good = PushTarget(PushNotificationConfig(url=hook_url, token="ok"))
        states = (TaskState.WORKING, TaskState.COMPLETED)
        try:
            await deliver(sender, [*broken, good], [finished("t-1", state) for state in states])
            await hook.reached("completed").wait()
        finally:
            await sender.close()
    assert hook.states() == ["working", "completed"]
    assert {headers["x-a2a-notification-token"] for headers, _ in hook.calls} == {"ok"}


# --- https: the certificate is checked against the webhook's name ----------------------------


@contextmanager
def serving_tls(app: Starlette, issued: Issued) -> Iterator[int]:
    """`app` over https on a free port of 127.0.0.1, with `issued` as its certificate."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="critical",
        ssl_certfile=str(issued.cert),
        ssl_keyfile=str(issued.key),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "https server did not start"
        time.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=SAFETY_TIMEOUT)


async def deliver(sender: PushSender, targets: list[PushTarget], tasks: list[Task]) -> None:
    """Each of `tasks` (one task's states) to `targets` through an outbox, tried once each."""
    store = InMemoryTaskStore()
    worker = DeliveryWorker(store, sender, schedule=RetrySchedule(attempts=1))
    for seq, task in enumerate(tasks, start=1):
        record = EventRecord.of(task.id, seq, task, final=False)
        outbox = worker.outbox(task.id, seq, targets, record, task)
        await store.save(task, seq, record, outbox=outbox)
    worker.start()
    deadline = time.monotonic() + SAFETY_TIMEOUT
    try:
        while worker.busy:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
    finally:
        await worker.close()


async def deliver_once(sender: PushSender, url: str) -> None:
    task = finished("t-tls", TaskState.COMPLETED)
    await deliver(sender, [PushTarget(PushNotificationConfig(url=url))], [task])


@pytest.mark.parametrize(
    ("certified", "trusted", "delivered"),
    [
        ("hooks.test", True, True),  # the name in the URL, pinned to 127.0.0.1, verified
        ("other.test", True, False),  # a certificate for another name
        ("hooks.test", False, False),  # a CA nobody trusts
    ],
)
async def test_https_webhooks_have_their_certificate_verified_for_their_name(
    tmp_path: Path, certified: str, trusted: bool, delivered: bool
) -> None:
    ca = TestCA(tmp_path)
    hook = Webhook()

    async def hooks_test(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    app = Starlette(routes=[Route("/hook", hook.handle, methods=["POST"])])
    with serving_tls(app, ca.issue(certified)) as port:
        verify_with = ssl.create_default_context(cafile=str(ca.cert)) if trusted else True
        http = httpx.AsyncClient(verify=verify_with, timeout=5.0, trust_env=False)
        sender = PushSender(
            http, guard=WebhookGuard(LOOPBACK, resolver=hooks_test), issuer=AGENT_URL
        )
        try:
            await deliver_once(sender, f"https://hooks.test:{port}/hook")
        finally:
            await sender.close()
            await http.aclose()
    assert bool(hook.received) is delivered
    if delivered:
        assert hook.received[0][0]["host"] == f"hooks.test:{port}"


# --- receivers that misbehave ----------------------------------------------------------------


async def test_an_endless_answer_or_a_hanging_receiver_costs_the_sender_nothing() -> None:
    hits: list[str] = []

    async def endless(request: Request) -> StreamingResponse:
        hits.append("endless")

        async def forever() -> AsyncIterator[bytes]:
            while True:
                yield b"x" * 65536
                await asyncio.sleep(0)

        return StreamingResponse(forever())

    released = threading.Event()

    async def hang(request: Request) -> Response:
        hits.append("hang")
        # Until the test is done: far beyond the sender's timeout.
        await asyncio.to_thread(released.wait, SAFETY_TIMEOUT)
        return Response(status_code=204)

    receiver = Starlette(
        routes=[
            Route("/endless", endless, methods=["POST"]),
            Route("/hang", hang, methods=["POST"]),
        ]
    )
    with serve_app(receiver) as url:
        sender = PushSender(guard=WebhookGuard(LOOPBACK), timeout=0.5, issuer=AGENT_URL)
        try:
            started = time.monotonic()
            await deliver_once(sender, url + "/endless")
            await deliver_once(sender, url + "/hang")
            elapsed = time.monotonic() - started
        finally:
            released.set()
            await sender.close()
    assert hits == ["endless", "hang"]
    assert elapsed < 2.5  # the endless body was not read, the hang timed out


def test_seen_tokens_forget_a_token_once_it_expired() -> None:
    now = [1000.0]
    seen = SeenTokens(clock=lambda: now[0])
    assert seen.first_use("a", expires=1300.0)
    assert not seen.first_use("a", expires=1300.0)
    for index in range(3000):  # pruning keeps the live ones
        assert seen.first_use(f"t{index}", expires=1300.0)
    assert not seen.first_use("t5", expires=1300.0)
    now[0] = 1301.0
    assert seen.first_use("a", expires=1600.0)  # expired: the token itself would be refused
