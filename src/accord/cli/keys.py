"""`accord keys`: the key store the server signs cards and push notifications with."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TypeVar, cast

import typer

from accord.cli.errors import BadArgument, reports_errors
from accord.cli.storage import format_duration, parse_duration
from accord.keys.store import (
    ALGORITHMS,
    DEFAULT_GRACE,
    DEFAULT_KEYS_DIR,
    Algorithm,
    KeyInfo,
    KeyStore,
    KeyStoreError,
)

T = TypeVar("T")

keys_app = typer.Typer(
    help="Manage the agent's signing keys.\n\nThey sign its cards and push notifications.",
    no_args_is_help=True,
    add_completion=False,
)

KeysDir = Annotated[
    Path,
    typer.Option(
        "--dir",
        metavar="DIR",
        envvar="ACCORD_KEYS",
        help="The key store's directory (private keys, mode 0600).",
    ),
]
AlgorithmOption = Annotated[
    str | None,
    typer.Option("--alg", metavar="ALG", help=f"Signing algorithm: {' or '.join(ALGORITHMS)}."),
]


@keys_app.command("new")
@reports_errors
def new(directory: KeysDir = DEFAULT_KEYS_DIR, alg: AlgorithmOption = None) -> None:
    """Create the key store's first signing key (ES256 unless --alg says otherwise).

    A store that has one already (accord serve makes it) keeps it, and says which it is.
    """
    store = _store(directory)
    wanted = _algorithm(alg)
    active = _signing(_run(store.list_keys))
    if active is not None and wanted in (None, active.alg):
        typer.echo(f"{active.kid} {active.alg} (signing, made before) in {directory}")
        return
    info = _run(lambda: store.new(wanted or "ES256"))
    typer.echo(f"{info.kid} {info.alg} (signing) in {directory}")


@keys_app.command("list")
@reports_errors
def list_keys(directory: KeysDir = DEFAULT_KEYS_DIR) -> None:
    """List the keys: which one signs, and until when rotated-out ones stay published."""
    store = _store(directory)
    infos = _run(store.list_keys)
    if not infos:
        typer.echo(f"no keys in {directory} (accord keys new creates one)")
    active = _signing(infos)
    for info in infos:
        if info is active:
            state = "signing"
        elif info.published_until is not None:
            state = f"published until {_when(info.published_until)}"
        else:
            state = "published"
        typer.echo(f"{info.kid} {info.alg} created {_when(info.created)} {state}")


@keys_app.command("rotate")
@reports_errors
def rotate(
    directory: KeysDir = DEFAULT_KEYS_DIR,
    alg: AlgorithmOption = None,
    grace: Annotated[
        str,
        typer.Option(
            metavar="DURATION", help="Keep the old keys published this long (30m, 12h, 7d)."
        ),
    ] = format_duration(DEFAULT_GRACE),
) -> None:
    """Sign with a new key from now on; the old ones stay published for --grace."""
    duration = parse_duration("--grace", grace)
    if duration is None:
        raise BadArgument("--grace cannot be off: old keys must stop being published")
    store = _store(directory)
    info = _run(lambda: store.rotate(_algorithm(alg), grace=duration.total_seconds()))
    typer.echo(f"{info.kid} {info.alg} (signing) in {directory}")


def _signing(infos: list[KeyInfo]) -> KeyInfo | None:
    """The key that signs: the newest not rotated out."""
    return next((info for info in reversed(infos) if info.retired is None), None)


def _store(directory: Path) -> KeyStore:
    return _run(lambda: KeyStore(directory))


def _algorithm(alg: str | None) -> Algorithm | None:
    if alg is None:
        return None
    if alg.upper() not in ALGORITHMS:
        raise BadArgument(f"--alg must be one of {', '.join(ALGORITHMS)}, got {alg!r}")
    return cast(Algorithm, alg.upper())


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except KeyStoreError as exc:
        raise BadArgument(str(exc)) from None


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
