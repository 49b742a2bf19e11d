"""open_bus: the event bus a URL names (`memory`, `redis://…`), found among registered ones."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from accord.runtime.bus import EventBus, InProcessEventBus

MEMORY = "memory"
DEFAULT_BUS_URL = MEMORY


BusOpener = Callable[[str], EventBus]
"""Makes a bus (not yet started) from its URL."""

_BUSES: dict[str, BusOpener] = {}


def register_bus(scheme: str, opener: BusOpener) -> None:
    """Open URLs of `scheme` with `opener`: how a new bus makes itself known to `--bus`."""
    _BUSES[scheme] = opener


def open_bus(url: str) -> EventBus:
    """`memory` (this process only), `redis://host:port/db` / `rediss://…` (shared), or
    `local:///PATH` (the workers of one machine, through the hub at that Unix socket, as
    `accord serve --workers` runs them), or a URL of a scheme registered with `register_bus`.

    A `stream=NAME` query parameter picks the Redis stream (default `accord:events`), so
    several deployments can share one Redis.
    """
    opener = _BUSES.get(MEMORY if url in ("", MEMORY) else url.partition("://")[0])
    if opener is None:
        known = ", ".join(f"{name}://" for name in sorted(_BUSES) if name != MEMORY)
        raise ValueError(f"unknown bus {url!r}: use {MEMORY!r} or {known}...")
    return opener(url)


def _redis(url: str) -> EventBus:
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


def _socket(url: str) -> EventBus:
    from accord.runtime.socket_bus import SocketEventBus

    path = urlsplit(url).path
    if not path:
        raise ValueError(f"{url!r} names no socket: use local:///PATH/TO/HUB.sock")
    return SocketEventBus(path)


register_bus(MEMORY, lambda url: InProcessEventBus())
register_bus("local", _socket)
for _scheme in ("redis", "rediss", "unix"):
    register_bus(_scheme, _redis)
