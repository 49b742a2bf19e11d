"""AllowedHosts: which Host headers a server answers, and the 400 for the others."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from accord.web.allowed_hosts import AllowedHosts

LOCAL = AllowedHosts.loopback(8000, ".example.com", "agent.io")


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost:8000", True),
        ("LOCALHOST.:8000", True),
        ("[::1]:8000", True),
        ("127.0.0.1:8001", False),  # another port of this machine
        ("127.0.0.1", False),
        ("[::1]", False),
        ("x.example.com", True),
        ("example.com:1", True),
        ("evilexample.com", False),
        ("agent.io:5", True),
        ("evil.com", False),
        ("evil.com@127.0.0.1:8000", False),
        ("127.0.0.1:8000/x", False),
        ("1.2.3.4:99999", False),
        ("", False),
        ("a b", False),
    ],
)
def test_allows_only_the_names_given(host: str, allowed: bool) -> None:
    assert LOCAL.allows(host) is allowed


def test_star_allows_any_host_but_not_garbage() -> None:
    hosts = AllowedHosts(["*"])
    assert hosts.any
    assert hosts.allows("anything.example:1")
    assert not hosts.allows("")


def test_a_malformed_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="not a host name"):
        AllowedHosts(["bad host"])


@given(
    st.lists(
        st.sampled_from(["127.0.0.1:8000", "x.example.com", "evil.com", "agent.io:5", ""])
        | st.text(max_size=20),
        max_size=600,
    )
)
def test_a_verdict_remembered_is_the_one_judged_afresh(hosts: list[str]) -> None:
    remembering = AllowedHosts(LOCAL.patterns)
    for host in hosts:  # more names than it remembers, some of them again and again
        assert remembering.allows(host) is AllowedHosts(LOCAL.patterns).allows(host)


@given(st.text(max_size=80))
def test_no_header_raises(host: str) -> None:
    LOCAL.allows(host)


async def test_the_check_answers_400_to_another_host() -> None:
    async def hello(request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = AllowedHosts.loopback(8000).check(Starlette(routes=[Route("/", hello)]))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        assert (await client.get("/")).text == "hello"
        refused = await client.get("/", headers={"Host": "rebound.example:8000"})
    assert refused.status_code == 400
    assert "Host" in refused.text
