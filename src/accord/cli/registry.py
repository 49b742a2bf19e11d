"""`accord registry`: serve a registry of agents, and add, remove, search and show its agents."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from accord.cli import exposure, serve_options
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.storage import display_url, format_duration, parse_duration
from accord.client.registry import FilterValue, RegistryClient

T = TypeVar("T")

registry_app = typer.Typer(
    help="Serve or search a registry.\n\nA registry keeps the cards of agents that curators add"
    " by URL; anyone may search it.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

REGISTRY_PORT = 8070
URL_VARIABLE = "ACCORD_REGISTRY"
TOKEN_VARIABLE = "ACCORD_REGISTRY_TOKEN"
STORE_VARIABLE = "ACCORD_REGISTRY_STORE"

RegistryUrl = Annotated[
    str,
    typer.Option(
        "--registry",
        metavar="URL",
        envvar=URL_VARIABLE,
        help="The registry's base URL.",
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        metavar="TOKEN",
        envvar=TOKEN_VARIABLE,
        help="The curator's token (printed by `accord registry serve`).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the registry's JSON answer.")]
CardUrl = Annotated[str, typer.Argument(metavar="URL", help="The agent's card URL or base URL.")]
DEFAULT_REGISTRY = f"http://127.0.0.1:{REGISTRY_PORT}"


@registry_app.command()
@reports_errors
def serve(
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port to listen on.")] = REGISTRY_PORT,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar=STORE_VARIABLE,
            help="Where the cards are kept: sqlite:///PATH or postgresql://... (the URLs of"
            " `accord serve --store`; default: sqlite:///.accord/registry.db).",
            show_default=False,
        ),
    ] = None,
    check_interval: Annotated[
        str,
        typer.Option(metavar="DURATION", help="How often every card is checked again (or off)."),
    ] = "5m",
    token: TokenOption = None,
    trusted_keys: Annotated[
        str | None,
        typer.Option(
            metavar="JWKS",
            help="Take only cards signed by these keys: a JWKS URL or a JWKS file.",
            show_default=False,
        ),
    ] = None,
    fetch_allow: exposure.FetchAllowOption = None,
    public_url: serve_options.PublicUrlOption = None,
    allowed_host: serve_options.AllowedHostOption = None,
    log_level: Annotated[str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")] = "info",
) -> None:
    """Serve a registry of agents.

    Search it at /registry/agents?q=... (OpenAPI: /registry/openapi.json) or over A2A; add and
    remove agents with the curator's token it prints (or ACCORD_REGISTRY_TOKEN's).
    """
    import httpx

    from accord.registry import DEFAULT_CATALOG_URL, Registry, create_registry_app, open_catalog
    from accord.registry.service import FETCH_TIMEOUT
    from accord.web.guarded_transport import GuardedTransport

    interval = parse_duration("--check-interval", check_interval)
    hosts = (
        exposure.allowed_hosts(host, port, allowed_host) if allowed_host or not public_url else None
    )
    config = serve_options.server_config(public_url=public_url, allowed_hosts=hosts)
    url = store or DEFAULT_CATALOG_URL
    try:
        catalog = open_catalog(url)
    except (ValueError, ImportError) as exc:
        raise BadArgument(f"--store: {exc}") from None
    guard = exposure.fetch_guard(host, fetch_allow)
    transport = GuardedTransport(guard) if guard is not None else None
    http = httpx.AsyncClient(timeout=FETCH_TIMEOUT, transport=transport)
    registry = Registry(
        catalog,
        trusted_keys=_trusted_keys(trusted_keys),
        http=http,
        check_interval=interval.total_seconds() if interval is not None else 0.0,
    )
    token = token or secrets.token_urlsafe(24)
    app = create_registry_app(
        registry, config, security=curator_security(token), checks=bool(interval)
    )
    typer.echo(f"accord registry: serving the registry at http://{host}:{port}", err=True)
    typer.echo(f"accord registry: cards are kept in {display_url(url)}", err=True)
    typer.echo(f"accord registry: checked again every {format_duration(interval)}", err=True)
    typer.echo(f"accord registry: curators send Authorization: Bearer {token}", err=True)
    if exposure.beyond_loopback(host) and hosts is not None and not allowed_host:
        typer.echo(
            f"accord registry: answering only requests for Host {', '.join(hosts.patterns)};"
            " let clients use other names with --allowed-host NAME, or give its URL with"
            " --public-url URL",
            err=True,
        )
    serving.serve(app, serving.ServeSettings(host, port, log_level))


def curator_security(token: str) -> Any:
    """A `Security` whose one curator presents `token` as a bearer token."""
    from accord.auth import Bearer, Security
    from accord.core import Principal
    from accord.registry import CURATOR_SCOPE
    from accord.web.bearer import same_secret

    def curator(given: str) -> Principal | None:
        if same_secret(given, token):
            return Principal("curator", scopes=frozenset({CURATOR_SCOPE}))
        return None

    return Security(Bearer(curator, description="the token `accord registry serve` printed"))


def _trusted_keys(given: str | None) -> Any:
    if given is None:
        return None
    from accord.keys import JwksClient, StaticKeys

    if given.startswith(("http://", "https://")):
        return JwksClient(given)
    try:
        return StaticKeys(json.loads(Path(given).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise BadArgument(f"--trusted-keys: cannot read the keys in {given}: {exc}") from None


@registry_app.command()
@reports_errors
def add(
    url: CardUrl,
    registry: RegistryUrl = DEFAULT_REGISTRY,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add an agent by its card URL: the registry fetches and checks the card."""
    added = _call(registry, token, lambda client: client.add(url))
    _show(added, as_json, lambda: f"added {added['name']}: {added['url']}")


