"""`accord serve` with TLS, client certificates and limits, in a real process; the CLI calls it
with a client certificate over HTTPS and gRPC."""

from __future__ import annotations

from pathlib import Path

import pytest
import trustme
from typer.testing import CliRunner

from accord.cli.main import app
from served_process import accord_serve, free_port

AGENT = """
import accord
from accord.auth import MutualTls, Security


@accord.agent(security=Security(MutualTls()))
def teller(context):
    return f"Hello {context.principal.id}"
"""


@pytest.mark.processes
def test_serve_with_mutual_tls_and_limits(tmp_path: Path) -> None:
    ca = trustme.CA()
    ca.cert_pem.write_to_path(tmp_path / "ca.pem")
    server = ca.issue_cert("127.0.0.1")
    server.cert_chain_pems[0].write_to_path(tmp_path / "server.pem")
    server.private_key_pem.write_to_path(tmp_path / "server.key")
    alice = ca.issue_cert("alice@example.com", common_name="alice")
    alice.cert_chain_pems[0].write_to_path(tmp_path / "alice.pem")
    alice.private_key_pem.write_to_path(tmp_path / "alice.key")
    (tmp_path / "bank.py").write_text(AGENT)
    files = {name: str(tmp_path / name) for name in ("ca.pem", "alice.pem", "alice.key")}
    options = (
        "--tls-cert", str(tmp_path / "server.pem"), "--tls-key", str(tmp_path / "server.key"),
        "--tls-client-ca", files["ca.pem"], "--grpc-port", str(free_port()),
        "--store", "memory", "--rate-limit", "100", "--request-timeout", "30s",
    )  # fmt: skip
    with accord_serve("bank:teller", *options, cwd=tmp_path) as served:
        assert served.url.startswith("https://")
        runner = CliRunner()
        certificate = ["--cert", files["alice.pem"], "--key", files["alice.key"]]
        for transport in ("JSONRPC", "GRPC"):
            result = runner.invoke(
                app,
                [*certificate, "--ca", files["ca.pem"], "send", "--transport", transport,
                 served.url, "hi"],
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            assert "Hello alice" in result.output
        refused = runner.invoke(app, ["--ca", files["ca.pem"], "send", served.url, "hi"])
    assert refused.exit_code == 6  # the credentials the agent asks for were not given
    assert "a client certificate (mutual TLS)" in refused.output
