"""Registry: agents added by card URL, checked, re-checked with conditional GETs, marked down and
back up, searched; the one place the HTTP API and the A2A interface go through."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx

from accord.client.card_resolver import card_urls
from accord.registry.catalog import CardCatalog
from accord.registry.checks import CardRejected, CardUnreachable, Fetched, check, fetch
from accord.registry.records import ADDED, DOWN, UP, AgentRecord, Change, SearchPage
from accord.registry.search import SearchQuery

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

log = logging.getLogger(__name__)

CHECK_INTERVAL = 300.0
"""Seconds between two checks of every card (`accord registry serve --check-interval`)."""
FETCH_TIMEOUT = httpx.Timeout(10.0)
CHECKS_AT_ONCE = 8

CHANGED, UNCHANGED, SAME, WENT_DOWN, CAME_UP, STILL_DOWN, REJECTED = (
    "changed", "unchanged", "same", "down", "up", "still down", "rejected",
)  # fmt: skip
"""What a check found: `unchanged` is a 304 (nothing written), `same` a 200 with the card
as kept (only new validators written)."""


class UnknownAgent(LookupError):
    """No agent is kept under the URL given."""


class Registry:
    """The agents of a `CardCatalog`: `add` fetches and checks a card (its signature too, with
    `trusted_keys`), `refresh` checks it again, `run_checks` does so every `check_interval`
    seconds. Cards are fetched with `http` (default: a client of its own, no redirects)."""

    def __init__(
        self,
        catalog: CardCatalog,
        *,
        trusted_keys: TrustedKeys | None = None,
        http: httpx.AsyncClient | None = None,
        check_interval: float = CHECK_INTERVAL,
    ) -> None:
        self.catalog = catalog
        self.trusted_keys = trusted_keys
        self.check_interval = check_interval
        self._http = http
        self._own_http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._own_http = self._http = httpx.AsyncClient(timeout=FETCH_TIMEOUT)
        return self._http

    async def open(self) -> None:
        await self.catalog.open()

    async def close(self) -> None:
        if self._own_http is not None:
            await self._own_http.aclose()
            self._own_http = self._http = None
        await self.catalog.close()

    async def add(self, url: str) -> AgentRecord:
        """Fetch, check and keep the card at `url` (a card URL or an agent's base URL), kept
        under the URL it was found at; again, as a check, when kept already. CardRejected
        (with every reason) or CardUnreachable when it cannot be."""
        known = await self.find(url)
        if known is not None:
            await self.refresh(known.url)
            return await self._get(known.url)
        fetched = await fetch(self.http, _http_url(url))
        assert fetched is not None  # nothing conditional was asked
        checked = await check(fetched, self.trusted_keys)
        record = AgentRecord(
            fetched.url, fetched.document, UP, fetched.etag, fetched.last_modified,
            checked.signed_by,
        )  # fmt: skip
        detail = f"card of {checked.card.name}, version {checked.card.version}"
        await self.catalog.record(record, checked.card, ADDED, _noted(detail, checked.notes))
        return await self._get(fetched.url)

    async def remove(self, url: str) -> AgentRecord:
        """Forget the agent kept under `url` (or the card URL of the agent at `url`)."""
        known = await self.find(url)
        removed = await self.catalog.remove(known.url) if known is not None else None
        if removed is None:
            raise UnknownAgent(f"no agent is kept under {url}")
        return removed

    async def show(self, url: str) -> tuple[AgentRecord, list[Change]]:
        """The agent kept under `url` and its history, newest first."""
        known = await self.find(url)
        if known is None:
            raise UnknownAgent(f"no agent is kept under {url}")
        return known, await self.catalog.history(known.url)

    async def search(self, query: SearchQuery) -> SearchPage:
        return await self.catalog.search(query)

    async def find(self, url: str) -> AgentRecord | None:
        """The agent kept under `url`, or under the card URL of the agent at `url`."""
        for candidate in dict.fromkeys([url, *card_urls(url)]):
            found = await self.catalog.get(candidate)
            if found is not None:
                return found
        return None

    async def refresh(self, url: str) -> str:
        """Check the card kept under `url` again, conditionally: what was found (`UNCHANGED`,
        `SAME`, `CHANGED`, `WENT_DOWN`, `STILL_DOWN`, `REJECTED`; `CAME_UP` when it is
        back, unchanged). A 304 writes nothing unless the agent was down."""
        agent = await self._get(url)
        try:
            fetched = await fetch(self.http, agent.url, agent.etag, agent.last_modified)
        except (CardUnreachable, CardRejected) as exc:
            return await self._failed(agent, str(exc))
        if agent.status == DOWN:
            agent = replace(agent, status=UP, failures=0)
            await self.catalog.mark(agent, CAME_UP, "answers again")
            if fetched is None:
                return CAME_UP
        if fetched is None:
            return UNCHANGED
        return await self._fetched(agent, fetched)

    async def refresh_all(self) -> dict[str, str]:
        """`refresh` every agent, CHECKS_AT_ONCE at a time (an agent slow to answer holds up
        no other): what was found for each."""
        urls = await self.catalog.urls()
        limit = asyncio.Semaphore(CHECKS_AT_ONCE)

        async def checked(url: str) -> str | None:
            async with limit:
                try:
                    return await self.refresh(url)
                except UnknownAgent:  # removed meanwhile
                    return None

        found = await asyncio.gather(*(checked(url) for url in urls))
        return {url: outcome for url, outcome in zip(urls, found, strict=True) if outcome}

    async def run_checks(self) -> None:
        """Check every card every `check_interval` seconds, until cancelled."""
        while True:
            await asyncio.sleep(self.check_interval)
            try:
                changes = await self.refresh_all()
            except Exception:  # a database that is away now may be back next time
                log.exception("registry: checking the cards failed")
                continue
            for url, outcome in changes.items():
                if outcome not in (UNCHANGED, SAME):
                    log.info("registry: %s: %s", url, outcome)

    async def _fetched(self, agent: AgentRecord, fetched: Fetched) -> str:
        etag, last_modified = fetched.etag, fetched.last_modified
        if fetched.document == agent.document:
            if (agent.etag, agent.last_modified) != (etag, last_modified):
                # New validators for the same card: keep them, so the next check is a 304.
                await self.catalog.mark(replace(agent, etag=etag, last_modified=last_modified),
                                        "", "")  # fmt: skip
            return SAME
        try:
            checked = await check(fetched, self.trusted_keys)
        except CardRejected as exc:
            await self.catalog.note(agent, REJECTED, "; ".join(exc.reasons))
            return REJECTED
        changed = replace(
            agent, document=fetched.document, signed_by=checked.signed_by,
            revision=agent.revision + 1, etag=etag, last_modified=last_modified,
        )  # fmt: skip
        detail = _noted(describe_change(agent.document, fetched.document), checked.notes)
        await self.catalog.record(changed, checked.card, CHANGED, detail)
        return CHANGED

    async def _failed(self, agent: AgentRecord, reason: str) -> str:
        was_up = agent.status == UP
        agent = replace(agent, status=DOWN, failures=agent.failures + 1)
        await self.catalog.mark(agent, WENT_DOWN if was_up else "", reason)
        return WENT_DOWN if was_up else STILL_DOWN

    async def _get(self, url: str) -> AgentRecord:
        found = await self.catalog.get(url)
        if found is None:
            raise UnknownAgent(f"no agent is kept under {url}")
        return found


def describe_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What differs between two cards, in words: members changed, skills added and removed."""
    said = []
    members = sorted(k for k in before.keys() | after.keys() if k not in ("skills", "signatures"))
    changed = [k for k in members if before.get(k) != after.get(k)]
    if changed:
        said.append("changed " + ", ".join(changed))
    old = {s.get("id"): s for s in before.get("skills", []) if isinstance(s, dict)}
    new = {s.get("id"): s for s in after.get("skills", []) if isinstance(s, dict)}
    for verb, ids in (("added", new.keys() - old.keys()), ("removed", old.keys() - new.keys())):
        if ids:
            said.append(f"{verb} skill(s) {', '.join(sorted(map(str, ids)))}")
    edited = sorted(str(i) for i in old.keys() & new.keys() if old[i] != new[i])
    if edited:
        said.append(f"changed skill(s) {', '.join(edited)}")
    return "; ".join(said) or "re-signed"


def _noted(detail: str, notes: list[str]) -> str:
    """`detail`, with the schema problems of a legacy card that was taken all the same."""
    return f"{detail} (a legacy card: {'; '.join(notes)})" if notes else detail


def _http_url(url: str) -> str:
    text = url.strip()
    if not text.startswith(("http://", "https://")):
        raise CardUnreachable(f"{text!r} is not an http:// or https:// URL")
    return text
