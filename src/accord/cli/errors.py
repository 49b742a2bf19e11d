"""How the CLI reports failures: one line on stderr and an exit code, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import NoReturn, ParamSpec, TypeVar

import typer

from accord.cli.exit_codes import (
    EXIT_AUTH_REFUSED,
    EXIT_BAD_ARGUMENT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_TASK_CANCELED,
    EXIT_TASK_FAILED,
    EXIT_TASK_WAITING,
    EXIT_UNREACHABLE,
)
from accord.client.credentials import CredentialsRequired
from accord.errors import (
    A2AClientError,
    A2AError,
    AgentUnreachable,
    PermissionDenied,
    Unauthenticated,
)
from accord.types import TaskState

P = ParamSpec("P")
T = TypeVar("T")

_OUTCOMES = {
    TaskState.FAILED: EXIT_TASK_FAILED,
    TaskState.REJECTED: EXIT_TASK_FAILED,
    TaskState.CANCELED: EXIT_TASK_CANCELED,
    TaskState.INPUT_REQUIRED: EXIT_TASK_WAITING,
    TaskState.AUTH_REQUIRED: EXIT_TASK_WAITING,
}


def outcome_code(state: TaskState | None, *, waiting_is_done: bool = False) -> int:
    """The exit status a task left in `state` ends a command with (None: a reply, 0);
    with `waiting_is_done`, a task waiting for the user is not a failure (accord get)."""
    if state is None or (waiting_is_done and state.is_interrupted):
        return 0
    return _OUTCOMES.get(state, 0)


def exit_with(code: int) -> None:
    """End the command with `code` unless it is 0."""
    if code:
        raise typer.Exit(code)


class BadArgument(Exception):
    """A command-line argument the CLI cannot use."""


def error_line(exc: A2AError | A2AClientError) -> str:
    """The one line describing a failed call."""
    if isinstance(exc, A2AError):
        return f"error {exc.code} ({type(exc).__name__}): {exc.message}"
    return f"error: {exc}"


def fail(line: str, exit_code: int = EXIT_FAILURE) -> NoReturn:
    """Print `line` on stderr and leave with `exit_code`."""
    typer.echo(line, err=True)
    raise typer.Exit(exit_code)


def reports_errors(command: Callable[P, T]) -> Callable[P, T]:
    """Wrap a command so the errors users cause or meet end it with one line and an exit code."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return command(*args, **kwargs)
        except (Unauthenticated, CredentialsRequired) as exc:
            from accord.cli.credentials import HINT

            fail(f"{error_line(exc)}\n{HINT}", EXIT_AUTH_REFUSED)
        except PermissionDenied as exc:
            fail(error_line(exc), EXIT_AUTH_REFUSED)
        except AgentUnreachable as exc:
            fail(error_line(exc), EXIT_UNREACHABLE)
        except (A2AError, A2AClientError) as exc:
            fail(error_line(exc))
        except BadArgument as exc:
            fail(f"error: {exc}", EXIT_BAD_ARGUMENT)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)

    return run


def exit_on_errors(call: Callable[[], T]) -> T:
    """Run `call` outside a command (`Agent.serve`): the same one-line errors, then SystemExit."""
    try:
        return reports_errors(call)()
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
