"""The registry's card checks take whatever a URL serves: a card is read or refused with
reasons, never anything else (property tests over any JSON, and over cards with one member
changed)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from accord.registry.checks import CardRejected, CheckedCard, Fetched, check
from accord.samples import currency

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=12,
)  # fmt: skip
CARD = {
    **currency.agent.card("http://127.0.0.1:8001/").model_dump(
        mode="json", by_alias=True, exclude_none=True
    ),
    "protocolVersion": "0.3.0",
}


async def outcome(document: dict[str, Any]) -> CheckedCard | CardRejected:
    try:
        return await check(Fetched("http://127.0.0.1:8001/card", document, None, None))
    except CardRejected as exc:
        assert exc.reasons and all(isinstance(r, str) and r for r in exc.reasons)
        return exc


@settings(max_examples=150, deadline=None)
@given(document=st.dictionaries(st.text(max_size=12), JSON, max_size=6))
async def test_any_json_object_is_read_or_refused_with_reasons(document: dict[str, Any]) -> None:
    assert isinstance(await outcome(document), CheckedCard | CardRejected)


@settings(max_examples=150, deadline=None)
@given(member=st.sampled_from(sorted(CARD)) | st.text(max_size=12), value=JSON)
async def test_a_card_with_any_member_changed_is_read_or_refused(member: str, value: Any) -> None:
    assert isinstance(await outcome({**CARD, member: value}), CheckedCard | CardRejected)


async def test_the_sample_card_is_taken() -> None:
    taken = await outcome(CARD)
    assert isinstance(taken, CheckedCard) and taken.card.name == "Currency"
