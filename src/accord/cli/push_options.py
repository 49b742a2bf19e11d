"""The options for webhook delivery (`accord serve`, `accord push retry`): how often and how
long a push is retried."""

from __future__ import annotations

from typing import Annotated

import typer

from accord.cli.errors import BadArgument
from accord.cli.storage import format_duration, parse_duration
from accord.runtime.delivery import RetrySchedule

_DEFAULT = RetrySchedule()

PushTries = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        help="Try a notification at most N times, the first included, before parking it"
        f" [default: {_DEFAULT.attempts}].",
        show_default=False,
    ),
]
PushBackoff = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Wait this long after a failed try, twice as long after each next one"
        f" [default: {format_duration(_DEFAULT.first_delay)}].",
        show_default=False,
    ),
]
PushBackoffMax = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Never wait longer than this between tries"
        f" [default: {format_duration(_DEFAULT.max_delay)}].",
        show_default=False,
    ),
]
PushDeadline = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Park a notification not delivered this long after its event"
        f" [default: {format_duration(_DEFAULT.deadline)}].",
        show_default=False,
    ),
]
RequeuedDeadline = Annotated[
    str | None,
    typer.Option(
        "--push-deadline",
        metavar="DURATION",
        help="Park them again if not delivered this long after the retry (as the server's"
        f" --push-deadline) [default: {format_duration(_DEFAULT.deadline)}].",
        show_default=False,
    ),
]


def retry_schedule(
    tries: int | None, backoff: str | None, backoff_max: str | None, deadline: str | None
) -> RetrySchedule | None:
    """The schedule the options set (the others at their defaults); None when none is given."""
    if tries is None and backoff is None and backoff_max is None and deadline is None:
        return None
    first_delay = _seconds("--push-backoff", backoff, _DEFAULT.first_delay)
    max_delay = _seconds("--push-backoff-max", backoff_max, _DEFAULT.max_delay)
    if max_delay < first_delay:
        raise BadArgument(
            f"--push-backoff-max ({format_duration(max_delay)}) must be at least"
            f" --push-backoff ({format_duration(first_delay)})"
        )
    return RetrySchedule(
        attempts=tries if tries is not None else _DEFAULT.attempts,
        first_delay=first_delay,
        max_delay=max_delay,
        deadline=push_deadline(deadline),
    )


def push_deadline(text: str | None) -> float:
    """The seconds `--push-deadline` gives (the default's when not given)."""
    return _seconds("--push-deadline", text, _DEFAULT.deadline)


def _seconds(option: str, text: str | None, default: float) -> float:
    if text is None:
        return default
    duration = parse_duration(option, text)
    if duration is None:
        raise BadArgument(f"{option} cannot be off")
    return duration.total_seconds()
