"""The currency sample: asking for what is missing in the same task, progress, rate providers."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord.samples import currency
from accord.samples.money import Conversion, parse
from accord.samples.rates import offline_table
from accord.types import TaskState
from conftest import SchemaErrors
from live_server import serve_app
from rpc import Json
from sample_servers import (
    FakeChat,
    artifact_updates,
    check_card,
    closed_port_url,
    data_of,
    finished,
    follow,
    statuses,
    talk_to,
    task_id_of,
)


def offline_rate(source: str, target: str) -> float:
    rates = offline_table().rates
    return rates[target] / rates[source]


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(currency.agent, schema_errors)
    assert card["skills"][0]["id"] == "convert_currency"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How much is 100 USD in EUR?", Conversion(100, "USD", "EUR")),
        ("convert 1,250.50 pounds to yen", Conversion(1250.5, "GBP", "JPY")),
        ("to CHF from €20", Conversion(20, "EUR", "CHF")),
        ("$5 in ¥", Conversion(5, "USD", "JPY")),
        ("try converting 5 usd", Conversion(5, "USD", None)),
        ("what's the weather", Conversion()),
    ],
)
def test_rules_read_amount_and_currencies(text: str, expected: Conversion) -> None:
    assert parse(text) == expected


async def test_asks_for_the_target_then_converts_in_the_same_task() -> None:
    async with talk_to(currency.agent) as client:
        first = await follow(client, "convert 100 USD")
        task_id = task_id_of(first)
        assert statuses(first)[-1] == (TaskState.INPUT_REQUIRED, "To which currency?")

        second = await follow(client, "EUR", task_id=task_id)
        assert [text for state, text in statuses(second)] == [
            "Reading your request",
            "Looking up rates from USD to EUR",
            "Converting",
            "",
        ]
        assert statuses(second)[-1][0] is TaskState.COMPLETED
        [update] = artifact_updates(second)
        assert update.task_id == task_id
        record = data_of(update.artifact)
        rate = offline_rate("USD", "EUR")
        assert record["rate"] == pytest.approx(rate)
        assert record["result"] == pytest.approx(100 * rate)
        assert update.artifact.text.startswith(f"100.00 USD = {100 * rate:,.2f} EUR")

        task = finished(await client.get_task(task_id))
        user_turns = [m.text for m in task.history or [] if m.role == "user"]
        assert user_turns == ["convert 100 USD", "EUR"]


async def test_asks_how_much_and_takes_the_currency_from_the_answer() -> None:
    async with talk_to(currency.agent) as client:
        asked = finished(await client.send("convert to yen"), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert asked.status.message.text == "How much do you want to convert?"
        done = finished(await client.send("250 pounds", task_id=asked.id))
        assert asked.id == done.id
        assert done.artifacts is not None
        record = data_of(done.artifacts[0])
        assert (record["amount"], record["source"], record["target"]) == (250, "GBP", "JPY")


async def test_an_unknown_currency_is_asked_for_again() -> None:
    async with talk_to(currency.agent) as client:
        asked = finished(await client.send("100 XYZ to EUR"), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert asked.status.message.text.startswith("I have no rate for XYZ. From which currency?")
        done = finished(await client.send("CHF", task_id=asked.id))
        assert done.artifacts is not None
        assert data_of(done.artifacts[0])["source"] == "CHF"


async def test_a_negative_amount_is_refused_with_a_sentence() -> None:
    async with talk_to(currency.agent) as client:
        asked = finished(await client.send("-5 USD to EUR"), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert "must be more than 0" in asked.status.message.text


async def test_something_else_than_a_conversion_is_rejected() -> None:
    async with talk_to(currency.agent) as client:
        rejected = finished(await client.send("tell me a joke"), TaskState.REJECTED)
        assert rejected.status.message is not None
        assert "only convert between currencies" in rejected.status.message.text


async def test_a_live_rates_service_is_used_when_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[dict[str, str]] = []

    async def latest(request: Request) -> JSONResponse:
        asked.append(dict(request.query_params))
        return JSONResponse({"base": "USD", "date": "2026-01-02", "rates": {"EUR": 0.5}})

    service = Starlette(routes=[Route("/latest", latest)])
    with serve_app(service) as rates_url:
        monkeypatch.setenv("ACCORD_RATES_URL", rates_url)
        async with talk_to(currency.agent) as client:
            done = finished(await client.send("10 USD to EUR"))
    assert asked == [{"base": "USD", "symbols": "EUR"}]
    assert done.artifacts is not None
    record = data_of(done.artifacts[0])
    assert (record["rate"], record["result"], record["date"]) == (0.5, 5.0, "2026-01-02")
    assert record["provider"] == rates_url


async def test_an_unreachable_rates_service_fails_the_task_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACCORD_RATES_URL", closed_port_url())
    async with talk_to(currency.agent) as client:
        failed = finished(await client.send("10 USD to EUR"), TaskState.FAILED)
    assert failed.status.message is not None
    assert "could not be reached" in failed.status.message.text


async def test_a_configured_model_reads_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = 'Sure:\n```json\n{"amount": 7, "source": "gbp", "target": "JPY"}\n```'
    chat = FakeChat([FakeChat.text(answer)])
    with chat.configured(monkeypatch):
        monkeypatch.setenv("ACCORD_LLM_API_KEY", "secret")
        async with talk_to(currency.agent) as client:
            done = finished(await client.send("seven quid in yen, please"))
    assert done.artifacts is not None
    record = data_of(done.artifacts[0])
    assert (record["amount"], record["source"], record["target"]) == (7, "GBP", "JPY")
    [request] = chat.requests
    assert chat.authorizations == ["Bearer secret"]
    assert request["model"] == "test-model"
    messages: list[Json] = request["messages"]
    assert messages[-1] == {"role": "user", "content": "seven quid in yen, please"}


async def test_rules_answer_when_the_model_cannot_be_reached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACCORD_LLM_BASE_URL", closed_port_url())
    monkeypatch.setenv("ACCORD_LLM_MODEL", "test-model")
    async with talk_to(currency.agent) as client:
        done = finished(await client.send("100 USD to EUR"))
    assert done.artifacts is not None
    assert data_of(done.artifacts[0])["target"] == "EUR"
