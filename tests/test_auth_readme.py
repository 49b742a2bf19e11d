"""The README's "Protect an agent" examples run as written: an API key, OpenID Connect tokens
from a real issuer, mutual TLS with certificates made here."""

from __future__ import annotations

import asyncio
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from accord.server.tls import TlsFiles
from doc_examples import blocks
from live_server import serve_app
from token_issuer import TokenIssuer, running_issuer

README = Path(__file__).resolve().parent.parent / "README.md"


def block_containing(marker: str) -> str:
    found = [b.text for b in blocks(README) if b.language == "python" and marker in b.text]
    assert len(found) == 1, f"expected one README block with {marker!r}"
    return found[0]


def run_block(source: str, tmp_path: Path, name: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return runpy.run_path(str(path), run_name=name)


@pytest.fixture
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


def printing() -> tuple[list[str], dict[str, Any]]:
    printed: list[str] = []
    return printed, {"print": lambda *a: printed.append(" ".join(map(str, a)))}


def test_api_key_and_oidc_agents_and_their_client(tmp_path: Path, issuer: TokenIssuer) -> None:
    vault = run_block(block_containing("def vault"), tmp_path, "vault")["vault"]
    source = block_containing("def ledger").replace(
        "https://login.example.com/.well-known/openid-configuration", issuer.discovery_url
    )
    ledger = run_block(source, tmp_path, "ledger")["ledger"]
    issuer.clients["my-client"] = "my-secret"
    printed, namespace = printing()
    exec(compile(block_containing("oidc_url: str"), "README client", "exec"), namespace)
    with serve_app(vault.app()) as url, serve_app(ledger.app()) as oidc_url:
        asyncio.run(namespace["call_both"](url, oidc_url))
    assert printed == ["Hello team-a", "my-client may read the ledger"]


def test_mutual_tls_agent_and_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ca = trustme.CA()
    ca.cert_pem.write_to_path("ca.pem")
    server = ca.issue_cert("127.0.0.1")
    server.private_key_and_cert_chain_pem.write_to_path("server.pem")
    alice = ca.issue_cert("alice@example.com", common_name="alice")
    alice.cert_chain_pems[0].write_to_path("alice.pem")
    alice.private_key_pem.write_to_path("alice.key")
    module = run_block(block_containing("def teller"), tmp_path, "bank")
    tls = TlsFiles("server.pem", "server.pem", "ca.pem")
    printed, namespace = printing()
    module["call"].__globals__["print"] = namespace["print"]
    with serve_app(module["teller"].app(), **tls.uvicorn_options()) as url:
        asyncio.run(module["call"](url))
    assert printed == ["Hello alice"]
