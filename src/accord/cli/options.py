"""The options commands share: the agent a command talks to and through which interface.

An option every command that talks to an agent should take (credentials, say) is added
here once: a field of `AgentAddress` (used by `connect`) and its parameter in
`_ADDRESS_PARAMETERS`; `talks_to_agent` then gives it to every such command.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Annotated, Any, TypeVar

import httpx
import typer

from accord.cli import credentials
from accord.cli.errors import BadArgument
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


HeaderOption = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar="NAME:VALUE",
        help="Send this HTTP header with every request (repeatable).",
        show_default=False,
    ),
]
ExtensionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--extension",
        metavar="URI",
        help="Activate this extension of the agent's (repeatable): A2A-Extensions.",
        show_default=False,
    ),
]
MetadataOption = Annotated[
    str | None,
    typer.Option(
        "--metadata",
        metavar="JSON",
        help="The request's metadata: a JSON object (the agent reads it as context.metadata).",
        show_default=False,
    ),
]


@dataclass(frozen=True, slots=True)
class AgentAddress:
    """The agent a command talks to, the interface of its card it asked for, if any, and the
    headers and extensions every request carries."""

    url: str
    transport: str | None = None
    version: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    extensions: Sequence[str] = ()

    def connect(self, *, preferred_version: str | None = None) -> SyncClient:
        """A client for the agent; `preferred_version` applies when no --version was given."""
        version = self.version or preferred_version
        return SyncClient(
            self.url,
            transport=self.transport,
            version=version,
            credentials=credentials.given(),
            headers=self.headers,
            extensions=self.extensions,
        )


def agent_url(url: str, option: str = "URL") -> str:
    """`url` if it can name an agent: http or https, a host, a port that exists."""
    example = "like http://127.0.0.1:8000"
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise BadArgument(f"{option} {url!r} is not a URL ({exc}); give one {example}") from None
    if parsed.scheme not in ("http", "https"):
        raise BadArgument(f"{option} {url!r} must start with http:// or https:// ({example})")
    if not parsed.host:
        raise BadArgument(f"{option} {url!r} names no host ({example})")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise BadArgument(f"{option} {url!r}: a port is a number from 1 to 65535")
    return url


def headers_of(lines: Sequence[str]) -> dict[str, str]:
    """`--header NAME:VALUE` options as headers."""
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _TOKEN.fullmatch(name) or not (value.isascii() and value.isprintable()):
            raise BadArgument(f"--header must be NAME:VALUE (like 'X-Trace: 42'), got {line!r}")
        headers[name] = value
    return headers


def metadata_of(text: str | None) -> dict[str, Any] | None:
    """`--metadata JSON` as a JSON object (None when not given)."""
    return None if text is None else json_object(text, "--metadata")


def json_object(text: str, option: str) -> dict[str, Any]:
    """The JSON object `text` holds; BadArgument naming `option` for anything else."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise BadArgument(f"{option} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        kind = _JSON_TYPE_NAMES.get(type(value), "a number")
        raise BadArgument(f"{option} must be a JSON object, got {kind}")
    return value


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_JSON_TYPE_NAMES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}

_KEYWORD = inspect.Parameter.KEYWORD_ONLY
_ADDRESS_PARAMETERS = (
    inspect.Parameter("url", _KEYWORD, annotation=AgentUrl),
    inspect.Parameter("transport", _KEYWORD, default=None, annotation=TransportOption),
    inspect.Parameter("version", _KEYWORD, default=None, annotation=VersionOption),
    inspect.Parameter("header", _KEYWORD, default=None, annotation=HeaderOption),
    inspect.Parameter("extension", _KEYWORD, default=None, annotation=ExtensionOption),
)
_CREDENTIAL_PARAMETERS = tuple(
    inspect.Parameter(name, _KEYWORD, default=None, annotation=annotation)
    for name, annotation in zip(
        credentials.NAMES,
        (
            credentials.ApiKeyOption,
            credentials.BearerOption,
            credentials.BasicOption,
            credentials.ClientIdOption,
            credentials.ClientSecretOption,
            credentials.ScopeOption,
            credentials.CertOption,
            credentials.KeyOption,
            credentials.CaOption,
        ),
        strict=True,
    )
)


def talks_to_agent(command: Callable[..., T]) -> Callable[..., T]:
    """Give a command the URL argument and the options of every command that talks to an agent.

    The command declares `agent: AgentAddress` (first) and receives the address these build;
    typer sees the URL argument first, then the command's own parameters, then the options
    (the interface, headers, extensions and credentials: the root's credential options may
    also come after the command).
    """
    own = [
        parameter.replace(kind=_KEYWORD)
        for parameter in inspect.signature(command, eval_str=True).parameters.values()
        if parameter.name != "agent"
    ]
    url, *interface = _ADDRESS_PARAMETERS

    @wraps(command)
    def run(**kwargs: Any) -> T:
        credentials.remember({name: kwargs.pop(name) for name in credentials.NAMES}, over=True)
        address = AgentAddress(
            agent_url(kwargs.pop("url")),
            kwargs.pop("transport"),
            kwargs.pop("version"),
            headers_of(kwargs.pop("header") or ()),
            tuple(kwargs.pop("extension") or ()),
        )
        return command(agent=address, **kwargs)

    parameters = [url, *own, *interface, *_CREDENTIAL_PARAMETERS]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return run
