"""Expense: reimbursement through forms — structured data (DataPart) in both directions.

Shows: the agent answers a request with a form (a DataPart holding a JSON Schema and the
values it could already read) and waits in `input-required`; the client submits the filled
form as a DataPart in the same task; the agent checks it, asks again naming exactly what is
wrong, and finally completes with the reimbursement record as a DataPart artifact.

    accord serve accord.samples.expense:agent
    accord send http://127.0.0.1:8000 "taxi to the airport, 42.50 EUR on 2025-03-14"
    accord send http://127.0.0.1:8000 "" --task-id <the task id> \\
        --data '{"date": "2025-03-14", "amount": 42.5, "currency": "EUR", "purpose": "taxi"}'

The form's DataPart is `{"type": "form", "form": <JSON Schema>, "formData": {...},
"errors": {field: problem}}`; a submission is a DataPart of field values (fields sent
earlier in the task are kept, so a correction may carry only the fields it fixes).

A message may carry a receipt: a FilePart with its bytes (PNG, JPEG, WebP or PDF, at most
2 MiB; see `receipts.py`). It is checked, named in the answer, kept in the form's `receipt`
(name, media type, size, SHA-256; the bytes are not stored) and recorded with the expense.
A file that is not accepted (wrong type, too large, sent by URI) is answered in words.

    accord send http://127.0.0.1:8000 "taxi, 42.50 EUR on 2025-03-14" --file receipt.png
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import accord
from accord import language
from accord.agents import EventSink
from accord.samples.forms import Form, FormField, Json
from accord.samples.money import parse as parse_money
from accord.samples.rates import known_currencies
from accord.samples.receipts import (
    LIMIT,
    RECEIPT_TYPES,
    Receipt,
    ReceiptRefused,
    accepted_types,
    receipt_in,
)
from accord.types import AgentSkill, DataPart, Message, TextPart, new_id, utc_now

MAX_AMOUNT = 5000.0
CATEGORIES = ("travel", "meals", "lodging", "supplies", "other")
CATEGORY_WORDS = {
    "travel": {"taxi", "cab", "train", "flight", "bus", "uber", "parking", "fuel", "mileage"},
    "meals": {"lunch", "dinner", "breakfast", "meal", "coffee", "restaurant"},
    "lodging": {"hotel", "hostel", "room", "accommodation"},
    "supplies": {"paper", "printer", "laptop", "cable", "supplies", "stationery"},
}


def not_in_future(value: str) -> str | None:
    return "must not be in the future" if date.fromisoformat(value) > _today() else None


def _today() -> date:
    return datetime.now(UTC).date()


EXPENSE_FORM = Form(
    "Expense reimbursement",
    [
        FormField("date", "Date", "string", "The day you paid.", format="date",
                  check=not_in_future),
        FormField("amount", "Amount", "number", "What you paid.", exclusive_minimum=0,
                  maximum=MAX_AMOUNT),
        FormField("currency", "Currency", "string", "The currency you paid in (ISO 4217).",
                  enum=sorted(known_currencies())),
        FormField("category", "Category", "string", "What kind of expense it was.",
                  required=False, enum=CATEGORIES),
        FormField("purpose", "Purpose", "string", "What the expense was for.", min_length=3,
                  max_length=200),
    ],
)  # fmt: skip

INSTRUCTIONS = (
    "Read an expense reimbursement request. Answer with JSON holding whichever of these "
    'the text states: "date" (YYYY-MM-DD), "amount" (number), "currency" (ISO 4217 code), '
    f'"category" (one of {", ".join(CATEGORIES)}), "purpose" (a few words).'
)
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
PURPOSE = re.compile(r"\bfor (?:an? |the |my )?(?P<purpose>[a-z][a-z ]{2,60}?)(?:[,.;]|\bon\b|$)")


def read_fields(text: str) -> Json:
    """The form values a sentence states, by rules."""
    fields: Json = {}
    money = parse_money(DATE.sub(" ", text))  # a date's digits are no amount
    if money.amount is not None:
        fields["amount"] = money.amount
    if money.source is not None:
        fields["currency"] = money.source
    lowered = text.lower()
    if found := DATE.search(text):
        fields["date"] = found.group()
    elif "yesterday" in lowered:
        fields["date"] = (_today() - timedelta(days=1)).isoformat()
    elif "today" in lowered:
        fields["date"] = _today().isoformat()
    words = set(re.findall(r"[a-z]+", lowered))
    for category, hints in CATEGORY_WORDS.items():
        if words & hints:
            fields["category"] = category
            break
    if found := PURPOSE.search(lowered):
        fields["purpose"] = found["purpose"].strip()
    elif fields.get("category") and (hints := words & CATEGORY_WORDS[fields["category"]]):
        fields["purpose"] = sorted(hints)[0]
    return fields


async def understand(text: str) -> Json:
    """The form values `text` states (by rules, or by a model when one is configured)."""
    if not text.strip():
        return {}
    return await language.understand(
        text,
        instructions=INSTRUCTIONS,
        rules=read_fields,
        from_model=lambda answer: EXPENSE_FORM.known(
            {k: v for k, v in answer.items() if v is not None}
        ),
    )


def last_form(context: accord.RequestContext) -> Json:
    """The form this task sent last ({} before the first): what the user gave so far."""
    asked = context.status_on_arrival
    message = asked.message if asked is not None else None
    for part in message.parts if message is not None else ():
        if isinstance(part, DataPart) and part.data.get("type") == "form":
            return dict(part.data)
    return {}


def values_of(form: Json) -> Json:
    values = form.get("formData")
    return dict(values) if isinstance(values, dict) else {}


def submitted_values(message: Message) -> Json:
    """The field values in the data parts of `message` (a whole form echoed back is unwrapped)."""
    values: Json = {}
    for part in message.parts:
        if isinstance(part, DataPart):
            data = part.data
            inner = data.get("formData") if data.get("type") == "form" else None
            values.update(inner if isinstance(inner, dict) else data)
    return values


def form_part(
    values: Mapping[str, Any], errors: Mapping[str, str], receipt: Receipt | None
) -> DataPart:
    """The form; the receipt accepted so far rides along beside its fields."""
    data: Json = {"type": "form", "form": EXPENSE_FORM.schema(), "formData": dict(values)}
    if errors:
        data["errors"] = dict(errors)
    if receipt is not None:
        data["receipt"] = receipt.record()
    return DataPart(data=data)


def describe(errors: Mapping[str, str]) -> str:
    return "; ".join(f"{name} {problem}" for name, problem in errors.items())


class ExpenseAgent(accord.AgentExecutor):
    """Collects an expense through a form and records the reimbursement."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        first_turn = context.is_new_task
        earlier = last_form(context)
        await task.start_work()
        submitted = submitted_values(context.message)
        values = {**values_of(earlier), **await understand(context.text), **submitted}
        values = {name: value for name, value in values.items() if value not in (None, "")}
        errors = EXPENSE_FORM.errors(values)
        receipt = Receipt.from_record(earlier.get("receipt"))
        refused: str | None = None
        try:
            receipt = receipt_in(context.message) or receipt
        except ReceiptRefused as problem:
            refused = (f"Receipt not accepted: {problem}. Attach another with the form, or send "
                       "the form as it is.")  # fmt: skip
        question: str | None = None
        if first_turn and not submitted:  # the form first, filled in as far as we can
            question, errors = "Please check and complete this form.", {}
        elif errors:
            question = f"Please correct the form: {describe(errors)}."
        if question is not None or refused is not None:
            attached = f"Receipt {receipt} attached." if receipt is not None else None
            said = " ".join(text for text in (question, refused, attached) if text)
            await task.requires_input([TextPart(text=said), form_part(values, errors, receipt)])
            return
        record: Json = {
            "id": "EXP-" + new_id()[:8].upper(),
            "status": "approved",
            **values,
            "category": values.get("category", "other"),
            "submittedAt": utc_now(),
        }
        if receipt is not None:
            record["receipt"] = receipt.record()
        await task.add_artifact(
            DataPart(data=record), name="reimbursement", description="The reimbursement record."
        )
        await task.complete(
            f"Reimbursement {record['id']} approved: {values['amount']:,.2f} "
            f"{values['currency']} for {values['purpose']} on {values['date']}."
            + (f" Receipt: {receipt}." if receipt is not None else "")
        )


agent = accord.Agent(
    ExpenseAgent(),
    name="Expense",
    description="Reimburses expenses: fill in the form it sends, get a reimbursement record.",
    skills=[
        AgentSkill(
            id="reimburse_expense",
            name="Reimburse an expense",
            description=(
                "Answers with a reimbursement form (a JSON Schema in a data part), checks "
                "the submitted form, and records the approved reimbursement. A receipt may be "
                f"attached to a message as a file part with its bytes ({accepted_types()}, "
                f"at most {LIMIT}); it is recorded with the expense by name, type, size and "
                "SHA-256. Receipts by URI are not fetched."
            ),
            tags=["expenses", "reimbursement", "forms", "receipts"],
            examples=[
                "Please reimburse my taxi to the airport, 42.50 EUR on 2025-03-14",
                '{"date": "2025-03-14", "amount": 42.5, "currency": "EUR", "purpose": "taxi"}',
                "Train to Lyon, 64 EUR on 2025-03-12, with the receipt attached as a file",
            ],
        )
    ],
    input_modes=["text/plain", "application/json", *RECEIPT_TYPES],
    output_modes=["text/plain", "application/json"],
)