@registry_app.command()
@reports_errors
def remove(
    url: CardUrl,
    registry: RegistryUrl = DEFAULT_REGISTRY,
    token: TokenOption = None,
) -> None:
    """Remove an agent from the registry."""
    removed = _call(registry, token, lambda client: client.remove(url))
    typer.echo(f"removed {removed['name']}: {removed['url']}")


@registry_app.command()
@reports_errors
def search(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help='Words to look for ("" for every agent).')
    ],
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            "-f",
            metavar="FACET=VALUE",
            help="Only agents with this skill, tag, input_mode, output_mode, version, binding,"
            " provider or scheme (repeatable), or status=down|any.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(metavar="N", help="Agents to show.")] = 20,
    registry: RegistryUrl = DEFAULT_REGISTRY,
    as_json: JsonOption = False,
) -> None:
    """Search the registry's agents, best matches first."""
    filters: dict[str, list[str]] = {}
    for given in where or []:
        facet, equals, value = given.partition("=")
        if not equals:
            raise BadArgument(f"--filter takes FACET=VALUE, not {given!r}")
        filters.setdefault(facet.strip(), []).append(value.strip())
    chosen: dict[str, FilterValue] = dict(filters)
    page = _call(registry, None, lambda client: client.search(query, chosen, limit=limit))
    if as_json:
        typer.echo(json.dumps(page, indent=2))
        return
    for agent in page["agents"]:
        down = "  (down)" if agent["status"] != "up" else ""
        typer.echo(f"{agent['name']}  {agent['url']}{down}")
        typer.echo(f"    {agent['description']}")
    typer.echo(f"{len(page['agents'])} of {page['total']} agent(s)")


@registry_app.command()
@reports_errors
def show(
    url: CardUrl,
    registry: RegistryUrl = DEFAULT_REGISTRY,
    as_json: JsonOption = False,
) -> None:
    """Show an agent the registry keeps, and the history of its card."""
    shown = _call(registry, None, lambda client: client.show(url))

    def described() -> str:
        agent = shown["agent"]
        lines = [
            f"{agent['name']}  {agent['url']}",
            f"    {agent['description']}",
            f"    status {agent['status']}, revision {agent['revision']},"
            f" checked {agent['checkedAt']}",
        ]
        lines += [f"  {c['at']}  {c['event']}  {c['detail']}".rstrip() for c in shown["history"]]
        return "\n".join(lines)

    _show(shown, as_json, described)


def _call(url: str, token: str | None, call: Callable[[RegistryClient], Awaitable[T]]) -> T:
    headers = {"Authorization": f"Bearer {token}"} if token else None

    async def run() -> T:
        async with RegistryClient(url, headers=headers) as client:
            return await call(client)

    return asyncio.run(run())


def _show(answer: Any, as_json: bool, text: Callable[[], str]) -> None:
    typer.echo(json.dumps(answer, indent=2) if as_json else text())
