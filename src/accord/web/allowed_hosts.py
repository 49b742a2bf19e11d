"""AllowedHosts: the `Host` names a server answers to, and the ASGI check that enforces them."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_REMEMBERED = 256
"""How many Host values an AllowedHosts keeps its verdict on."""
REFUSED = "This server does not answer to the Host this request names."


class AllowedHosts:
    """Which `Host` header values a server accepts.

    A pattern is a host name or address (`agent.example.com`, `10.0.0.5`, `[::1]`), a domain
    with its subdomains (`.example.com`), or `*` (any host); with `:PORT` it matches only that
    port (`127.0.0.1:8000`), without it any port. Names compare without case and without a
    trailing dot. A header that is not a host with an optional port never matches.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self._any = "*" in self.patterns
        self._rules = [_split(pattern, strict=True) for pattern in self.patterns if pattern != "*"]
        # The verdict on each Host value seen lately: clients send the same few, and reading
        # one (a regular expression, then the rules) costs 1.5% of a simple request.
        self._verdicts: dict[str, bool] = {}

    @classmethod
    def loopback(cls, port: int | None = None, *extra: str) -> AllowedHosts:
        """The loopback names (`127.0.0.1`, `localhost`, `[::1]`), at `port` if given; `extra`."""
        suffix = f":{port}" if port is not None else ""
        return cls([*(name + suffix for name in LOOPBACK_NAMES), *extra])

    @classmethod
    def serving(cls, host: str, port: int) -> AllowedHosts:
        """The names a server listening on `host:port` is called by without being told more:
        the loopback names at `port`, and `host` itself at `port` when it is one name or
        address (not every interface, `0.0.0.0` or `::`, whose names the server cannot know)."""
        bound = host.strip("[]")
        if not bound or _is_unspecified(bound) or bound in ("localhost", "127.0.0.1", "::1"):
            return cls.loopback(port)
        name = f"[{bound}]" if ":" in bound else bound
        return cls.loopback(port, f"{name}:{port}")

    @property
    def any(self) -> bool:
        """Whether every host is accepted (`*`)."""
        return self._any

    def allows(self, host_header: str) -> bool:
        """Whether a request with this `Host` value is one to answer."""
        verdict = self._verdicts.get(host_header)
        if verdict is None:
            if len(self._verdicts) >= _REMEMBERED:  # many names: a client making them up
                self._verdicts.clear()
            verdict = self._verdicts[host_header] = self._judged(host_header)
        return verdict

    def _judged(self, host_header: str) -> bool:
        parsed = _split(host_header, strict=False)
        if parsed is None:
            return False
        if self._any:
            return True
        name, port = parsed
        for rule in self._rules:
            assert rule is not None
            rule_name, rule_port = rule
            if rule_port is not None and rule_port != port:
                continue
            if rule_name.startswith("."):
                if name == rule_name[1:] or name.endswith(rule_name):
                    return True
            elif name == rule_name:
                return True
        return False

    def check(self, app: ASGIApp, refusal: str = REFUSED) -> ASGIApp:
        """`app` behind this check: a request whose `Host` is not allowed gets 400, with the
        text `refusal`."""
        return HostCheck(app, self, refusal)

    def __repr__(self) -> str:
        return f"AllowedHosts({list(self.patterns)!r})"


class HostCheck:
    """ASGI middleware: HTTP and WebSocket requests with a `Host` not in `hosts` get 400,
    but for the paths `exempt` names (health probes, which name no URL of the app's)."""

    def __init__(
        self,
        app: ASGIApp,
        hosts: AllowedHosts,
        refusal: str = REFUSED,
        exempt: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.refusal = refusal
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] in ("http", "websocket")
            and not self.hosts.allows(_host_of(scope))
            and scope["path"] not in self.exempt
        ):
            response = PlainTextResponse(self.refusal, status_code=400)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _host_of(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"host":
            return str(value.decode("latin-1"))
    return ""


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:  # a name
        return False


_HOST = re.compile(r"(\[[0-9a-f:.]+\]|\.?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::([0-9]{1,5}))?")


def _split(value: str, *, strict: bool) -> tuple[str, int | None] | None:
    """`(name, port)` of `host[:port]` (an IPv6 address in brackets), lowercased; None when
    `value` is not one (ValueError instead when `strict`: a pattern must be well formed)."""
    match = _HOST.fullmatch(value.strip().lower())
    if match is None or (match[2] is not None and int(match[2]) > 65535):
        if strict:
            raise ValueError(f"{value!r} is not a host name with an optional :PORT")
        return None
    name = match[1] if match[1].startswith("[") else match[1].rstrip(".")
    return name, int(match[2]) if match[2] is not None else None
