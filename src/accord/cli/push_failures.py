"""`accord push failures` and `accord push retry`: the webhook deliveries a server gave up
on, listed from its store or put back in its outbox."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from accord.cli.errors import BadArgument, fail, reports_errors
from accord.cli.push_options import RequeuedDeadline, push_deadline
from accord.cli.server_commands import StoreUrl
from accord.cli.storage import named_store, using_store
from accord.core.deliveries import Delivery


@reports_errors
def failures(
    store: StoreUrl = None,
    limit: Annotated[
        int, typer.Option(metavar="N", min=1, help="Show at most N, most recent first.")
    ] = 100,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per parked delivery.")
    ] = False,
) -> None:
    """List parked push deliveries: webhooks that kept failing, never tried again."""
    parked = using_store(named_store(store), lambda opened: opened.parked_deliveries(limit))
    if not parked and not json_output:
        typer.echo("no parked deliveries")
    for delivery in parked:
        typer.echo(json.dumps(_fields(delivery)) if json_output else _line(delivery))


@reports_errors
def retry(
    delivery_ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="DELIVERY_ID",
            help="The parked deliveries to send again (their ids, as `failures` shows them).",
            show_default=False,
        ),
    ] = None,
    all_parked: Annotated[
        bool, typer.Option("--all", help="Every parked delivery (with --task: of that task).")
    ] = False,
    task_id: Annotated[
        str | None, typer.Option("--task", metavar="ID", help="With --all: only this task's.")
    ] = None,
    store: StoreUrl = None,
    deadline: RequeuedDeadline = None,
) -> None:
    """Send parked push deliveries again, once their webhook works: their tries start over.

    A running server's delivery worker takes them within seconds, each in its place in its
    webhook's queue (the task's deliveries to that webhook still go one at a time, in order).
    """
    ids = list(dict.fromkeys(delivery_ids or ()))
    if task_id is not None and not all_parked:
        raise BadArgument("--task goes with --all")
    if bool(ids) == all_parked:
        raise BadArgument("name the deliveries to retry, or give --all (not both)")
    seconds = push_deadline(deadline)  # checked before the store is opened
    now = datetime.now(UTC)
    until = now + timedelta(seconds=seconds)
    requeued = using_store(
        named_store(store),
        lambda opened: opened.requeue_deliveries(now, until, ids=ids or None, task_id=task_id),
    )
    typer.echo(f"requeued {requeued} parked deliver{'y' if requeued == 1 else 'ies'}")
    if len(ids) > requeued:
        fail(
            f"error: {len(ids) - requeued} of the {len(ids)} deliveries named were not parked"
            " (delivered, requeued already, or unknown: see `accord push failures`)"
        )


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
