"""`accord gateway`: an A2A agent served by accord, in every version and binding."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

import accord
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.server_commands import serve, served_as
from accord.errors import A2AClientError, A2AError

Upstream = Annotated[
    str,
    typer.Argument(metavar="UPSTREAM_URL", help="The agent to serve: its URL or its card's."),
]


@reports_errors
def gateway(upstream: str, **options: Any) -> None:
    """Put an agent behind accord, in every version.

    The agent at UPSTREAM_URL is served through accord in every version and binding.

    Its card is read once, at start: the gateway's card lists its skills, modes and
    extensions, with the gateway's own interfaces. Each call is relayed to the agent in the
    version and binding its card offers; tasks keep its ids and are kept in the gateway's
    store too, so callers resubscribe with replay. Every option of `accord serve` applies;
    tasks live in ./.accord/NAME gateway.db unless --store says otherwise.
    """
    try:
        agent = accord.gateway(upstream)
    except (A2AError, A2AClientError) as exc:
        raise BadArgument(f"cannot read the card of {upstream}: {exc}") from None
    options["store_agent"] = options["store_agent"] or f"{agent.name} gateway"
    serving.run(agent, *served_as(**options))


def _with_upstream(signature: inspect.Signature) -> inspect.Signature:
    """`accord serve`'s parameters, its target replaced by the upstream's URL."""
    _target, *options = signature.parameters.values()
    first = inspect.Parameter(
        "upstream", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Upstream
    )
    return signature.replace(parameters=[first, *options])


gateway.__signature__ = _with_upstream(inspect.signature(serve, eval_str=True))  # type: ignore[attr-defined]
