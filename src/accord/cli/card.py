"""`accord card`: show an agent's card (the default) or verify its signatures."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import httpx
import typer
from typer.core import TyperGroup

from accord.cli.errors import reports_errors
from accord.client.card_resolver import check_signature, fetch_card_document


class ShowByDefault(TyperGroup):
    """A group whose first argument, when it names no subcommand, goes to `show`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


card_app = typer.Typer(
    cls=ShowByDefault,
    help="Show an agent's card, or check its signature.\n\naccord card URL shows it (card"
    " show), accord card verify URL checks it.",
    no_args_is_help=True,
    add_completion=False,
)


@card_app.command("verify")
@reports_errors
def verify(
    url: Annotated[str, typer.Argument(metavar="URL", help="The agent's base URL or card URL.")],
    jwks: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="Trust the keys published at this URL [default: the jku the card's signature"
            " names, on the card's own origin; else the JWKS beside the card].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check that the agent's card carries a valid signature, and say by which key."""
    source, kid = asyncio.run(_verify(url, jwks))
    typer.echo(f"{source}: signature valid (key {kid})")


async def _verify(url: str, jwks: str | None) -> tuple[str, str]:
    # Here, not above: jwt and cryptography would cost every command beside `card` ~0.1 s.
    from accord.client.card_keys import card_jwks_url
    from accord.keys import JwksClient

    async with httpx.AsyncClient(timeout=10.0) as http:
        source, document = await fetch_card_document(http, url)
        keys = JwksClient(jwks or card_jwks_url(document, source), http=http)
        return source, await check_signature(document, source, keys)
