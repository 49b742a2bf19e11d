"""open_bus: the event bus a URL names (`memory`, or `redis://…` for several replicas)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from accord.runtime.bus import EventBus, InProcessEventBus

MEMORY = "memory"
DEFAULT_BUS_URL = MEMORY


def open_bus(url: str) -> EventBus:
    """`memory` (this process only) or `redis://host:port/db` / `rediss://…` (shared).

    A `stream=NAME` query parameter picks the Redis stream (default `accord:events`), so
    several deployments can share one Redis.
    """
    if url in ("", MEMORY):
        return InProcessEventBus()
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from accord.runtime.redis_bus import RedisEventBus
        except ImportError as exc:
            raise ValueError(
                f"the Redis bus needs the redis package: pip install 'accord[redis]' ({exc})"
            ) from None
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
        streams = [value for key, value in query if key == "stream"]
        rest = urlencode([(key, value) for key, value in query if key != "stream"])
        connection_url = urlunsplit(parts._replace(query=rest))
        if streams:
            return RedisEventBus(connection_url, stream=streams[-1])
        return RedisEventBus(connection_url)
    raise ValueError(f"unknown bus {url!r}: use 'memory' or a redis:// URL")
