"""The expense sample: a form as a DataPart, a wrong submission, a right one, the record."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from accord.samples import expense
from accord.samples.expense import EXPENSE_FORM, read_fields
from accord.types import DataPart, Message, Task, TaskState
from conftest import SchemaErrors
from rpc import Json
from sample_servers import check_card, data_of, finished, talk_to

VALID = {"date": "2025-03-14", "amount": 42.5, "currency": "EUR", "purpose": "taxi to the airport"}


def form_of(task: Task) -> Json:
    """The form an input-required task sends, checked to be one."""
    assert task.status.state is TaskState.INPUT_REQUIRED
    message = task.status.message
    assert message is not None
    [form] = [p.data for p in message.parts if isinstance(p, DataPart)]
    assert form["type"] == "form"
    Draft202012Validator.check_schema(form["form"])
    return form


def question_of(task: Task) -> str:
    assert task.status.message is not None
    return task.status.message.text


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(expense.agent, schema_errors)
    assert "application/json" in card["defaultInputModes"]


async def test_a_wrong_form_is_sent_back_naming_what_is_wrong_then_a_right_one_completes() -> None:
    async with talk_to(expense.agent) as client:
        asked = finished(
            await client.send("Taxi to the airport, 42.50 EUR on 2025-03-14"),
            TaskState.INPUT_REQUIRED,
        )
        form = form_of(asked)
        assert set(form["form"]["required"]) == {"date", "amount", "currency", "purpose"}
        assert form["formData"] == {
            "amount": 42.5,
            "currency": "EUR",
            "date": "2025-03-14",
            "category": "travel",
            "purpose": "taxi",
        }

        wrong = {**VALID, "amount": -3, "date": "2999-01-01", "currency": "XYZ"}
        again = finished(
            await client.send("", parts=[DataPart(data=wrong)], task_id=asked.id),
            TaskState.INPUT_REQUIRED,
        )
        form = form_of(again)
        assert form["errors"] == {
            "date": "must not be in the future",
            "amount": "must be more than 0",
            "currency": "must be one of " + ", ".join(EXPENSE_FORM.fields[2].enum or ()),
        }
        assert question_of(again).startswith(
            "Please correct the form: date must not be in the future; amount must be more than 0;"
        )

        fixed = {"amount": 42.5, "date": "2025-03-14", "currency": "EUR"}  # the rest is kept
        done = finished(await client.send("", parts=[DataPart(data=fixed)], task_id=asked.id))
    assert done.id == asked.id
    assert done.artifacts is not None
    [artifact] = done.artifacts
    assert artifact.name == "reimbursement"
    record = data_of(artifact)
    assert record["id"].startswith("EXP-") and record["status"] == "approved"
    assert {k: record[k] for k in VALID} == VALID
    assert question_of(done) == (
        f"Reimbursement {record['id']} approved: 42.50 EUR for taxi to the airport on 2025-03-14."
    )


async def test_a_field_the_form_does_not_have_is_named() -> None:
    async with talk_to(expense.agent) as client:
        asked = finished(await client.send("an expense"), TaskState.INPUT_REQUIRED)
        again = finished(
            await client.send("", parts=[DataPart(data={**VALID, "tip": 5})], task_id=asked.id),
            TaskState.INPUT_REQUIRED,
        )
    assert form_of(again)["errors"] == {"tip": "is not a field of this form"}


async def test_a_whole_form_echoed_back_is_read_too() -> None:
    async with talk_to(expense.agent) as client:
        asked = finished(await client.send("an expense"), TaskState.INPUT_REQUIRED)
        echoed = {**form_of(asked), "formData": VALID}
        done = finished(await client.send("", parts=[DataPart(data=echoed)], task_id=asked.id))
    assert done.artifacts is not None


async def test_a_filled_form_in_the_first_message_completes_at_once() -> None:
    message = Message.user("please reimburse")
    message.parts.append(DataPart(data=VALID))
    async with talk_to(expense.agent) as client:
        done = finished(await client.send(message))
    assert done.artifacts is not None
    assert data_of(done.artifacts[0])["purpose"] == "taxi to the airport"


async def test_text_answers_fill_the_form_too() -> None:
    async with talk_to(expense.agent) as client:
        asked = finished(await client.send("hotel for the conference"), TaskState.INPUT_REQUIRED)
        assert form_of(asked)["formData"] == {"category": "lodging", "purpose": "conference"}
        again = finished(
            await client.send("it was 120 CHF", task_id=asked.id), TaskState.INPUT_REQUIRED
        )
        assert question_of(again) == "Please correct the form: date is required."


@pytest.mark.parametrize(
    "submission",
    [
        VALID,
        {**VALID, "amount": 0},
        {**VALID, "amount": 5000.01},
        {**VALID, "amount": "42"},
        {**VALID, "amount": True},
        {**VALID, "date": "14/03/2025"},
        {**VALID, "date": "2025-02-30"},
        {**VALID, "currency": "eur"},
        {**VALID, "category": "fun"},
        {**VALID, "category": "meals"},
        {**VALID, "purpose": "ab"},
        {**VALID, "purpose": "x" * 201},
        {**VALID, "extra": 1},
        {k: v for k, v in VALID.items() if k != "date"},
    ],
)
def test_the_validator_agrees_with_json_schema(submission: dict[str, Any]) -> None:
    schema = EXPENSE_FORM.schema()
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    assert (EXPENSE_FORM.errors(submission) == {}) == validator.is_valid(submission)


def test_rules_read_a_sentence() -> None:
    assert read_fields("lunch with a client on 2025-01-02 for 30 usd") == {
        "amount": 30.0,
        "currency": "USD",
        "date": "2025-01-02",
        "category": "meals",
        "purpose": "lunch",
    }
