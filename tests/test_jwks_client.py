"""JwksClient against a key set served on loopback: caching, rotation, bad documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.keys import JwksClient, JwksError
from live_server import serve_app


def public_jwk(kid: str, use: str | None = "sig") -> tuple[Any, dict[str, Any]]:
    private = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    jwk["kid"] = kid
    if use is not None:
        jwk["use"] = use
    return private, jwk


class Issuer:
    """A key set served over HTTP whose contents the test changes; counts the fetches."""

    def __init__(self) -> None:
        self.document: Any = {"keys": []}
        self.fetches = 0

    async def jwks(self, request: Request) -> Response:
        self.fetches += 1
        if isinstance(self.document, Response):
            return self.document
        return JSONResponse(self.document)


@pytest.fixture
def issuer() -> Iterator[tuple[Issuer, str]]:
    served = Issuer()
    app = Starlette(routes=[Route("/jwks.json", served.jwks)])
    with serve_app(app) as url:
        yield served, f"{url}/jwks.json"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_key_is_found_by_id_and_verifies_its_tokens(issuer: tuple[Issuer, str]) -> None:
    served, url = issuer
    private, jwk = public_jwk("k1")
    served.document = {"keys": [jwk, public_jwk("k2")[1]]}
    token = jwt.encode({"sub": "ada"}, private, algorithm="ES256", headers={"kid": "k1"})
    key = await JwksClient(url).key("k1")
    assert jwt.decode(token, key, algorithms=["ES256"]) == {"sub": "ada"}


async def test_the_set_is_fetched_once_while_fresh(issuer: tuple[Issuer, str]) -> None:
    served, url = issuer
    served.document = {"keys": [public_jwk("k1")[1]]}
    clock = Clock()
    client = JwksClient(url, max_age=300, clock=clock)
    for _ in range(5):
        await client.key("k1")
    assert served.fetches == 1
    clock.now += 301
    await client.key("k1")
    assert served.fetches == 2


async def test_an_unknown_key_id_refetches_once_then_is_rate_limited(
    issuer: tuple[Issuer, str],
) -> None:
    served, url = issuer
    served.document = {"keys": [public_jwk("old")[1]]}
    clock = Clock()
    client = JwksClient(url, min_refresh_interval=30, clock=clock)
    await client.key("old")
    clock.now += 31
    served.document = {"keys": [public_jwk("old")[1], public_jwk("new")[1]]}  # rotated
    assert (await client.key("new")).key_id == "new"
    assert served.fetches == 2
    for _ in range(3):  # made-up ids do not make every call fetch again
        with pytest.raises(JwksError, match="'forged'"):
            await client.key("forged")
    assert served.fetches == 2


async def test_no_key_id_picks_the_only_key_and_refuses_to_guess(
    issuer: tuple[Issuer, str],
) -> None:
    served, url = issuer
    served.document = {"keys": [public_jwk("only")[1]]}
    assert (await JwksClient(url).key(None)).key_id == "only"
    served.document = {"keys": [public_jwk("a")[1], public_jwk("b")[1]]}
    with pytest.raises(JwksError, match="several"):
        await JwksClient(url).key(None)


async def test_encryption_keys_are_not_signing_keys(issuer: tuple[Issuer, str]) -> None:
    served, url = issuer
    served.document = {"keys": [public_jwk("enc", use="enc")[1], public_jwk("sig", use=None)[1]]}
    client = JwksClient(url)
    assert (await client.key("sig")).key_id == "sig"
    with pytest.raises(JwksError):
        await client.key("enc")


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"keys": "none"},
        {"keys": []},
        {"keys": [{"kty": "nonsense"}]},
        Response("<html>", media_type="text/html"),
        Response("gone", status_code=404),
    ],
    ids=["array", "keys-not-a-list", "empty", "unusable-key", "not-json", "http-404"],
)
async def test_a_bad_key_set_is_a_clear_error(issuer: tuple[Issuer, str], document: Any) -> None:
    served, url = issuer
    served.document = document
    with pytest.raises(JwksError):
        await JwksClient(url).key("k1")


async def test_an_unreachable_key_set_is_a_clear_error() -> None:
    with pytest.raises(JwksError, match="cannot fetch"):
        await JwksClient("http://127.0.0.1:9/jwks.json", timeout=1).key("k1")
