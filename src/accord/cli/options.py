"""The options commands share: the agent a command talks to and through which interface.

An option every command that talks to an agent should take (credentials, say) is added
here once: a field of `AgentAddress` (used by `connect`) and its parameter in
`_ADDRESS_PARAMETERS`; `talks_to_agent` then gives it to every such command.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Annotated, Any, TypeVar

import typer

from accord.cli import credentials
from accord.client import SyncClient

T = TypeVar("T")

AgentUrl = Annotated[
    str, typer.Argument(metavar="URL", help="The agent's base URL or its card's URL.")
]
JsonOutput = Annotated[
    bool, typer.Option("--json", help="Print the wire JSON objects, one per line.")
]
VerboseOutput = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Show the protocol: task ids and every state change."),
]
TaskIdArgument = Annotated[str, typer.Argument(metavar="TASK_ID", help="The task's id.")]
TransportOption = Annotated[
    str | None,
    typer.Option(
        "--transport",
        metavar="BINDING",
        help="Use the card's interface of this binding: JSONRPC, HTTP+JSON or GRPC.",
        show_default=False,
    ),
]
VersionOption = Annotated[
    str | None,
    typer.Option(
        "--version",
        metavar="VERSION",
        help="Use the card's interface of this A2A version: 1.0, 0.3 or 0.1 (0.1: the card's"
        " JSON-RPC interface, unless one says 0.1).",
        show_default=False,
    ),
]


@dataclass(frozen=True, slots=True)
class AgentAddress:
    """The agent a command talks to, and the interface of its card it asked for, if any."""

    url: str
    transport: str | None = None
    version: str | None = None

    def connect(self, *, preferred_version: str | None = None) -> SyncClient:
        """A client for the agent; `preferred_version` applies when no --version was given."""
        version = self.version or preferred_version
        return SyncClient(
            self.url, transport=self.transport, version=version, credentials=credentials.given()
        )


_KEYWORD = inspect.Parameter.KEYWORD_ONLY
_ADDRESS_PARAMETERS = (
    inspect.Parameter("url", _KEYWORD, annotation=AgentUrl),
    inspect.Parameter("transport", _KEYWORD, default=None, annotation=TransportOption),
    inspect.Parameter("version", _KEYWORD, default=None, annotation=VersionOption),
)


def talks_to_agent(command: Callable[..., T]) -> Callable[..., T]:
    """Give a command the URL argument and the options of every command that talks to an agent.

    The command declares `agent: AgentAddress` (first) and receives the address these build;
    typer sees the URL argument first, then the command's own parameters, then the options.
    """
    own = [
        parameter.replace(kind=_KEYWORD)
        for parameter in inspect.signature(command, eval_str=True).parameters.values()
        if parameter.name != "agent"
    ]
    url, *interface = _ADDRESS_PARAMETERS

    @wraps(command)
    def run(**kwargs: Any) -> T:
        address = AgentAddress(kwargs.pop("url"), kwargs.pop("transport"), kwargs.pop("version"))
        return command(agent=address, **kwargs)

    parameters = [url, *own, *interface]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return run
