"""Mutual TLS with certificates made at test time: HTTPS and gRPC over TLS, the client
certificate verified by the handshake and mapped to the principal; none, none accepted."""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import accord
from accord import RequestContext
from accord.auth import MutualTls, Security
from accord.client import Client, ClientCertificate
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as stubs
from accord.server.tls import TlsFiles
from accord.types import Message
from rpc import served

CARD = "/.well-known/agent-card.json"


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"{context.principal.id}/{context.principal.scheme}"


@dataclass
class Pki:
    ca: trustme.CA
    server: TlsFiles
    client_file: str
    client: trustme.LeafCert
    stranger: trustme.LeafCert  # issued by another CA


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    where: Path = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    server.cert_chain_pems[0].write_to_path(where / "server.pem")
    for blob in server.cert_chain_pems[1:]:
        blob.write_to_path(where / "server.pem", append=True)
    server.private_key_pem.write_to_path(where / "server.key")
    ca.cert_pem.write_to_path(where / "ca.pem")
    files = TlsFiles(str(where / "server.pem"), str(where / "server.key"), str(where / "ca.pem"))
    client = ca.issue_cert("alice@example.com", common_name="alice")
    client.private_key_and_cert_chain_pem.write_to_path(where / "alice.pem")
    stranger = trustme.CA().issue_cert("mallory@example.com", common_name="mallory")
    return Pki(ca, files, str(where / "alice.pem"), client, stranger)


@pytest.fixture(scope="module")
def server(pki: Pki) -> Iterator[tuple[str, str]]:
    """An agent requiring a client certificate, on HTTPS and gRPC over TLS."""
    agent = accord.Agent(whoami.executor, name="Guarded", security=Security(MutualTls()))
    app = agent.app(grpc_port=0, tls=pki.server)
    with served(app, **pki.server.uvicorn_options()) as url:
        card = httpx.get(url + CARD, verify=_context(pki, None)).json()
        (grpc_url,) = {
            i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"
        }
        yield url, grpc_url


def _context(pki: Pki, client: trustme.LeafCert | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    pki.ca.configure_trust(context)
    if client is not None:
        client.configure_cert(context)
    return context


SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}
V1 = {"A2A-Version": "1.0"}


async def test_the_client_certificate_names_the_caller(pki: Pki, server: tuple[str, str]) -> None:
    url, _ = server
    async with httpx.AsyncClient(base_url=url, verify=_context(pki, pki.client)) as http:
        answer = await http.post("/", json=SEND, headers=V1)
        rest = await http.post("/message:send", json=SEND["params"], headers=V1)
    assert answer.json()["result"]["message"]["parts"][0]["text"] == "alice/mtls"
    assert rest.json()["message"]["parts"][0]["text"] == "alice/mtls"


async def test_without_a_certificate_only_the_card_is_served(
    pki: Pki, server: tuple[str, str]
) -> None:
    url, _ = server
    async with httpx.AsyncClient(base_url=url, verify=_context(pki, None)) as http:
        card = await http.get(CARD)
        refused = await http.post("/", json=SEND, headers=V1)
        rest = await http.post("/message:send", json=SEND["params"], headers=V1)
    assert card.status_code == 200
    assert card.json()["securitySchemes"]["mtls"] == {
        "type": "mutualTLS",
        "mtlsSecurityScheme": {},
    }
    assert refused.status_code == rest.status_code == 401
    assert refused.headers["www-authenticate"] == "MutualTLS"
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"


async def test_a_certificate_from_another_ca_fails_the_handshake(
    pki: Pki, server: tuple[str, str]
) -> None:
    url, _ = server
    async with httpx.AsyncClient(base_url=url, verify=_context(pki, pki.stranger)) as http:
        with pytest.raises(httpx.HTTPError):
            await http.post("/", json=SEND, headers=V1)


async def test_grpc_over_tls_maps_the_certificate_too(pki: Pki, server: tuple[str, str]) -> None:
    _, grpc_url = server
    assert grpc_url.startswith("https://")
    target = grpc_url.removeprefix("https://")
    ca = pki.ca.cert_pem.bytes()
    credentials = grpc.ssl_channel_credentials(
        root_certificates=ca,
        private_key=pki.client.private_key_pem.bytes(),
        certificate_chain=pki.client.cert_chain_pems[0].bytes(),
    )
    options = (("grpc.ssl_target_name_override", "localhost"),)
    request = pb.SendMessageRequest(
        message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
    )
    async with grpc.aio.secure_channel(target, credentials, options) as channel:
        reply = await stubs.A2AServiceStub(channel).SendMessage(request)
    assert reply.message.parts[0].text == "alice/mtls"
    anonymous = grpc.ssl_channel_credentials(root_certificates=ca)
    async with grpc.aio.secure_channel(target, anonymous, options) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stubs.A2AServiceStub(channel).SendMessage(request)
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE  # refused at the handshake


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_accords_client_presents_its_certificate(
    pki: Pki, server: tuple[str, str], transport: str
) -> None:
    url, _ = server
    certificate = ClientCertificate(pki.client_file, ca=pki.server.client_ca)
    async with Client(url, credentials=[certificate], transport=transport) as client:
        reply = await client.send("who am I?")
    assert isinstance(reply, Message) and reply.text == "alice/mtls"


def _nameless_certificate(pki: Pki, where: Path) -> ssl.SSLContext:
    """A client certificate of the test CA with an empty subject (its holder named in
    subjectAltName only), as a client TLS context presenting it."""
    ca_key = serialization.load_pem_private_key(pki.ca.private_key_pem.bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey)
    ca_cert = x509.load_pem_x509_certificate(pki.ca.cert_pem.bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.RFC822Name("nameless@example.com")]), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = where / "nameless.pem"
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        + certificate.public_bytes(serialization.Encoding.PEM)
    )
    context = _context(pki, None)
    context.load_cert_chain(pem)
    return context


async def test_a_certificate_with_an_empty_subject_is_refused_not_an_internal_error(
    pki: Pki, server: tuple[str, str], tmp_path: Path
) -> None:
    url, _ = server
    async with httpx.AsyncClient(base_url=url, verify=_nameless_certificate(pki, tmp_path)) as http:
        refused = await http.post("/", json=SEND, headers=V1)
        rest = await http.post("/message:send", json=SEND["params"], headers=V1)
    assert refused.status_code == rest.status_code == 401, refused.text
    assert "no subject" in refused.json()["error"]["message"]
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
