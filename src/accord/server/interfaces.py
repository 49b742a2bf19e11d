"""The interfaces a server answers (binding, protocol version, URL), as its cards list them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from accord.types import AgentCard, AgentInterface, TransportProtocol

JSONRPC = TransportProtocol.JSONRPC.value
HTTP_JSON = TransportProtocol.HTTP_JSON.value


@dataclass(frozen=True, slots=True)
class ServedInterface:
    """A binding answering one protocol version (`Major.Minor`) at `path` below the base URL,
    or, with a `port`, at `host:port` of the base URL's host (gRPC's own port; as
    `https://host:port` when that port speaks TLS)."""

    binding: str
    version: str
    path: str = ""
    port: int | None = None
    tls: bool = False

    def at(self, base_url: str) -> AgentInterface:
        """This interface of the server whose base URL is `base_url`.

        An HTTP+JSON URL never ends in `/`: clients append the route (`/message:send`) to it.
        """
        path = self.path.strip("/")
        url = base_url.rstrip("/") + "/" + path if path else base_url
        if self.binding == HTTP_JSON:
            url = url.rstrip("/")
        if self.port is not None:
            host = urlsplit(base_url).hostname or "localhost"
            url = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
            if self.tls:
                url = "https://" + url
        return AgentInterface(url=url, transport=self.binding, protocol_version=self.version)


class ServedInterfaces:
    """Every binding and protocol version an app answers, and where; its cards list them.

    `create_app` adds each binding it mounts; `card` then dresses an agent's card with them,
    at `public_url` or else the URL a request came in on.
    """

    def __init__(self, public_url: str | None = None) -> None:
        self.public_url = public_url
        self._served: list[ServedInterface] = []

    def add(
        self,
        binding: str,
        versions: Iterable[str],
        path: str = "",
        *,
        port: int | None = None,
        tls: bool = False,
    ) -> None:
        """Declare that `binding` answers `versions` at `path` (relative to the base URL), or
        on `port` of the base URL's host.

        Of several minor versions of one major version only the newest is listed, as the 1.0
        spec asks (0.1 and 0.2 clients read the card's `url`, which the 0.3 interface fills).
        """
        newest: dict[int, tuple[int, int]] = {}
        for version in versions:
            number = _number(version)
            newest[number[0]] = max(newest.get(number[0], number), number)
        for major, minor in newest.values():
            served = ServedInterface(str(binding), f"{major}.{minor}", path, port, tls)
            if served not in self._served:
                self._served.append(served)

    def served_interfaces(self, base_url: str) -> list[AgentInterface]:
        """Every interface at `base_url`, preferred first: the newest version first, and within
        a version JSON-RPC first (the one binding clients of every version speak), then the
        others in the order they were added."""

        def rank(served: ServedInterface) -> tuple[int, int, bool]:
            major, minor = _number(served.version)
            return -major, -minor, served.binding != JSONRPC

        ranked = sorted(self._served, key=rank)  # stable: ties keep the order they were added
        return [served.at(base_url) for served in ranked]

    def card(self, card: AgentCard, request_base_url: str) -> AgentCard:
        """`card` as this server serves it to a request that came in at `request_base_url`.

        1.0's `supportedInterfaces` lists every interface; the 0.3 members describe the 0.x
        ones: `url` and `preferredTransport` the preferred one, `additionalInterfaces` all.
        """
        base_url = self.public_url or request_base_url
        interfaces = self.served_interfaces(base_url)
        legacy = [
            AgentInterface(url=i.url, transport=i.transport)
            for i in interfaces
            if i.protocol_version is not None and _number(i.protocol_version)[0] == 0
        ]
        main = legacy[0] if legacy else AgentInterface(url=base_url, transport=JSONRPC)
        return card.model_copy(
            update={
                "url": main.url,
                "preferred_transport": main.transport,
                "additional_interfaces": legacy or None,
                "supported_interfaces": interfaces or None,
            }
        )


def _number(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)
