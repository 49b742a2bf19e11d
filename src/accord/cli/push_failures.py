"""`accord push failures`: the webhook deliveries a server gave up on, read from its store."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from accord.cli.errors import reports_errors
from accord.cli.server_commands import StoreUrl
from accord.cli.storage import reading_store
from accord.core.deliveries import Delivery
from accord.store import DEFAULT_STORE_URL


@reports_errors
def failures(
    store: StoreUrl = DEFAULT_STORE_URL,
    limit: Annotated[
        int, typer.Option(metavar="N", min=1, help="Show at most N, most recent first.")
    ] = 100,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per parked delivery.")
    ] = False,
) -> None:
    """List parked push deliveries: webhooks that kept failing, never tried again."""
    parked = reading_store(store, lambda opened: opened.parked_deliveries(limit))
    if not parked and not json_output:
        typer.echo("no parked deliveries")
    for delivery in parked:
        typer.echo(json.dumps(_fields(delivery)) if json_output else _line(delivery))


def _fields(delivery: Delivery) -> dict[str, object]:
    return {
        "id": delivery.id,
        "taskId": delivery.task_id,
        "seq": delivery.seq,
        "url": delivery.url,
        "attempts": delivery.attempts,
        "error": delivery.last_error,
        "createdAt": delivery.created_at.isoformat(),
        "parkedAt": delivery.parked_at.isoformat() if delivery.parked_at else None,
    }


def _line(delivery: Delivery) -> str:
    parked = delivery.parked_at.strftime("%Y-%m-%d %H:%M:%S") if delivery.parked_at else "?"
    return (
        f"{parked}  task {delivery.task_id} event {delivery.seq} -> {delivery.url}:"
        f" {delivery.last_error or 'not delivered'} ({delivery.attempts} tries,"
        f" delivery {delivery.id})"
    )
