"""`accord serve`'s options for signing and webhooks: the key store, the push allowlist."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from accord.cli.errors import BadArgument
from accord.keys import DEFAULT_KEYS_DIR, KeyStore, KeyStoreError
from accord.web.webhook_guard import parse_network

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


@dataclass(frozen=True, slots=True)
class TrustSettings:
    """The key store's directory and the addresses webhooks may reach despite the guard."""

    keys_dir: Path = DEFAULT_KEYS_DIR
    push_allow: tuple[str, ...] = ()

    def check(self) -> None:
        """BadArgument for an allowlist entry that is no address or network."""
        try:
            for entry in self.push_allow:
                parse_network(entry)
        except ValueError as exc:
            raise BadArgument(f"--push-allow: {exc}") from None

    def app_options(self) -> dict[str, Any]:
        """The `create_app` options: the key store (opened, a key made if none) and the
        allowlist."""
        self.check()
        try:
            keys = KeyStore.open(self.keys_dir)
        except KeyStoreError as exc:
            raise BadArgument(f"--keys: {exc}") from None
        return {"keys": keys, "push_allow": self.push_allow}
