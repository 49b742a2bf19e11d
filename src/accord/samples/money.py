"""Amounts and currencies in text, for the samples: "100 USD in EUR", "250 pounds to yen"."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from accord.samples.rates import known_currencies

Side = Literal["source", "target"]

CURRENCY_NAMES = {
    "dollar": "USD", "dollars": "USD", "bucks": "USD", "euro": "EUR", "euros": "EUR",
    "yen": "JPY", "pound": "GBP", "pounds": "GBP", "sterling": "GBP", "franc": "CHF",
    "francs": "CHF", "rupee": "INR", "rupees": "INR", "yuan": "CNY", "renminbi": "CNY",
    "rand": "ZAR", "peso": "MXN", "pesos": "MXN", "zloty": "PLN", "lira": "TRY",
    "baht": "THB", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW",
}  # fmt: skip
ENGLISH_WORDS = {"try"}
"""Lower-case words that are also currency codes but mean the word (TRY only when capitalised)."""
TARGET_MARKERS = {"to", "in", "into"}
SOURCE_MARKERS = {"from"}
TOKENS = re.compile(r"(?P<number>-?\d[\d,]*(?:\.\d+)?)|(?P<word>[A-Za-z]+|[$€£¥₹₩])")


@dataclass(frozen=True, slots=True)
class Conversion:
    """What the user asked to convert; None where they have not said yet."""

    amount: float | None = None
    source: str | None = None
    target: str | None = None

    def updated(self, other: Conversion) -> Conversion:
        """This request with what `other` says replacing what it said."""
        return Conversion(
            other.amount if other.amount is not None else self.amount,
            other.source or self.source,
            other.target or self.target,
        )

    @property
    def is_empty(self) -> bool:
        return self == Conversion()


def parse(text: str, unmarked_first: Side = "source") -> Conversion:
    """Read a request by rules: the first number, currencies by code, name or symbol.

    A currency after "to"/"in"/"into" is the target, after "from" the source; others fill
    `unmarked_first` first (the slot just asked for), then the other slot.
    """
    amount: float | None = None
    marked: dict[Side, str] = {}
    unmarked: list[str] = []
    previous = ""
    for match in TOKENS.finditer(text):
        if match["number"] is not None:
            if amount is None:
                amount = float(match["number"].replace(",", ""))
            previous = match["number"]
            continue
        word = match["word"]
        code = _currency(word)
        if code is not None:
            slot: Side | None = (
                "target"
                if previous.lower() in TARGET_MARKERS
                else "source"
                if previous.lower() in SOURCE_MARKERS
                else None
            )
            if slot is not None and slot not in marked:
                marked[slot] = code
            else:
                unmarked.append(code)
        previous = word
    order: list[Side] = ["target", "source"] if unmarked_first == "target" else ["source", "target"]
    for slot in order:
        if slot not in marked and unmarked:
            marked[slot] = unmarked.pop(0)
    return Conversion(amount, marked.get("source"), marked.get("target"))


def _currency(word: str) -> str | None:
    if word.lower() in CURRENCY_NAMES:
        return CURRENCY_NAMES[word.lower()]
    if len(word) != 3:
        return None
    if word.isupper():  # an unknown code too: the user then hears there is no rate for it
        return word
    known = word.upper() in known_currencies() and word.lower() not in ENGLISH_WORDS
    return word.upper() if known else None


def from_json(answer: Mapping[str, Any]) -> Conversion:
    """`{"amount", "source", "target"}` (a model's answer) as a Conversion, or ValueError."""
    amount = answer.get("amount")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int | float)):
        raise ValueError(f"amount {amount!r} is not a number")
    codes = [answer.get(slot) for slot in ("source", "target")]
    if any(code is not None and not isinstance(code, str) for code in codes):
        raise ValueError(f"currencies {codes!r} are not codes")
    source, target = (code.strip().upper() or None if code else None for code in codes)
    return Conversion(float(amount) if amount is not None else None, source, target)
