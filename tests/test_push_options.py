"""The retry schedule set from `accord serve`'s options, and the delivery id the notification
JWT signs: real servers and webhook receivers on loopback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import Response

from accord import create_app
from accord.keys import KeyStore, StaticKeys
from accord.keys.notifications import DELIVERY_ID_CLAIM, sign_notification
from accord.push import (
    DELIVERY_ID_HEADER,
    SIGNATURE_HEADER,
    DeliveryIds,
    NotificationRefused,
    SeenTokens,
    verify,
)
from accord.runtime.delivery import RetrySchedule
from agents_for_tests import SAFETY_TIMEOUT
from push_agents import reporter
from rpc import connect, send_params, served
from served_process import STARTUP_TIMEOUT, accord_command, accord_serve
from webhooks import LOOPBACK, Webhook, receiving

REPORTER = "push_agents:reporter"
ALWAYS_DOWN = 1_000_000
"""A receiver's `failures` when every POST fails."""
DELIVERY = DELIVERY_ID_HEADER.lower()


@dataclass
class TimedWebhook(Webhook):
    """A Webhook that also notes when each POST arrived (time.monotonic)."""

    arrivals: list[float] = field(default_factory=list)

    async def handle(self, request: Request) -> Response:
        with self.lock:
            self.arrivals.append(time.monotonic())
        return await super().handle(request)


def gaps(arrivals: list[float]) -> list[float]:
    return [later - earlier for earlier, later in pairwise(arrivals)]


def run_accord(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        accord_command(*args), capture_output=True, text=True, timeout=STARTUP_TIMEOUT, cwd=cwd
    )


