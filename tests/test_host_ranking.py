"""How the host chooses agents: the lexical ranking of skills, splitting requests, a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord import Agent, Client, create_app
from accord.host import AgentRegistry, RemoteAgent, host_agent
from accord.host.planning import plan, plan_by_rules, split
from accord.host.ranking import SkillIndex, stem, terms
from accord.samples import coder, currency, echo, expense, image, movies, vault
from accord.types import AgentSkill
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from sample_servers import FakeChat, finished

SAMPLES: dict[str, Agent] = {
    "currency": currency.agent,
    "expense": expense.agent,
    "image": image.agent,
    "movies": movies.agent,
    "coder": coder.agent,
    "vault": vault.agent,
}
AGENTS = [RemoteAgent(f"http://{name}", a.card(f"http://{name}/")) for name, a in SAMPLES.items()]
INDEX = SkillIndex(AGENTS)


def remote(name: str, *skills: AgentSkill, description: str = "") -> RemoteAgent:
    agent = Agent(echo.agent.executor, name=name, description=description or name, skills=skills)
    return RemoteAgent(f"http://{name.lower()}", agent.card(f"http://{name.lower()}/"))


def skill(name: str, description: str, tags: list[str], examples: list[str] = []) -> AgentSkill:  # noqa: B006
    return AgentSkill(id=name, name=name, description=description, tags=tags, examples=examples)


@pytest.mark.parametrize(
    ("request_text", "winner"),
    [
        ("How much is 100 USD in EUR?", "Currency"),
        ("convert 250 pounds to yen", "Currency"),
        ("convert 100 USD", "Currency"),
        ("Please reimburse my taxi to the airport, 42.50 EUR on 2025-03-14", "Expense"),
        ("I need a reimbursement for my expenses", "Expense"),
        ("draw three red circles on a night sky", "Image"),
        ("a picture of a gold star over the sea", "Image"),
        ("Who directed Alien?", "Movies"),
        ("which films star Keanu Reeves", "Movies"),
        ("write a CLI todo app in python", "Coder"),
        ("make me a static web page", "Coder"),
        ("open the vault and tell me the secret", "Vault"),
    ],
)
def test_the_sample_whose_skills_fit_wins(request_text: str, winner: str) -> None:
    ranked = INDEX.rank(request_text)
    assert ranked[0].agent.name == winner, [(m.agent.name, m.score) for m in ranked]


def test_words_no_skill_has_rank_nobody() -> None:
    assert INDEX.rank("hello there") == []
    assert INDEX.rank("") == []
    assert INDEX.rank("1234 5678") == []  # numbers say nothing about skills


def test_rare_words_weigh_more_than_common_ones() -> None:
    weather = remote("Weather", skill("Forecast", "The weather forecast for a city.", ["weather"]))
    news = remote("News", skill("Headlines", "The news headlines for a city.", ["news"]))
    index = SkillIndex([weather, news])
    [first, second] = index.rank("news for my city")
    assert (first.agent.name, second.agent.name) == ("News", "Weather")
    assert first.score > second.score > 0
    assert first.skill == "Headlines"


def test_an_agents_best_skill_counts_and_ties_keep_the_registry_order() -> None:
    tools = remote(
        "Tools",
        skill("Hammer", "Drives nails.", ["nails"]),
        skill("Saw", "Cuts wood.", ["wood"]),
    )
    twin = remote("Twin", skill("Saw", "Cuts wood.", ["wood"]))
    ranked = SkillIndex([tools, twin]).rank("cut some wood")
    assert [(m.agent.name, m.skill) for m in ranked] == [("Tools", "Saw"), ("Twin", "Saw")]
    assert ranked[0].score == ranked[1].score
    assert [m.agent.name for m in SkillIndex([twin, tools]).rank("cut some wood")] == [
        "Twin",
        "Tools",
    ]


def test_an_agent_without_skills_is_ranked_by_its_name_and_description() -> None:
    plain = remote("Translator", description="Translates text between languages.")
    assert [m.agent.name for m in SkillIndex([plain]).rank("translate this")] == ["Translator"]


def test_terms_are_stemmed_lowercase_words_without_stop_words_or_numbers() -> None:
    assert terms("Converting 100 Dollars to the EUROS, please!") == ["convert", "dollar", "euro"]
    assert [stem(w) for w in ("currencies", "drawing", "starred", "glass", "is")] == [
        "currency",
        "draw",
        "starr",
        "glass",
        "is",
    ]


def test_requests_split_at_sentences_semicolons_and_joining_words() -> None:
    assert split("draw a cat; then convert 5 GBP to JPY. Also who starred in Heat?") == (
        ["draw a cat", "convert 5 GBP to JPY.", "who starred in Heat?"],
        ["; then ", " Also "],
    )
    assert split("convert 100 USD to EUR, and draw a cat")[0] == [
        "convert 100 USD to EUR",
        "draw a cat",
    ]
    assert split("42.50 EUR on 2025-03-14") == (["42.50 EUR on 2025-03-14"], [])


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "convert 100 USD to EUR and draw a picture of a cat",
            [("Currency", "convert 100 USD to EUR"), ("Image", "draw a picture of a cat")],
        ),
        (  # neighbouring pieces for one agent stay one request
            "three red circles and a gold star on a night sky",
            [("Image", "three red circles and a gold star on a night sky")],
        ),
        (  # a piece no skill matches goes with the one before it
            "Who directed Alien and when was it released?",
            [("Movies", "Who directed Alien and when was it released?")],
        ),
        (
            "draw a cat; then convert 5 GBP to JPY. Also who starred in Heat?",
            [
                ("Image", "draw a cat"),
                ("Currency", "convert 5 GBP to JPY."),
                ("Movies", "who starred in Heat?"),
            ],
        ),
        ("good morning and good night to you", [("Image", "good morning and good night to you")]),
        ("hello and goodbye", []),
    ],
)
def test_rules_split_a_request_between_agents(
    request_text: str, expected: list[tuple[str, str]]
) -> None:
    assignments = plan_by_rules(request_text, INDEX)
    assert [(a.agent.name, a.text) for a in assignments] == expected


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("@image convert 100 USD", [("Image", "convert 100 USD")]),
        ("@Currency: how much is a dollar", [("Currency", "how much is a dollar")]),
        ("@nobody convert 100 USD", [("Currency", "@nobody convert 100 USD")]),
        ("email me @image", [("Image", "email me @image")]),
    ],
)
async def test_an_agent_named_with_an_at_sign_gets_the_request(
    request_text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(a.agent.name, a.text) for a in await plan(request_text, AGENTS)] == expected


async def test_a_configured_model_routes_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = FakeChat(
        [FakeChat.text('{"tasks": [{"agent": 2, "request": "pay back my hotel night, 120 EUR"}]}')]
    )
    with chat.configured(monkeypatch):
        [assignment] = await plan("I had a hotel night, 120 EUR, please pay me back", AGENTS)
    assert (assignment.agent.name, assignment.text) == (
        "Expense",
        "pay back my hotel night, 120 EUR",
    )
    [asked] = chat.requests
    instructions = asked["messages"][0]["content"]
    assert "2. Expense: " in instructions and "Reimburse an expense" in instructions
    assert asked["messages"][1]["content"] == "I had a hotel night, 120 EUR, please pay me back"


@pytest.mark.parametrize(
    "answer",
    [
        "I would ask the currency agent.",
        '{"tasks": [{"agent": 99, "request": "x"}]}',
        '{"tasks": [{"agent": 1, "request": ""}]}',
        '{"tasks": "currency"}',
    ],
)
async def test_the_ranking_answers_when_the_model_says_nonsense(
    monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    with FakeChat([FakeChat.text(answer)]).configured(monkeypatch):
        [assignment] = await plan("convert 100 USD to EUR", AGENTS)
    assert assignment.agent.name == "Currency"


async def test_the_ranking_answers_when_the_model_is_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACCORD_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ACCORD_LLM_MODEL", "test-model")
    [assignment] = await plan("Who directed Alien?", AGENTS)
    assert assignment.agent.name == "Movies"


async def test_the_host_delegates_where_the_model_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = '{"tasks": [{"agent": 2, "request": "repeat after me"}]}'
    with (
        served(create_app(echo.agent)) as first,
        served(create_app(echo.message_agent)) as second,
        FakeChat([FakeChat.text(route)]).configured(monkeypatch),
    ):
        registry = AgentRegistry(tmp_path / "agents.json", [first, second])
        with served(create_app(host_agent(registry))) as url:
            async with Client(url, timeout=SAFETY_TIMEOUT) as client:
                task = finished(await client.send("say something"))
    assert task.status.message is not None
    assert task.status.message.text == "Echo (message): repeat after me"


STUFFED_WORDS = " ".join(
    request
    for request in (
        "How much is 100 USD in EUR convert 250 pounds to yen currency exchange rates",
        "draw three red circles on a night sky picture of a gold star over the sea image",
        "Who directed Alien which films star Keanu Reeves movie",
        "reimburse my taxi to the airport reimbursement expenses receipt",
        "write a CLI todo app in python make me a static web page code",
    )
)


def stuffed_agent() -> RemoteAgent:
    """A card claiming every word of every request, each many times over, taking anything."""
    words = terms(STUFFED_WORDS)
    return remote(
        "Everything",
        skill("Everything " * 20, STUFFED_WORDS * 20, words * 20, [STUFFED_WORDS] * 20),
        skill("convert", "convert convert convert", ["convert"] * 50),
        description=STUFFED_WORDS * 10,
    )


@pytest.mark.parametrize(
    ("request_text", "winner"),
    [
        ("convert 100 USD to EUR", "Currency"),
        ("How much is 100 USD in EUR?", "Currency"),
        ("draw three red circles on a night sky", "Image"),
        ("Who directed Alien?", "Movies"),
        ("write a CLI todo app in python", "Coder"),
        ("I need a reimbursement for my expenses", "Expense"),
    ],
)
def test_a_keyword_stuffed_card_loses_to_the_honest_one(request_text: str, winner: str) -> None:
    # Registered first, so that a tie would go to it.
    index = SkillIndex([stuffed_agent(), *AGENTS])
    ranked = index.rank(request_text)
    assert ranked[0].agent.name == winner, [(m.agent.name, round(m.score, 2)) for m in ranked]


def test_a_request_naming_a_skill_prefers_that_skill() -> None:
    summaries = remote("Summaries", skill("Summarize text", "Summarizes text, and can translate"
                       " text first.", ["summary", "text", "translate"]))  # fmt: skip
    translator = remote(
        "Translator", skill("Translate text", "Turns text from one language into another.", [])
    )
    index = SkillIndex([summaries, translator])
    assert index.rank("translate text: bonjour tout le monde")[0].agent.name == "Translator"
    assert index.rank("summarize text: the minutes")[0].agent.name == "Summaries"
