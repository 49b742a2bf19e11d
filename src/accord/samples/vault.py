"""Vault: hands out a secret after in-task authentication — the `auth-required` state.

Shows: a task that pauses in `auth-required` with a DataPart saying what it needs (the
scheme and where to send it), and continues in the same task when the client sends the
credential in a follow-up message; a wrong one is asked for again, three wrong ones end
the task `rejected`. The credential never appears in the task's status messages.

    accord serve accord.samples.vault:agent
    accord send http://127.0.0.1:8000 "open the vault"
    accord send http://127.0.0.1:8000 --task-id <the task id> --data '{"passphrase": "…"}'

The passphrase is `ACCORD_VAULT_PASSPHRASE` (default `open sesame`).
"""

from __future__ import annotations

import hmac
import os

import accord
from accord.agents import EventSink
from accord.types import AgentSkill, DataPart, Message

DEFAULT_PASSPHRASE = "open sesame"
MAX_TRIES = 3
TRIES = "vaultTries"
"""Status message metadata: how many wrong credentials this task has seen."""

NEEDED = {
    "scheme": "passphrase",
    "field": "passphrase",
    "how": 'send a message with a data part {"passphrase": "..."} in this task',
}
"""What the agent asks for, as the DataPart of its auth-required status."""


def passphrase() -> str:
    return os.environ.get("ACCORD_VAULT_PASSPHRASE", DEFAULT_PASSPHRASE)


def offered(message: Message) -> str | None:
    """The passphrase a message offers: a data part's `passphrase`, else its text."""
    for part in message.parts:
        if isinstance(part, DataPart) and isinstance(part.data.get("passphrase"), str):
            return str(part.data["passphrase"])
    return message.text.strip() or None


def tries_so_far(context: accord.RequestContext) -> int:
    status = context.task.status.message if context.task is not None else None
    tries = (status.metadata or {}).get(TRIES) if status is not None else None
    return tries if isinstance(tries, int) else 0


class VaultAgent(accord.AgentExecutor):
    """Asks for a passphrase in the task, then hands out the secret."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        if context.is_new_task:
            await task.start_work("Checking who you are")
            await self._ask(task, "The vault needs a passphrase.", tries=0)
            return
        tries = tries_so_far(context) + 1
        given = offered(context.message)
        if given is not None and hmac.compare_digest(given.encode(), passphrase().encode()):
            await task.start_work("Passphrase accepted")
            secret = {"secret": "The treasure is under the old oak.", "grantedTo": "you"}
            await task.add_artifact([DataPart(data=secret)], name="secret")
            await task.complete("Here is the secret.")
        elif tries >= MAX_TRIES:
            await task.reject(f"{MAX_TRIES} wrong passphrases: the vault stays closed.")
        else:
            left = MAX_TRIES - tries
            await self._ask(task, f"That passphrase is wrong ({left} tries left).", tries)

    async def _ask(self, task: accord.TaskUpdater, text: str, tries: int) -> None:
        message = task.agent_message(
            [*accord.agents.to_parts(text), DataPart(data=NEEDED)], metadata={TRIES: tries}
        )
        await task.requires_auth(message)


agent = accord.Agent(
    VaultAgent(),
    name="Vault",
    description="Keeps a secret; asks for a passphrase inside the task before handing it out.",
    skills=[
        AgentSkill(
            id="open_vault",
            name="Open the vault",
            description=(
                "Hands out a secret once the client proves who it is: the task waits in "
                "auth-required for a passphrase sent as a follow-up message."
            ),
            tags=["auth-required", "in-task authentication", "multi-turn"],
            examples=["open the vault", "what is the secret?"],
        )
    ],
    input_modes=["text/plain", "application/json"],
    output_modes=["application/json", "text/plain"],
)