async def parked_lines(store: str, cwd: Path, count: int) -> list[str]:
    """`accord push failures` once it lists `count` parked deliveries."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while True:
        listed = await asyncio.to_thread(run_accord, "push", "failures", "--store", store, cwd=cwd)
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.splitlines()
        if len(lines) >= count and "no parked" not in listed.stdout:
            return lines
        assert time.monotonic() < deadline, f"not parked: {listed.stdout}"
        await asyncio.sleep(0.1)


async def failing_deliveries(tmp_path: Path, *options: str) -> tuple[TimedWebhook, list[str]]:
    """Serve the reporter with `options`, send it a message whose webhook fails every try;
    the webhook and `accord push failures`' lines once the task's 3 notifications are parked.
    """
    store = f"sqlite:///{tmp_path}/accord.db"
    hook = TimedWebhook(failures=ALWAYS_DOWN)
    with (
        receiving(hook) as hook_url,
        accord_serve(
            REPORTER, "--store", store, "--push-allow", "127.0.0.1", *options, cwd=tmp_path
        ) as server,
    ):
        async with connect(server.url) as rpc:
            config = {"pushNotificationConfig": {"url": hook_url}}
            await rpc.result("message/send", send_params("hello", configuration=config))
        lines = await parked_lines(store, tmp_path, 3)
    return hook, lines


@pytest.mark.processes
async def test_push_tries_and_backoff_options_set_how_often_and_how_far_apart(
    tmp_path: Path,
) -> None:
    # Uncapped, 12 tries 0.2 s apart at first would take 0.2 * (2**11 - 1) s: minutes.
    options = ("--push-tries", "12", "--push-backoff", "0.2s", "--push-backoff-max", "0.2s")
    hook, lines = await failing_deliveries(tmp_path, *options)
    assert len(hook.tries) == 12  # as many tries as allowed, then parked
    assert len({headers[DELIVERY] for headers in hook.tries}) == 1  # all of the first event
    # Each wait is the backoff less a random part of up to half of it.
    assert min(gaps(hook.arrivals)) >= 0.1 - 0.01
    assert "12 tries" in lines[-1] and "HTTP 500" in lines[-1]  # the first, oldest, listed last


@pytest.mark.processes
async def test_push_deadline_option_parks_a_delivery_whose_next_try_would_come_too_late(
    tmp_path: Path,
) -> None:
    # The second try comes 1-2 s after the first, the third would come 2-4 s after that:
    # past the deadline of 3 s, though 10 tries are allowed.
    options = ("--push-deadline", "3s", "--push-backoff", "2s", "--push-tries", "10")
    hook, lines = await failing_deliveries(tmp_path, *options)
    assert len(hook.tries) == 2
    assert gaps(hook.arrivals)[0] >= 1.0 - 0.01
    assert "2 tries" in lines[-1]


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--push-tries", "0"), "'--push-tries': Input should be greater than or equal to 1"),
        (("--push-tries", "many"), "'--push-tries': Input should be a valid integer"),
        (("--push-backoff", "soon"), "--push-backoff must be a duration like 30s"),
        (("--push-deadline", "off"), "--push-deadline cannot be off"),
        (
            ("--push-backoff", "1m", "--push-backoff-max", "10s"),
            "--push-backoff-max (10s) must be at least --push-backoff (1m)",
        ),
    ],
)
@pytest.mark.processes
def test_serve_refuses_a_bad_retry_option(
    args: tuple[str, ...], complaint: str, tmp_path: Path
) -> None:
    result = run_accord("serve", REPORTER, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert complaint in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # refused before any store or key was made


def test_create_app_hands_its_push_schedule_to_the_delivery_worker() -> None:
    schedule = RetrySchedule(attempts=2, first_delay=0.5)
    app = create_app(reporter, push_schedule=schedule)
    assert app.state.runtime.deliveries.schedule is schedule
    with pytest.raises(ValueError, match="attempts must be at least 1"):
        RetrySchedule(attempts=0)


async def test_every_try_signs_the_delivery_id_its_header_carries() -> None:
    hook = Webhook(failures=2)  # the first notification is tried three times
    quick = RetrySchedule(first_delay=0.05, max_delay=0.1)
    app = create_app(reporter, keys=KeyStore.ephemeral(), push_allow=LOOPBACK, push_schedule=quick)
    with receiving(hook) as hook_url, served(app) as url:
        async with connect(url) as rpc:
            config = {"pushNotificationConfig": {"url": hook_url}}
            await rpc.result("message/send", send_params("hi", configuration=config))
            await hook.reached("completed").wait()
        keys = f"{url}/.well-known/jwks.json"
        bodies = {headers[DELIVERY]: body for headers, body in hook.received}
        seen, delivered = SeenTokens(), DeliveryIds()
        notifications = [
            await verify(
                bodies[headers[DELIVERY]], headers, keys=keys, audience=hook_url, seen=seen
            )
            for headers in hook.tries
        ]
    # Each try's token: its own jti, and the delivery id of its header.
    assert [n.claims[DELIVERY_ID_CLAIM] for n in notifications] == [h[DELIVERY] for h in hook.tries]
    assert len({n.claims["jti"] for n in notifications}) == len(hook.tries) == 5
    assert [n.delivery_id for n in notifications] == [h[DELIVERY] for h in hook.tries]
    # The three tries of the first notification are one delivery to the receiver.
    assert [delivered.first(n) for n in notifications] == [True, False, False, True, True]


async def test_verify_refuses_a_delivery_id_header_the_token_does_not_sign() -> None:
    hook = Webhook()
    app = create_app(reporter, keys=KeyStore.ephemeral(), push_allow=LOOPBACK)
    with receiving(hook) as hook_url, served(app) as url:
        async with connect(url) as rpc:
            config = {"pushNotificationConfig": {"url": hook_url}}
            await rpc.result("message/send", send_params("hi", configuration=config))
            await hook.reached("completed").wait()
        keys = f"{url}/.well-known/jwks.json"
        headers, body = hook.received[0]
        seen = SeenTokens()
        changed = {**headers, DELIVERY: "another-delivery"}
        with pytest.raises(NotificationRefused, match=f"the {DELIVERY_ID_HEADER} header is not"):
            await verify(body, changed, keys=keys, audience=hook_url, seen=seen)
        # The header stripped on the way: the signed id is still there.
        stripped = {name: value for name, value in headers.items() if name != DELIVERY}
        notification = await verify(body, stripped, keys=keys, audience=hook_url, seen=seen)
    assert notification.delivery_id == headers[DELIVERY]  # the refusal did not use up the token


async def test_a_sender_that_signs_no_delivery_id_is_deduped_on_its_header() -> None:
    keys = KeyStore.ephemeral()
    trusted = StaticKeys(keys.jwks())
    body = json.dumps({"id": "t-1", "status": {"state": "working"}}).encode()
    hook = "http://127.0.0.1:9/hook"

    def older_try(delivery_id: str) -> dict[str, str]:
        token = sign_notification(
            keys.active(), issuer="http://agent", audience=hook, task_id="t-1", body=body
        )
        return {SIGNATURE_HEADER: token, DELIVERY_ID_HEADER: delivery_id}

    delivered = DeliveryIds()
    received = [
        await verify(body, older_try(delivery_id), keys=trusted, audience=hook)
        for delivery_id in ("d-1", "d-1", "d-2")
    ]
    assert [n.delivery_id for n in received] == ["d-1", "d-1", "d-2"]
    assert [DELIVERY_ID_CLAIM in n.claims for n in received] == [False] * 3
    assert [delivered.first(n) for n in received] == [True, False, True]


async def test_verify_refuses_a_delivery_id_claim_that_is_not_a_string() -> None:
    keys = KeyStore.ephemeral()
    body = b"{}"
    hook = "http://127.0.0.1:9/hook"
    token = sign_notification(
        keys.active(),
        issuer="i",
        audience=hook,
        task_id="t",
        body=body,
        delivery_id=7,  # type: ignore[arg-type]
    )
    with pytest.raises(NotificationRefused, match="delivery_id claim is not a string"):
        await verify(body, {SIGNATURE_HEADER: token}, keys=StaticKeys(keys.jwks()), audience=hook)
