"""Currency: converts amounts with a rates tool — multi-turn tasks and streamed progress.

Shows: a task that asks for what is missing (`input-required`) and continues when the
client answers in the same task (the follow-up message carries the task's id); progress as
`working` status updates; the result as an artifact with a text and a data part.

    accord serve accord.samples.currency:agent
    accord send http://127.0.0.1:8000 "convert 100 USD" --stream
    accord send http://127.0.0.1:8000 "to yen" --task-id <the task id>

Rates come from the offline table shipped with accord, or from a live service
(`ACCORD_RATES_URL`, see `accord.samples.rates`); requests are read by rules or a model
(`accord.language`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, replace
from typing import Literal

import accord
from accord import language
from accord.agents import EventSink
from accord.samples.money import Conversion, from_json, parse
from accord.samples.rates import RatesUnavailable, configured_rates, known_currencies
from accord.types import AgentSkill, DataPart, TaskState, TextPart

Slot = Literal["amount", "source", "target"]

QUESTIONS: dict[Slot, str] = {
    "amount": "How much do you want to convert?",
    "source": "From which currency?",
    "target": "To which currency?",
}
MAX_AMOUNT = 1e12
PENDING = "pendingConversion"
"""Status message metadata holding what a question's answer completes."""

INSTRUCTIONS = (
    "Read a currency conversion request. Answer with JSON: "
    '{"amount": number or null, "source": ISO 4217 code or null, "target": ISO 4217 code or '
    "null}. Use null for anything the text does not say."
)


async def read_request(text: str, asked: Slot | None) -> Conversion:
    """What `text` asks for (an answer to the question about `asked`, when there was one)."""
    instructions = INSTRUCTIONS
    if asked is not None:
        instructions += f' The text answers the question "{QUESTIONS[asked]}".'
    return await language.understand(
        text,
        instructions=instructions,
        rules=lambda t: parse(t, "target" if asked == "target" else "source"),
        from_model=from_json,
    )


def problem(request: Conversion) -> tuple[Slot, str] | None:
    """The first thing missing or wrong in `request`, with the question to ask about it."""
    if request.amount is None:
        return "amount", QUESTIONS["amount"]
    if not math.isfinite(request.amount) or not 0 < request.amount <= MAX_AMOUNT:
        return "amount", f"The amount must be more than 0 and at most {MAX_AMOUNT:,.0f}. " + (
            QUESTIONS["amount"]
        )
    known = known_currencies()
    for slot in ("source", "target"):
        code = getattr(request, slot)
        if code is None:
            return slot, QUESTIONS[slot]
        if code not in known:
            listed = ", ".join(sorted(known))
            return slot, f"I have no rate for {code}. {QUESTIONS[slot]} I know {listed}."
    return None


def pending(context: accord.RequestContext) -> tuple[Conversion, Slot | None]:
    """What an earlier turn of this task understood, and what it asked for (if it asked)."""
    asked_status = context.status_on_arrival
    status_message = asked_status.message if asked_status is not None else None
    saved = (status_message.metadata or {}).get(PENDING) if status_message else None
    if not isinstance(saved, dict):
        return Conversion(), None
    asked = saved.get("asked")
    try:
        request = from_json(saved)
    except ValueError:
        return Conversion(), None
    return request, asked if asked in QUESTIONS else None


def format_amount(value: float) -> str:
    return f"{value:,.2f}"


class CurrencyAgent(accord.AgentExecutor):
    """Converts an amount once it knows how much, from which currency and to which."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        first_turn = context.is_new_task
        earlier, asked = pending(context)
        await task.start_work("Reading your request")
        said = await read_request(context.text, asked)
        if first_turn and said.is_empty:
            await task.reject(
                'I can only convert between currencies, for example "How much is 100 USD in EUR?"'
            )
            return
        request = earlier.updated(said)
        missing = problem(request)
        if missing is not None:
            slot, question = missing
            if slot != "amount" and getattr(request, slot) is not None:
                request = replace(request, **{slot: None})  # forget the unknown currency
            saved = {**asdict(request), "asked": slot}
            await task.requires_input(task.agent_message(question, metadata={PENDING: saved}))
            return
        assert request.amount is not None and request.source and request.target
        await task.update_status(
            TaskState.WORKING, f"Looking up rates from {request.source} to {request.target}"
        )
        try:
            quote = await configured_rates().quote(request.source, request.target)
        except RatesUnavailable as exc:
            await task.fail(f"No conversion: {exc}.")
            return
        await task.update_status(TaskState.WORKING, "Converting")
        result = request.amount * quote.rate
        summary = (
            f"{format_amount(request.amount)} {request.source} = "
            f"{format_amount(result)} {request.target} "
            f"(1 {request.source} = {quote.rate:.6g} {request.target}; {quote.provider})"
        )
        record = {
            "amount": request.amount,
            "source": request.source,
            "target": request.target,
            "rate": quote.rate,
            "result": round(result, 6),
            "date": quote.date,
            "provider": quote.provider,
        }
        await task.add_artifact([TextPart(text=summary), DataPart(data=record)], name="conversion")
        await task.complete()


agent = accord.Agent(
    CurrencyAgent(),
    name="Currency",
    description="Converts amounts between currencies; asks for what is missing.",
    skills=[
        AgentSkill(
            id="convert_currency",
            name="Convert currency",
            description=(
                "Converts an amount from one currency to another at current or offline "
                "reference rates; asks for the amount or a currency when the request lacks one."
            ),
            tags=["currency", "exchange rates", "multi-turn"],
            examples=["How much is 100 USD in EUR?", "convert 250 pounds to yen", "50 CHF"],
        )
    ],
    input_modes=["text/plain"],
    output_modes=["text/plain", "application/json"],
)
