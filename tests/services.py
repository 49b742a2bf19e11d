"""Where the test suite finds PostgreSQL and Redis, and what it does when they are missing."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

PG_URL = os.environ.get("ACCORD_TEST_PG_URL", "postgresql://127.0.0.1:5432/test")
REDIS_URL = os.environ.get("ACCORD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def services_required() -> bool:
    """Under ACCORD_REQUIRE_SERVICES=1 (as in CI) a missing service fails instead of skipping."""
    return os.environ.get("ACCORD_REQUIRE_SERVICES") == "1"


def unavailable(service: str, reason: object) -> None:
    """Skip the calling test, or fail it when services are required."""
    message = f"{service} is not reachable ({reason})"
    if services_required():
        pytest.fail(message + " and ACCORD_REQUIRE_SERVICES=1")
    pytest.skip(message)


async def redis_url() -> str:
    """The Redis URL for tests, once it answers PING."""
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (RedisError, OSError) as exc:
        unavailable("Redis", exc)
    finally:
        await client.aclose()
    return REDIS_URL


@pytest.fixture(name="redis_bus")
async def redis_bus_fixture() -> AsyncIterator[str]:
    """A Redis bus URL on a stream of the test's own, deleted afterwards."""
    from redis.asyncio import Redis

    from accord.types import new_id

    url = await redis_url()
    stream = f"accord:test:{new_id()}"
    yield f"{url}{'&' if '?' in url else '?'}stream={stream}"
    redis = Redis.from_url(url)
    try:
        await redis.delete(stream)
    finally:
        await redis.aclose()
