"""The exit statuses of the `accord` commands, which `accord --help` lists (imports nothing)."""

from __future__ import annotations

EXIT_FAILURE = 1
"""An error: the agent's (a protocol error) or the call's."""
EXIT_BAD_ARGUMENT = 2
EXIT_TASK_FAILED = 3
"""The task failed or was rejected."""
EXIT_TASK_CANCELED = 4
EXIT_TASK_WAITING = 5
"""The task waits for input or authentication that nobody gave (a command that does not
ask: send, or chat reading from a pipe)."""
EXIT_AUTH_REFUSED = 6
EXIT_UNREACHABLE = 7
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = f"""Exit status:

\b
  0    done (a task completed, or the agent replied)
  {EXIT_FAILURE}    an error (the agent's, or the call's)
  {EXIT_BAD_ARGUMENT}    bad usage: an option, argument or URL the command cannot use
  {EXIT_TASK_FAILED}    the task failed or was rejected
  {EXIT_TASK_CANCELED}    the task was canceled
  {EXIT_TASK_WAITING}    the task waits for input or authentication nobody gave
  {EXIT_AUTH_REFUSED}    the agent refused the credentials (or none were given)
  {EXIT_UNREACHABLE}    the agent could not be reached
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""
