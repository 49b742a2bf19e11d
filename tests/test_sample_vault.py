"""The vault sample: in-task authentication — auth-required with what it needs, the
credential in a follow-up message of the same task, wrong ones asked for again."""

from __future__ import annotations

import pytest

from accord.samples import vault
from accord.types import DataPart, TaskState
from conftest import SchemaErrors
from sample_servers import check_card, data_of, finished, talk_to


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(vault.agent, schema_errors)
    assert "auth-required" in card["skills"][0]["tags"]


async def test_asks_for_the_passphrase_then_hands_out_the_secret() -> None:
    async with talk_to(vault.agent) as client:
        asked = await client.send("open the vault")
        assert asked.status.state is TaskState.AUTH_REQUIRED
        needed = [p.data for p in asked.status.message.parts if isinstance(p, DataPart)]
        assert needed == [vault.NEEDED]
        wrong = await client.send(
            "",
            parts=[DataPart(data={"passphrase": "guess"})],
            task_id=asked.id,
            context_id=asked.context_id,
        )
        assert wrong.status.state is TaskState.AUTH_REQUIRED
        assert "2 tries left" in wrong.status.message.text
        right = await client.send(
            "",
            parts=[DataPart(data={"passphrase": vault.DEFAULT_PASSPHRASE})],
            task_id=asked.id,
            context_id=asked.context_id,
        )
        done = finished(right)
        assert data_of(done.artifacts[0])["secret"]
        assert all("open sesame" not in (m.text or "") for m in done.history or [])


async def test_three_wrong_passphrases_close_the_vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_VAULT_PASSPHRASE", "right")
    async with talk_to(vault.agent) as client:
        task = await client.send("open")
        for guess in ("a", "b", "c"):
            task = await client.send(guess, task_id=task.id, context_id=task.context_id)
        finished(task, TaskState.REJECTED)
