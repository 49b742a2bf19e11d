"""`accord serve`'s options for signing and webhooks: the key store, the push allowlist."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accord.cli.errors import BadArgument
from accord.keys import KeyStore, KeyStoreError

KeysDirOption = Annotated[
    Path,
    typer.Option(
        "--keys",
        metavar="DIR",
        envvar="ACCORD_KEYS",
        help="The key store signing cards and push notifications (an ES256 key is made if"
        " it has none).",
    ),
]
PushAllowOption = Annotated[
    list[str] | None,
    typer.Option(
        "--push-allow",
        metavar="ADDRESS",
        help="Let webhooks reach this address or CIDR network, though it is loopback, private"
        " or link-local (repeatable; for development and tests).",
        show_default=False,
    ),
]


def open_keys(keys_dir: Path) -> KeyStore:
    """The key store in `keys_dir` (`--keys`); a key is made when it has none and the server
    first signs something (no directory is made before)."""
    try:
        return KeyStore.open(keys_dir, on_first_use=True)
    except KeyStoreError as exc:
        raise BadArgument(f"--keys: {exc}") from None
