"""`accord push`: receive and verify an agent's notifications, manage a task's webhooks."""

from __future__ import annotations

from typing import Annotated, Any

import typer
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from accord.cli.errors import reports_errors
from accord.cli.options import AgentAddress, TaskIdArgument, talks_to_agent
from accord.cli.output import print_json_line
from accord.cli.push_failures import failures, retry
from accord.client.card_keys import AgentKeys
from accord.keys import JwksClient
from accord.keys.cards import TrustedKeys
from accord.push import DeliveryIds, KeysUnavailable, NotificationRefused, SeenTokens, verify
from accord.server.http_limits import HttpLimits
from accord.types import PushNotificationConfig

push_app = typer.Typer(
    help="Receive push notifications, or manage a task's webhooks.",
    no_args_is_help=True,
    add_completion=False,
)

ConfigId = Annotated[str, typer.Argument(metavar="CONFIG_ID", help="The webhook config's id.")]


@push_app.command("listen")
@reports_errors
def listen(
    agent: Annotated[
        str,
        typer.Option(metavar="URL", help="The agent whose notifications to trust (its base URL)."),
    ],
    port: Annotated[
        int, typer.Option(metavar="PORT", min=0, max=65535, help="Port to listen on.")
    ] = 9000,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    path: Annotated[str, typer.Option(metavar="PATH", help="The webhook's path.")] = "/",
    url: Annotated[
        str | None,
        typer.Option(
            metavar="URL", help="The webhook URL as registered (default: http://HOST:PORT/PATH)."
        ),
    ] = None,
    token: Annotated[
        str | None, typer.Option(metavar="TOKEN", help="Require this X-A2A-Notification-Token.")
    ] = None,
    jwks: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="The agent's keys [default: the jku its card's signature names, on the card's"
            " own origin; else the JWKS beside the card].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a webhook that verifies each notification and prints it as it arrives."""
    audience = url or f"http://{host}:{port}/{path.lstrip('/')}"
    keys: TrustedKeys = JwksClient(jwks) if jwks else AgentKeys(agent)
    seen = SeenTokens()
    delivered = DeliveryIds()

    async def receive(request: Request) -> Response:
        body = await request.body()
        try:
            notification = await verify(
                body, request.headers, keys=keys, audience=audience, token=token, seen=seen
            )
        except KeysUnavailable as exc:  # the agent sends it again later: not a refusal
            typer.echo(f"cannot verify now: {exc}", err=True)
            return PlainTextResponse(str(exc), status_code=503, headers={"Retry-After": "5"})
        except NotificationRefused as exc:
            typer.echo(f"refused: {exc}", err=True)
            return PlainTextResponse(str(exc), status_code=401)
        if not delivered.first(notification.delivery_id):
            return Response(status_code=204)  # delivered again (at least once): shown already
        try:
            summary = describe(notification.json())
        except ValueError:
            summary = "(a body that is not JSON)"
        typer.echo(f"task {notification.task_id}: {summary}")
        return Response(status_code=204)

    typer.echo(f"accord: serving a webhook at {audience} (verifying {agent}'s keys)", err=True)
    app = Starlette(routes=[Route("/" + path.lstrip("/"), receive, methods=["POST"])])
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        **HttpLimits().uvicorn_options(),
    )


def _state(status: Any) -> str | None:
    """A status's state as 0.x spells it (`TASK_STATE_INPUT_REQUIRED` -> `input-required`)."""
    state = status.get("state") if isinstance(status, dict) else None
    if not isinstance(state, str):
        return None
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


def describe(body: Any) -> str:
    """One line for a notification's body: a task (0.x) or a 1.0 StreamResponse."""
    if not isinstance(body, dict):
        return "(not a JSON object)"
    for member, what in (("statusUpdate", "status"), ("task", "task"), ("message", "message")):
        if isinstance(body.get(member), dict):
            inner = body[member]
            state = _state(inner.get("status"))
            return f"{what} {state}" if state else what
    if isinstance(body.get("artifactUpdate"), dict):
        artifact = body["artifactUpdate"].get("artifact") or {}
        return f"artifact {artifact.get('artifactId', '?')}"
    state = _state(body.get("status"))
    return f"task {state}" if state else "(unknown body)"


@push_app.command("set")
@reports_errors
@talks_to_agent
def set_config(
    agent: AgentAddress,
    task_id: TaskIdArgument,
    webhook: Annotated[str, typer.Argument(metavar="WEBHOOK", help="Where to POST updates.")],
    token: Annotated[
        str | None, typer.Option(metavar="TOKEN", help="Sent as X-A2A-Notification-Token.")
    ] = None,
    config_id: Annotated[
        str | None, typer.Option("--id", metavar="ID", help="The config's id.")
    ] = None,
) -> None:
    """Ask the agent to POST a task's updates to WEBHOOK."""
    config = PushNotificationConfig(url=webhook, token=token, id=config_id)
    with agent.connect() as client:
        print_json_line(client.set_push_config(task_id, config))


@push_app.command("get")
@reports_errors
@talks_to_agent
def get_config(agent: AgentAddress, task_id: TaskIdArgument, config_id: ConfigId) -> None:
    """Show one of a task's webhook configs."""
    with agent.connect() as client:
        print_json_line(client.get_push_config(task_id, config_id))


@push_app.command("list")
@reports_errors
@talks_to_agent
def list_configs(agent: AgentAddress, task_id: TaskIdArgument) -> None:
    """Show every webhook config of a task, one per line."""
    with agent.connect() as client:
        for config in client.list_push_configs(task_id):
            print_json_line(config)


@push_app.command("delete")
@reports_errors
@talks_to_agent
def delete_config(agent: AgentAddress, task_id: TaskIdArgument, config_id: ConfigId) -> None:
    """Stop sending a task's updates to one webhook."""
    with agent.connect() as client:
        client.delete_push_config(task_id, config_id)
    typer.echo(f"deleted {config_id}")


push_app.command("failures")(failures)
push_app.command("retry")(retry)
