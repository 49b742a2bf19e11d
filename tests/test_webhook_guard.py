"""The webhook guard: only public http(s) destinations, checked as resolved, unless allowed."""

from __future__ import annotations

import pytest

from accord.errors import InvalidParams
from accord.types import PushNotificationAuthenticationInfo, PushNotificationConfig
from accord.web.webhook_guard import WebhookGuard, WebhookRefused, parse_network

REFUSED = [
    ("http://127.0.0.1/hook", "loopback"),
    ("http://127.1/hook", "loopback"),
    ("http://2130706433/hook", "loopback"),  # decimal
    ("http://0x7f.0.0.1/hook", "loopback"),  # hex
    ("http://0x7f000001/hook", "loopback"),
    ("http://017700000001/hook", "loopback"),  # octal
    ("http://localhost:8080/hook", "loopback"),  # a name resolving to 127.0.0.1
    ("http://[::1]/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),  # IPv4-mapped IPv6
    ("http://[::ffff:169.254.169.254]/", "metadata"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://[fd00:ec2::254]/latest/meta-data/", "metadata"),
    ("http://100.100.100.200/", "metadata"),
    ("http://10.1.2.3/hook", "private"),
    ("http://172.16.0.1/hook", "private"),
    ("http://192.168.1.1/hook", "private"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://169.254.1.1/hook", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://[fc00::1]/hook", "unique-local"),
    ("http://[fd12:3456::1]/hook", "unique-local"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://[ff02::1]/hook", "multicast"),
    ("http://0.0.0.0/hook", "unspecified"),
    ("http://[::]/hook", "unspecified"),
    ("http://240.0.0.1/hook", "reserved"),
    ("http://100.64.0.1/hook", "not a public address"),  # carrier-grade NAT
    ("http://[64:ff9b::7f00:1]/hook", "loopback"),  # NAT64 of 127.0.0.1
    ("http://[2002:7f00:1::]/hook", "loopback"),  # 6to4 of 127.0.0.1
    ("ftp://hooks.example/", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("gopher://127.0.0.1:6379/", "scheme"),
    ("http://[::1", "does not parse"),
    ("http://0177.0.0.1/hook", "parse"),  # octal with dots: refused before resolving
    ("/relative/hook", "scheme"),
    ("http:///no-host", "no host"),
    ("https://hooks.example/" + "a" * 2100, "longer than"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
async def test_refused_destinations(url: str, reason: str) -> None:
    with pytest.raises(WebhookRefused) as refused:
        await WebhookGuard().check(url)
    assert reason in refused.value.reason
    assert refused.value.lasting


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://93.184.215.14/hook", "93.184.215.14"),
        ("https://[2606:4700::6810:84e5]:8443/hook", "2606:4700::6810:84e5"),
        ("http://[::ffff:93.184.215.14]/hook", "::ffff:93.184.215.14"),
    ],
)
async def test_public_addresses_pass_and_are_pinned(url: str, address: str) -> None:
    destination = await WebhookGuard().check(url)
    assert destination.address == address
    assert destination.request_url().host == address
    assert destination.host_header() == url.split("/")[2]


async def test_the_allowlist_opens_chosen_addresses_and_networks() -> None:
    guard = WebhookGuard(["127.0.0.1", "192.168.0.0/16", "::1"])
    assert (await guard.check("http://127.0.0.1:9/")).address == "127.0.0.1"
    assert (await guard.check("http://[::ffff:127.0.0.1]:9/")).address == "::ffff:127.0.0.1"
    assert (await guard.check("http://192.168.7.7/")).address == "192.168.7.7"
    assert (await guard.check("http://[::1]/")).address == "::1"
    for still_refused in ("http://127.0.0.2/", "http://10.0.0.1/", "http://169.254.169.254/"):
        with pytest.raises(WebhookRefused):
            await guard.check(still_refused)


def test_a_bad_allowlist_entry_names_itself() -> None:
    with pytest.raises(ValueError, match="'nonsense'"):
        parse_network("nonsense")


async def test_a_name_resolving_to_any_refused_address_is_refused() -> None:
    async def split_horizon(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.0.0.5"]

    with pytest.raises(WebhookRefused, match=r"resolves to 10\.0\.0\.5, which is a private"):
        await WebhookGuard(resolver=split_horizon).check("https://hooks.example/")


async def test_a_name_that_does_not_resolve_now_is_checked_again_at_send_time() -> None:
    async def nxdomain(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    guard = WebhookGuard(resolver=nxdomain)
    with pytest.raises(WebhookRefused) as refused:
        await guard.check("https://hooks.example/")
    assert not refused.value.lasting
    await guard.check_config(PushNotificationConfig(url="https://hooks.example/"))


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (PushNotificationConfig(url="http://[::1", token="t"), "url"),
        (PushNotificationConfig(url="http://169.254.169.254/", token="t"), "url"),
        (PushNotificationConfig(url="http://93.184.215.14/", token="tök"), "token"),
        (PushNotificationConfig(url="http://93.184.215.14/", token="a\r\nX-Evil: 1"), "token"),
        (PushNotificationConfig(url="http://93.184.215.14/", token="x" * 5000), "token"),
        (
            PushNotificationConfig(
                url="http://93.184.215.14/",
                authentication=PushNotificationAuthenticationInfo(
                    schemes=["Bearer"], credentials="sécret"
                ),
            ),
            "authentication.credentials",
        ),
    ],
)
async def test_a_config_no_webhook_may_have_is_invalid_params_naming_the_field(
    config: PushNotificationConfig, field: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        await WebhookGuard().check_config(config)
    assert f"`{field}`" in refused.value.message
    assert refused.value.data == [{"field": field, "message": refused.value.message}]
