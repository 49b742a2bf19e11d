"""`accord gateway`: A2A agents served by accord, in every version and binding, routed by skill."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from accord.agents import Agent
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.server_commands import serve, served_as
from accord.errors import A2AClientError, A2AError
from accord.gateway import gateway as one_upstream
from accord.gateway.several import SeveralGateway, several
from accord.gateway.sources import REFRESH_INTERVAL

Upstreams = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="UPSTREAM_URL",
        help="The agents to serve: their URLs or their cards' (NAME=URL names one).",
        show_default=False,
    ),
]
RouteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--route",
        metavar="PREFIX=URL",
        help="Serve the agent at URL at the path PREFIX too (its own card, every call to it).",
        show_default=False,
    ),
]
DefaultOption = Annotated[
    str | None,
    typer.Option(
        "--default",
        metavar="NAME",
        help="The upstream taking the messages that name no skill (several upstreams).",
    ),
]
RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry", metavar="URL", help="Serve the agents this accord registry lists too."
    ),
]
RegistryQueryOption = Annotated[
    str,
    typer.Option("--registry-query", metavar="TEXT", help="Only the registry's agents it finds."),
]
RefreshOption = Annotated[
    float,
    typer.Option(
        "--refresh",
        metavar="SECONDS",
        help="Read the registry and the upstreams' cards again this often (0: never).",
    ),
]


@reports_errors
def gateway(
    upstreams: list[str] | None = None,
    route: list[str] | None = None,
    default: str | None = None,
    registry: str | None = None,
    registry_query: str = "",
    refresh: float = REFRESH_INTERVAL,
    **options: Any,
) -> None:
    """Put agents behind accord, in every version.

    The agent at UPSTREAM_URL is served through accord in every version and binding: its
    card is read once, at start, and the gateway's card lists its skills, modes and
    extensions, with the gateway's own interfaces. Each call is relayed to the agent in the
    version and binding its card offers; tasks keep its ids and are kept in the gateway's
    store too, so callers resubscribe with replay.

    Several upstreams (more URLs, --route, --registry) are served as one agent whose card
    lists all their skills: a message goes to the upstream of its task or context, else of
    the path prefix it came by (--route), else of the skill its metadata names ("skill"),
    else to --default (docs/gateway.md). GET /health says which upstreams answer.

    Every option of `accord serve` applies; tasks live in ./.accord/NAME gateway.db (one
    upstream) or ./.accord/Gateway.db (several) unless --store says otherwise.
    """
    agent = _agent(upstreams or [], route or [], default, registry, registry_query, refresh)
    options["store_agent"] = options["store_agent"] or _store_agent(agent)
    serving.run(agent, *served_as(**options))


def _agent(
    urls: list[str],
    routes: list[str],
    default: str | None,
    registry: str | None,
    query: str,
    refresh: float,
) -> Agent:
    if not (urls or routes or registry):
        raise BadArgument("give an upstream's URL, a --route PREFIX=URL or a --registry URL")
    try:
        if len(urls) == 1 and not (routes or registry or default) and "=" not in urls[0]:
            return one_upstream(urls[0])
        return several(
            urls,
            routes=dict(_route(item) for item in routes),
            registry=registry,
            query=query,
            default=default,
            refresh=refresh or None,
        )
    except (A2AError, A2AClientError) as exc:
        raise BadArgument(f"cannot read an upstream's card: {exc}") from None
    except ValueError as exc:
        raise BadArgument(str(exc)) from None


def _route(item: str) -> tuple[str, str]:
    prefix, sep, url = item.partition("=")
    if not sep or not prefix or not url:
        raise BadArgument(f"--route takes PREFIX=URL (like /billing=http://...), got {item!r}")
    return prefix, url


def _store_agent(agent: Agent) -> str:
    """The name a gateway's store is kept under: apart from an accord agent of the same name."""
    return agent.name if isinstance(agent, SeveralGateway) else f"{agent.name} gateway"


def _with_upstreams(signature: inspect.Signature) -> inspect.Signature:
    """`accord serve`'s parameters, its target replaced by the upstreams and their options."""
    _target, *options = signature.parameters.values()
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    ours = [
        inspect.Parameter("upstreams", keyword, annotation=Upstreams, default=None),
        inspect.Parameter("route", keyword, annotation=RouteOption, default=None),
        inspect.Parameter("default", keyword, annotation=DefaultOption, default=None),
        inspect.Parameter("registry", keyword, annotation=RegistryOption, default=None),
        inspect.Parameter("registry_query", keyword, annotation=RegistryQueryOption, default=""),
        inspect.Parameter("refresh", keyword, annotation=RefreshOption, default=REFRESH_INTERVAL),
    ]
    return signature.replace(parameters=[*ours, *options])


gateway.__signature__ = _with_upstreams(inspect.signature(serve, eval_str=True))  # type: ignore[attr-defined]
