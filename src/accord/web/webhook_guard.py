"""WebhookGuard: which webhook URLs the server may POST to (no loopback, private or metadata)."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

import httpx

from accord.errors import InvalidParams
from accord.types import PushNotificationConfig

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]

MAX_URL_LENGTH = 2048
MAX_HEADER_VALUE_LENGTH = 4096
SCHEMES = ("http", "https")
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (classic)
        "fd00:ec2::254",  # AWS over IPv6
    )
)
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HEADER_SAFE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
"""A header value that survives every HTTP stack: visible ASCII, inner spaces allowed."""


class WebhookRefused(Exception):
    """A webhook the guard will not send to; `reason` says why, for the client to read."""

    def __init__(self, reason: str, *, lasting: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lasting = lasting
        """False when it may pass later (the name did not resolve just now)."""


@dataclass(frozen=True, slots=True)
class Destination:
    """A checked webhook: its URL and the address it resolved to, which the POST must use."""

    url: httpx.URL
    address: str

    def request_url(self) -> httpx.URL:
        """The URL to connect to: the checked address in place of the name."""
        return self.url.copy_with(host=self.address)

    def host_header(self) -> str:
        return self.url.netloc.decode("ascii")


def refusal(address: IPAddress) -> str | None:
    """Why no webhook may reach `address`, or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner = refusal(embedded)
            return f"{inner} (inside the IPv6 address {address})" if inner else None
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for test, name in (
        (address.is_loopback, "a loopback address"),
        (address.is_unspecified, "the unspecified address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address in _UNIQUE_LOCAL, "a unique-local address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    ):
        if test:
            return name
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for `host` (which also reads IPv4 spelled in
    decimal, octal or hex, as connecting would)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class WebhookGuard:
    """Checks webhook URLs when a config is set and again before each POST.

    Only http and https; the host is resolved and every address it resolves to must be public
    (not loopback, private, link-local, unique-local, multicast, unspecified, reserved or a
    cloud metadata address, IPv4 inside IPv6 included) unless it is in `allow` (addresses or
    CIDR networks, for development and tests). The POST then goes to the address checked
    (`Destination`), so a name cannot resolve to another address in between.
    """

    def __init__(
        self,
        allow: Sequence[str] = (),
        *,
        resolver: Resolver = system_resolver,
        resolve_timeout: float = 5.0,
    ) -> None:
        self.allow: tuple[Network, ...] = tuple(parse_network(entry) for entry in allow)
        self._resolver = resolver
        self._resolve_timeout = resolve_timeout

    def parse(self, url: str) -> httpx.URL:
        """`url` parsed, if it is an absolute http(s) URL with a host; WebhookRefused if not."""
        if len(url) > MAX_URL_LENGTH:
            raise WebhookRefused(f"the URL is longer than {MAX_URL_LENGTH} characters")
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise WebhookRefused(f"the URL does not parse ({exc})") from None
        if parsed.scheme not in SCHEMES:
            raise WebhookRefused(f"the URL's scheme must be http or https, not {parsed.scheme!r}")
        if not parsed.host:
            raise WebhookRefused("the URL has no host")
        return parsed

    async def check(self, url: str) -> Destination:
        """Where a POST to `url` may go; WebhookRefused naming the reason if nowhere."""
        parsed = self.parse(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            async with asyncio.timeout(self._resolve_timeout):
                addresses = await self._resolver(parsed.host, port)
        except (OSError, TimeoutError, UnicodeError) as exc:
            reason = f"the host {parsed.host!r} does not resolve ({exc or 'timed out'})"
            raise WebhookRefused(reason, lasting=False) from None
        if not addresses:
            raise WebhookRefused(f"the host {parsed.host!r} does not resolve", lasting=False)
        for text in addresses:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            why = None if self._allowed(address) else refusal(address)
            if why is not None:
                shown = "" if text == parsed.host else f" resolves to {text}, which"
                raise WebhookRefused(f"the host {parsed.host!r}{shown} is {why}")
        return Destination(parsed, addresses[0])

    async def check_config(self, config: PushNotificationConfig) -> None:
        """InvalidParams naming the field of `config` that no webhook may have."""
        auth = config.authentication
        header_values = [("token", config.token)]
        if auth is not None:
            header_values.append(("authentication.credentials", auth.credentials))
            header_values.extend(("authentication.schemes", scheme) for scheme in auth.schemes)
        for field, value in header_values:
            if value is not None and not _header_safe(value):
                _refuse(field, "must be printable ASCII (it is sent in an HTTP header) of at most"
                        f" {MAX_HEADER_VALUE_LENGTH} characters")  # fmt: skip
        try:
            await self.check(config.url)
        except WebhookRefused as exc:
            if exc.lasting:  # a name that does not resolve now is checked again before each POST
                _refuse("url", f"is refused: {exc.reason}")

    def _allowed(self, address: IPAddress) -> bool:
        candidates: list[IPAddress] = [address]
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            candidates.append(address.ipv4_mapped)
        return any(
            candidate.version == network.version and candidate in network
            for candidate in candidates
            for network in self.allow
        )


def parse_network(entry: str) -> Network:
    """An allowlist entry (an address or a CIDR network); ValueError naming it if neither."""
    try:
        return ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{entry!r} is not an IP address or a CIDR network") from None


def _refuse(field: str, problem: str) -> NoReturn:
    message = f"push notification config `{field}` {problem}"
    raise InvalidParams(message, data=[{"field": field, "message": message}])


def _header_safe(value: str) -> bool:
    return len(value) <= MAX_HEADER_VALUE_LENGTH and _HEADER_SAFE.fullmatch(value) is not None
