"""The currency sample's rates tool: an offline table by default, a live HTTP service if configured.

Set `ACCORD_RATES_URL` to a Frankfurter-style API (e.g. `https://api.frankfurter.app`):
`GET {url}/latest?base=USD&symbols=EUR` answering `{"base": "USD", "date": "2025-01-03",
"rates": {"EUR": 0.97}}`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Protocol

import httpx

RATES_URL_VARIABLE = "ACCORD_RATES_URL"
TIMEOUT = httpx.Timeout(15.0, connect=5.0)


class RatesUnavailable(Exception):
    """No rate could be had; the message says why, for the user."""


@dataclass(frozen=True, slots=True)
class Quote:
    """How many units of `target` one unit of `source` buys, on `date`, says `provider`."""

    source: str
    target: str
    rate: float
    date: str
    provider: str


class RatesProvider(Protocol):
    """Where exchange rates come from."""

    async def quote(self, source: str, target: str) -> Quote:
        """The rate from `source` to `target` (ISO 4217 codes); raises RatesUnavailable."""
        ...


@dataclass(frozen=True, slots=True)
class RateTable:
    """Rates of every currency against one base currency."""

    base: str
    date: str
    rates: dict[str, float]


@cache
def offline_table() -> RateTable:
    """The rate table shipped with accord (`data/rates.json`)."""
    text = resources.files("accord.samples").joinpath("data/rates.json").read_text("utf-8")
    raw = json.loads(text)
    return RateTable(raw["base"], raw["date"], {k: float(v) for k, v in raw["rates"].items()})


def known_currencies() -> frozenset[str]:
    """The currency codes the samples recognise in requests."""
    return frozenset(offline_table().rates)


class OfflineRates:
    """Cross rates computed from the shipped table."""

    async def quote(self, source: str, target: str) -> Quote:
        table = offline_table()
        for code in (source, target):
            if code not in table.rates:
                raise RatesUnavailable(f"the offline rate table has no rate for {code}")
        rate = table.rates[target] / table.rates[source]
        return Quote(source, target, rate, table.date, f"offline table of {table.date}")


class LiveRates:
    """Rates from a Frankfurter-style HTTP API at `url`."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    async def quote(self, source: str, target: str) -> Quote:
        if source == target:
            return Quote(source, target, 1.0, "", self.url)
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                response = await http.get(
                    f"{self.url}/latest", params={"base": source, "symbols": target}
                )
        except httpx.HTTPError as exc:
            raise RatesUnavailable(
                f"the rates service at {self.url} could not be reached ({type(exc).__name__})"
            ) from exc
        if response.status_code != 200:
            raise RatesUnavailable(
                f"the rates service at {self.url} has no rate from {source} to {target} "
                f"(HTTP {response.status_code})"
            )
        try:
            body = response.json()
            rate = float(body["rates"][target])
            date = str(body.get("date", ""))
        except (ValueError, LookupError, TypeError) as exc:
            raise RatesUnavailable(
                f"the rates service at {self.url} answered something that is not a rate"
            ) from exc
        return Quote(source, target, rate, date, self.url)


def configured_rates() -> RatesProvider:
    """The live service `ACCORD_RATES_URL` names, else the offline table."""
    url = os.environ.get(RATES_URL_VARIABLE, "").strip()
    return LiveRates(url) if url else OfflineRates()
