"""`accord gateway`: A2A agents served by accord, in every version and binding, routed by skill."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

import accord
from accord.agents import Agent
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.server_commands import serve, served_as
from accord.errors import A2AClientError, A2AError

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
    float | None,
    typer.Option(
        "--refresh",
        metavar="SECONDS",
        help="Read the registry and the upstreams' cards again this often (default 60, 0: never).",
        show_default=False,
    ),
]


@reports_errors
def gateway(
    upstreams: list[str] | None = None,
    route: list[str] | None = None,
    default: str | None = None,
    registry: str | None = None,
    registry_query: str = "",
    refresh: float | None = None,
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
    agent, store_agent = _agent(
        upstreams or [], route or [], default, registry, registry_query, refresh
    )
    options["store_agent"] = options["store_agent"] or store_agent
    serving.run(agent, *served_as(**options))


def _agent(
    urls: list[str],
    routes: list[str],
    default: str | None,
    registry: str | None,
    query: str,
    refresh: float | None,
) -> tuple[Agent, str]:
    """The gateway, and the name its store is kept under: apart from an accord agent's."""
    if not (urls or routes or registry):
        raise BadArgument("give an upstream's URL, a --route PREFIX=URL or a --registry URL")
    agent: Agent
    if len(urls) == 1 and not (routes or registry or default) and "=" not in urls[0]:
        try:
            agent = accord.gateway(urls[0])
        except (A2AError, A2AClientError) as exc:
            raise BadArgument(f"cannot read the card of {urls[0]}: {exc}") from None
        return agent, f"{agent.name} gateway"
    try:
        agent = accord.gateway.several(
            urls,
            routes=dict(_route(item) for item in routes),
            registry=registry,
            query=query,
            default=default,
            **({} if refresh is None else {"refresh": refresh or None}),
        )
    except (A2AError, A2AClientError) as exc:
        raise BadArgument(f"cannot read an upstream's card: {exc}") from None
    except ValueError as exc:
        raise BadArgument(str(exc)) from None
    return agent, agent.name


def _route(item: str) -> tuple[str, str]:
    prefix, sep, url = item.partition("=")
    if not sep or not prefix or not url:
        raise BadArgument(f"--route takes PREFIX=URL (like /billing=http://...), got {item!r}")
    return prefix, url


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
        inspect.Parameter("refresh", keyword, annotation=RefreshOption, default=None),
    ]
    return signature.replace(parameters=[*ours, *options])


gateway.__signature__ = _with_upstreams(inspect.signature(serve, eval_str=True))  # type: ignore[attr-defined]
