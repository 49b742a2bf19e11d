"""`accord serve`'s choices it must not make silently: a store an ASGI app cannot take, and a
key store made on disk only once something is signed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from accord.cli.errors import BadArgument
from accord.cli.serve import ServeSettings, serve
from accord.cli.signing_options import open_keys
from accord.cli.storage import StoreSettings
from accord.samples import echo
from served_process import accord_serve


@pytest.mark.parametrize(
    "settings",
    [
        ServeSettings("127.0.0.1", 0, storage=StoreSettings(url="memory")),
        ServeSettings("127.0.0.1", 0, bus_url="redis://127.0.0.1:6379/0"),
    ],
)
def test_an_asgi_app_given_a_store_or_bus_is_refused_not_served_without_it(
    settings: ServeSettings,
) -> None:
    with pytest.raises(BadArgument, match="--store and --bus serve an accord"):
        serve(echo.message_agent.app(), settings)


def test_the_key_store_is_made_when_something_is_first_signed(tmp_path: Path) -> None:
    directory = tmp_path / ".accord" / "keys"
    keys = open_keys(directory)

    assert not directory.exists()
    assert keys.jwks() == {"keys": []}
    signing = keys.active()
    assert directory.is_dir() and keys.list_keys()[0].kid == signing.kid
    assert open_keys(directory).active().kid == signing.kid  # made once, then kept


@pytest.mark.processes
def test_serve_signs_its_card_with_the_key_it_makes_then(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    serving = ("accord.samples.echo:agent", "--store", "memory", "--keys", str(keys))
    with accord_serve(*serving, cwd=tmp_path) as served:
        card = httpx.get(served.url + "/.well-known/agent-card.json").json()
        jwks = httpx.get(served.url + "/.well-known/jwks.json").json()

    assert [key["kid"] for key in jwks["keys"]] == [p.stem for p in keys.glob("*.pem")]
    assert card["signatures"]
