"""Owners name the scheme that authenticated them: a token whose subject is `alice` and the API
key of `alice` own different tasks, on every store; `Security(owner_of=...)` makes callers of
several schemes one owner; tasks stored before owners named a scheme belong to no caller until
the deployment says whose they are."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import insert

from accord import Agent
from accord.auth import ApiKey, OAuth2, OwnerOf, Security
from accord.client import ApiKey as Key
from accord.client import BearerToken, Client
from accord.core import ANONYMOUS, ANONYMOUS_OWNER, Principal, qualified_owner, unqualified_owner
from accord.errors import RateLimited, TaskNotFound
from accord.samples import echo
from accord.server.limits import Limits
from accord.store import TaskQuery
from accord.store.sql import SqlTaskStore
from accord.store.sql.migrations import (
    MIGRATIONS,
    UpgradeResult,
    _unqualified_owners,
    head_version,
    upgrade,
)
from accord.store.sql.schema import schema_version, task_snapshots, tasks
from accord.types import Task, TaskState, TaskStatus
from agents_for_tests import NeverFinishes
from rpc import served
from stores import Backend, backend_fixture, sql_backend_fixture  # noqa: F401 - fixtures
from test_sql_store import create_version_8
from token_issuer import AUDIENCE, TokenIssuer, running_issuer

API_KEYS = {"key-of-alice": "alice", "key-of-bob": "bob"}


def test_the_same_id_under_two_schemes_is_two_owners() -> None:
    by_key = Principal("alice", scheme="apiKey")
    by_token = Principal("alice", scheme="oauth2")

    assert (by_key.owner, by_token.owner) == ("apiKey:alice", "oauth2:alice")
    assert Principal("alice").owner == "alice"  # an authenticator that names no scheme
    assert ANONYMOUS.owner == ANONYMOUS_OWNER
    assert Principal("alice", scheme="oauth2", owned_as="person-7").owner == "person-7"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("a:b", "c"), ("a", "b:c")),
        (("a%3Ab", "c"), ("a:b", "c")),
        (("(unqualified)", "alice"), None),
    ],
)
def test_no_two_schemes_and_ids_make_one_owner(
    first: tuple[str, str], second: tuple[str, str] | None
) -> None:
    owner = qualified_owner(*first)
    other = qualified_owner(*second) if second else unqualified_owner("alice")
    assert owner != other


def test_a_stored_owner_stands_for_the_id_it_names() -> None:
    rebuilt = Principal.of_owner("apiKey:alice")
    assert (rebuilt.id, rebuilt.owner, rebuilt.authenticated) == ("alice", "apiKey:alice", False)
    assert Principal.of_owner(unqualified_owner("bob")).owner == "(unqualified):bob"
    assert Principal.of_owner("person-7").id == "person-7"
    assert Principal.of_owner(ANONYMOUS_OWNER) is ANONYMOUS
    with pytest.raises(ValueError, match="owned_as"):
        Principal("alice", scheme="apiKey", owned_as="")


# --- on a served agent, on every store ---------------------------------------------------------


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


@asynccontextmanager
async def agent_on(
    backend: Backend, issuer: TokenIssuer, owner_of: OwnerOf | None = None
) -> AsyncIterator[str]:
    """An agent accepting API keys or the issuer's tokens, on `backend`'s store."""
    security = Security(
        ApiKey(API_KEYS),
        OAuth2(token_url=issuer.token_url, jwks_url=issuer.jwks_url, audience=AUDIENCE),
        owner_of=owner_of,
    )
    agent = Agent(echo.agent.executor, name="Ledger", security=security)
    # A SQL store the server's own event loop opens (its connections belong to that loop).
    store = await backend.open() if backend.name == "memory" else SqlTaskStore(backend.engine())
    with served(agent.app(store=store)) as url:
        yield url


def a_task(answer: object) -> Task:
    assert isinstance(answer, Task), answer
    return answer


async def test_a_token_for_alice_does_not_reach_the_tasks_of_the_api_key_of_alice(
    backend: Backend, issuer: TokenIssuer
) -> None:
    token = issuer.token("alice", client_id="alice")
    async with (
        agent_on(backend, issuer) as url,
        Client(url, credentials=[Key("key-of-alice")]) as by_key,
        Client(url, credentials=[BearerToken(token)]) as by_token,
    ):
        keyed = a_task(await by_key.send("the key's task"))
        listed_by_token = (await by_token.list_tasks()).tasks
        with pytest.raises(TaskNotFound):
            await by_token.get_task(keyed.id)
        with pytest.raises(TaskNotFound):
            await by_token.send("continue it", task_id=keyed.id)
        tokened = a_task(await by_token.send("the token's task"))
        listed_by_key = {task.id for task in (await by_key.list_tasks()).tasks}

    assert listed_by_token == []
    assert listed_by_key == {keyed.id}
    assert tokened.id != keyed.id


async def test_owner_of_makes_callers_of_several_schemes_one_owner(
    backend: Backend, issuer: TokenIssuer
) -> None:
    def person(principal: Principal) -> str:
        return f"person:{principal.id}"

    async with (
        agent_on(backend, issuer, owner_of=person) as url,
        Client(url, credentials=[Key("key-of-alice")]) as by_key,
        Client(url, credentials=[BearerToken(issuer.token("alice"))]) as by_token,
        Client(url, credentials=[Key("key-of-bob")]) as bob,
    ):
        keyed = a_task(await by_key.send("the key's task"))
        seen = await by_token.get_task(keyed.id)
        listed_by_bob = (await bob.list_tasks()).tasks

    assert seen.status.state is TaskState.COMPLETED
    assert listed_by_bob == []


# --- owners stored before they named a scheme ----------------------------------------------------

NOW = datetime(2026, 1, 1, tzinfo=UTC)
QUALIFYING = next(step.version for step in MIGRATIONS if step.apply is _unqualified_owners)
PREVIOUS = QUALIFYING - 1
"""The schema version before owners named their scheme (the step qualifying them is the last)."""


def stored_task(task_id: str, owner: str) -> tuple[dict[str, Any], Task]:
    task = Task(
        id=task_id, context_id=f"ctx-{task_id}", status=TaskStatus(state=TaskState.COMPLETED)
    )
    row = {"id": task_id, "context_id": task.context_id, "state": "completed", "updated_at": NOW,
           "seq": 1, "created_at": NOW, "finished_at": NOW, "owner": owner}  # fmt: skip
    return row, task


async def test_owners_of_the_previous_schema_belong_to_no_caller_until_handed_back(
    sql_backend: Backend,
) -> None:
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # the previous version: owners are bare ids
            await create_version_8(connection)  # the tables of versions 7 and 8 are one
            for version in range(1, PREVIOUS + 1):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            for row, task in (stored_task("old-alice", "alice"), stored_task("old-anon", "")):
                await connection.execute(insert(tasks).values(row))
                json = task.to_json().decode()
                await connection.execute(insert(task_snapshots).values(task_id=task.id, task=json))
        upgraded = await upgrade(engine)
    finally:
        await engine.dispose()
    store = await sql_backend.open()

    def visible_to(principal: Principal) -> Any:
        return store.list_tasks(TaskQuery(owner=principal.owner))

    alice_by_key = Principal("alice", scheme="apiKey")
    handed_back = Principal("alice", scheme="apiKey", owned_as=unqualified_owner("alice"))
    assert upgraded == UpgradeResult(PREVIOUS, head_version())
    assert (await visible_to(alice_by_key)).total_size == 0
    assert (await visible_to(Principal("alice", scheme="oauth2"))).total_size == 0
    assert [t.id for t in (await visible_to(handed_back)).tasks] == ["old-alice"]
    assert [t.id for t in (await visible_to(ANONYMOUS)).tasks] == ["old-anon"]
    stored = await store.get("old-alice")
    assert stored is not None and stored.owner == "(unqualified):alice"


async def test_limits_count_callers_of_two_schemes_with_one_id_apart(issuer: TokenIssuer) -> None:
    security = Security(
        ApiKey(API_KEYS),
        OAuth2(token_url=issuer.token_url, jwks_url=issuer.jwks_url, audience=AUDIENCE),
    )
    agent = Agent(NeverFinishes(), name="Busy", security=security)
    limits = Limits(tasks_per_caller=1, requests_per_second=None)
    async with (
        served_agent(agent, limits) as url,
        Client(url, credentials=[Key("key-of-alice")]) as by_key,
        Client(url, credentials=[BearerToken(issuer.token("alice"))]) as by_token,
    ):
        await by_key.send("first", blocking=False)
        with pytest.raises(RateLimited):
            await by_key.send("second", blocking=False)
        by_token_first = a_task(await by_token.send("the token's first", blocking=False))

    assert by_token_first.status.state in (TaskState.SUBMITTED, TaskState.WORKING)


@asynccontextmanager
async def served_agent(agent: Agent, limits: Limits) -> AsyncIterator[str]:
    with served(agent.app(limits=limits)) as url:
        yield url
