"""The movies sample: a tool loop over its catalog (by rules or a model) that cites its lookups."""

from __future__ import annotations

import json

import pytest

from accord.samples import movies
from accord.samples.movie_catalog import catalog, search
from accord.types import Artifact, TaskState
from conftest import SchemaErrors
from rpc import Json
from sample_servers import (
    FakeChat,
    artifact_updates,
    check_card,
    data_of,
    finished,
    follow,
    statuses,
    talk_to,
)


def tools_called(artifact: Artifact) -> list[tuple[str, Json]]:
    return [(call["tool"], call["arguments"]) for call in data_of(artifact)["toolCalls"]]


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(movies.agent, schema_errors)
    assert card["skills"][0]["examples"]


def test_the_catalog_ships_about_thirty_complete_films() -> None:
    films = catalog()
    assert 28 <= len(films) <= 40
    for film in films.values():
        assert film.title and film.director and film.cast and film.genres and film.synopsis
        assert 1900 < film.year < 2030


async def test_a_director_question_streams_its_tool_calls_and_cites_them() -> None:
    async with talk_to(movies.agent) as client:
        events = await follow(client, "Who directed Alien?")
    progress = [text for state, text in statuses(events) if state is TaskState.WORKING]
    assert progress == [
        "",
        "Calling search(query='Who directed Alien?')",
        "Calling details(id='alien-1979')",
    ]
    assert statuses(events)[-1][0] is TaskState.COMPLETED
    [update] = artifact_updates(events)
    answer = update.artifact
    assert answer.text == "Alien (1979) was directed by Ridley Scott.\nSources: Alien (1979)"
    assert tools_called(answer) == [
        ("search", {"query": "Who directed Alien?"}),
        ("details", {"id": "alien-1979"}),
    ]
    assert data_of(answer)["sources"] == [{"id": "alien-1979", "title": "Alien", "year": 1979}]
    assert data_of(answer)["toolCalls"][1]["result"]["director"] == "Ridley Scott"


@pytest.mark.parametrize(
    ("question", "tools", "answer"),
    [
        (
            "Who starred in The Matrix?",
            ["search", "cast"],
            "The Matrix (1999) stars Keanu Reeves, Laurence Fishburne, Carrie-Anne Moss and "
            "Hugo Weaving.",
        ),
        ("When was Casablanca released?", ["search", "details"], "Casablanca came out in 1942."),
        (
            "Which films did Harrison Ford star in?",
            ["search"],
            "From my catalog: Star Wars (1977), Raiders of the Lost Ark (1981), "
            "Blade Runner (1982).",
        ),
        ("Who directed Star Wars?", ["search", "details"], "was directed by George Lucas."),
    ],
)
async def test_questions_pick_their_tools(question: str, tools: list[str], answer: str) -> None:
    async with talk_to(movies.agent) as client:
        task = finished(await client.send(question))
    assert task.artifacts is not None
    [artifact] = task.artifacts
    assert [name for name, _ in tools_called(artifact)] == tools
    assert answer in artifact.text
    assert "\nSources: " in artifact.text


async def test_a_film_not_in_the_catalog_is_said_to_be_missing() -> None:
    async with talk_to(movies.agent) as client:
        task = finished(await client.send("Who directed the unicorn documentary?"))
    assert task.artifacts is not None
    assert task.artifacts[0].text == "I found no film matching that question in my catalog."
    assert data_of(task.artifacts[0])["sources"] == []


async def test_an_empty_question_is_asked_for() -> None:
    async with talk_to(movies.agent) as client:
        asked = finished(await client.send(""), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert "Who directed Alien?" in asked.status.message.text
        done = finished(await client.send("Tell me about Parasite", task_id=asked.id))
    assert done.artifacts is not None
    assert "Bong Joon-ho" in done.artifacts[0].text


def test_search_finds_people_by_their_whole_name() -> None:
    found = [film["id"] for film in search("movies with Robert De Niro")["results"]]
    assert found == ["the-godfather-part-ii-1974", "taxi-driver-1976", "goodfellas-1990"]


async def test_a_configured_model_runs_the_tool_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = FakeChat(
        [
            FakeChat.tool_call("search", query="alien"),
            FakeChat.tool_call("lookup", id="alien-1979"),
            FakeChat.tool_call("details", id="alien-1979"),
            FakeChat.text("Ridley Scott directed Alien (1979)."),
        ]
    )
    with chat.configured(monkeypatch):
        async with talk_to(movies.agent) as client:
            task = finished(await client.send("Who made Alien?"))
    assert task.artifacts is not None
    [artifact] = task.artifacts
    assert artifact.text == "Ridley Scott directed Alien (1979).\nSources: Alien (1979)"
    assert [name for name, _ in tools_called(artifact)] == ["search", "lookup", "details"]
    assert "there is no tool 'lookup'" in data_of(artifact)["toolCalls"][1]["result"]["error"]

    first, last = chat.requests[0], chat.requests[-1]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["search", "details", "cast"]
    assert first["messages"][-1] == {"role": "user", "content": "Who made Alien?"}
    tool_results = [m for m in last["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 3
    assert json.loads(tool_results[-1]["content"])["director"] == "Ridley Scott"
    assert tool_results[-1]["tool_call_id"] == "call-details"


BROKEN_CALL = {
    "role": "assistant",
    "tool_calls": [{"id": "x", "function": {"name": "search", "arguments": "not json"}}],
}


@pytest.mark.parametrize(
    "replies",
    [
        [FakeChat.tool_call("search", query="alien")],  # then the endpoint fails
        [{"role": "assistant", "content": ["not", "text"]}],
        [BROKEN_CALL],
        [{"role": "assistant", "content": None}],
    ],
    ids=["breaks-off", "content-not-text", "arguments-not-json", "says-nothing"],
)
async def test_rules_answer_when_the_model_fails(
    replies: list[Json], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = FakeChat(replies)
    with chat.configured(monkeypatch):
        async with talk_to(movies.agent) as client:
            task = finished(await client.send("Who directed Alien?"))
    assert task.artifacts is not None
    assert task.artifacts[0].text.startswith("Alien (1979) was directed by Ridley Scott.")
    assert chat.requests
