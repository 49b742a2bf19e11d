"""The agent card schemas accord ships: built from the specification's, every sample card valid
against them, a card's problems told in words."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accord import create_app
from accord.codecs.card import card_versions
from accord.codecs.card_schemas import check_card
from accord.samples import coder, currency, expense, image, movies, vault
from card_schema_files import SHIPPED, SOURCES, SPEC_DIR, render, shipped_name
from live_server import serve_app

SAMPLES = [currency.agent, expense.agent, image.agent, movies.agent, coder.agent, vault.agent]


@pytest.mark.parametrize("version", sorted(SOURCES))
def test_shipped_schemas_are_built_from_the_specification(version: str) -> None:
    if not (SPEC_DIR / SOURCES[version]).is_file():
        pytest.skip(f"the specification's schemas are not in {SPEC_DIR}")
    shipped = (SHIPPED / shipped_name(version)).read_text(encoding="utf-8")
    assert shipped == render(version), "rebuild them: python tests/card_schema_files.py"


@pytest.mark.parametrize("agent", SAMPLES, ids=lambda a: a.name)
def test_every_sample_card_is_valid_in_each_version_it_speaks(agent: Any) -> None:
    with serve_app(create_app(agent)) as url:
        card = httpx.get(url + "/.well-known/agent-card.json").json()
    checks = check_card(card)
    assert [c.version for c in checks] == ["1.0", "0.3"]
    assert [c.problems for c in checks] == [[], []]
    assert "`protocolVersion`" in checks[0].notes[0]  # a 0.3 member 1.0 readers skip


def test_versions_a_card_speaks() -> None:
    assert card_versions({"protocolVersion": "0.2.5", "url": "x"}) == ["0.2"]
    assert card_versions({"supportedInterfaces": []}) == ["1.0"]
    assert card_versions({"name": "an old card"}) == ["0.3"]


def test_problems_are_told_in_words() -> None:
    [v03] = check_card(
        {
            "name": "n",
            "description": "d",
            "url": "http://x/",
            "version": "1",
            "protocolVersion": "0.3.0",
            "capabilities": {},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "preferredTransport": 5,
            "skills": [{"id": "a", "name": "A", "description": "d", "tags": [], "examples": "x"}],
        }
    )
    assert v03.problems == [
        "`preferredTransport` should be text, but it is a number (5)",
        '`skills[0].examples` should be a list, but it is text ("x")',
    ]
    v10, _ = check_card({"supportedInterfaces": [{"url": "http://x/"}], "protocolVersion": "0.3"})
    assert "`supportedInterfaces[0].protocolBinding` is missing; the specification requires it" in (
        v10.problems
    )
    assert "`name` is missing; the specification requires it" in v10.problems
