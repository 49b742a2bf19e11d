"""The TLS of a client's credentials (CA bundle, client certificate) is used or refused, never
silently dropped: a transport given to the client brings its own TLS, so the two cannot meet."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trustme

import accord
from accord import RequestContext
from accord.auth import MutualTls, Security
from accord.client import Client, ClientCertificate, Credentials
from accord.server.tls import TlsFiles
from rpc import served


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"hello {context.principal.id}"


@dataclass(frozen=True)
class Pki:
    ca: str
    alice: str  # her key and certificate chain, one PEM file
    server: TlsFiles


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    where: Path = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(where / "ca.pem")
    server = ca.issue_cert("127.0.0.1")
    server.private_key_and_cert_chain_pem.write_to_path(where / "server.pem")
    server.private_key_pem.write_to_path(where / "server.key")
    alice = ca.issue_cert("alice@example.com", common_name="alice")
    alice.private_key_and_cert_chain_pem.write_to_path(where / "alice.pem")
    files = TlsFiles(str(where / "server.pem"), str(where / "server.key"), str(where / "ca.pem"))
    return Pki(str(where / "ca.pem"), str(where / "alice.pem"), files)


@pytest.fixture(scope="module")
def agent_url(pki: Pki) -> Iterator[str]:
    """An agent on HTTPS by the test CA, answering only callers with a certificate it issued."""
    agent = accord.Agent(whoami.executor, name="Guarded", security=Security(MutualTls()))
    with served(agent.app(), **pki.server.uvicorn_options()) as url:
        yield url


def _tls_credentials(pki: Pki) -> dict[str, Credentials]:
    return {
        "ca bundle": Credentials(ca=pki.ca),
        "client certificate": Credentials(ClientCertificate(pki.alice, ca=pki.ca)),
    }


async def test_the_credentials_tls_reaches_the_agent(agent_url: str, pki: Pki) -> None:
    async with Client(agent_url, credentials=_tls_credentials(pki)["client certificate"]) as c:
        assert (await c.send("hi")).text == "hello alice"


@pytest.mark.parametrize("which", ["ca bundle", "client certificate"])
async def test_credentials_with_tls_and_a_transport_of_ones_own_are_refused(
    agent_url: str, pki: Pki, which: str
) -> None:
    # The transport would connect without the CA bundle or the certificate: the call must not
    # go out (and fail, or reach the agent as someone else) as if they had been applied.
    credentials = _tls_credentials(pki)[which]
    with pytest.raises(ValueError, match="CA bundle and client certificate cannot apply"):
        async with Client(
            agent_url, credentials=credentials, http_transport=httpx.AsyncHTTPTransport()
        ) as client:
            await client.send("hi")


async def test_a_transport_of_ones_own_brings_its_own_tls(agent_url: str, pki: Pki) -> None:
    context = ssl.create_default_context(cafile=pki.ca)
    context.load_cert_chain(pki.alice)
    transport = httpx.AsyncHTTPTransport(verify=context)
    async with Client(agent_url, http_transport=transport) as client:
        assert (await client.send("hi")).text == "hello alice"
