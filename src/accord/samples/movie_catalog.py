"""The movies sample's tools over its film catalog (`data/movies.json`): search, details, cast."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

Json = dict[str, Any]

STOP_WORDS = frozenset(
    {
        "a", "an", "the", "of", "and", "in", "on", "to", "by", "with", "is", "was", "are",
        "were", "who", "what", "which", "when", "did", "does", "do", "me", "tell", "about",
        "film", "films", "movie", "movies", "directed", "director", "cast", "star", "stars",
        "starred", "starring", "acted", "actors", "actor", "played", "plays", "year",
        "released", "made", "out", "plot", "synopsis", "story", "how", "many", "list", "show",
        "give", "please",
    }
)  # fmt: skip
MAX_RESULTS = 5


@dataclass(frozen=True, slots=True)
class Film:
    id: str
    title: str
    year: int
    director: str
    cast: list[str]
    genres: list[str]
    synopsis: str

    def reference(self) -> Json:
        """How answers cite the film."""
        return {"id": self.id, "title": self.title, "year": self.year}


@cache
def catalog() -> dict[str, Film]:
    """The shipped films by id."""
    text = resources.files("accord.samples").joinpath("data/movies.json").read_text("utf-8")
    return {raw["id"]: Film(**raw) for raw in json.loads(text)["films"]}


def words(text: str) -> set[str]:
    """The meaningful words of `text`: lower case, accents and stop words dropped."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return set(re.findall(r"[a-z0-9]+", plain.replace("-", ""))) - STOP_WORDS


def score(film: Film, query: set[str]) -> int:
    """How well `film` matches the query words: a whole title, then whole names and genres."""
    title = words(film.title)
    points = 3 * len(query & title) + (10 if title and title == query else 0)
    for person in [film.director, *film.cast]:
        name = words(person)
        points += 4 if name and name <= query else len(query & name)
    for genre in film.genres:
        name = words(genre)
        points += 4 if name <= query else len(query & name)
    return points + (2 if str(film.year) in query else 0)


def search(query: str) -> Json:
    """Films matching `query` (words of a title, a director, an actor, a genre or a year)."""
    wanted = words(query)
    scored = [(score(film, wanted), film) for film in catalog().values()]
    best = max((points for points, _ in scored), default=0)
    # Keep the good matches only: one shared word ("Ford") is not a match for a whole name.
    good = sorted(
        (pair for pair in scored if pair[0] > 0 and 2 * pair[0] >= best),
        key=lambda pair: (-pair[0], pair[1].year),
    )
    return {"query": query, "results": [film.reference() for _, film in good[:MAX_RESULTS]]}


def details(film_id: str) -> Json:
    """A film's year, director, genres and synopsis."""
    film = catalog().get(film_id)
    if film is None:
        return {"error": f"no film with id {film_id!r}; search first"}
    return {
        **film.reference(),
        "director": film.director,
        "genres": film.genres,
        "synopsis": film.synopsis,
    }


def cast(film_id: str) -> Json:
    """A film's leading cast."""
    film = catalog().get(film_id)
    if film is None:
        return {"error": f"no film with id {film_id!r}; search first"}
    return {**film.reference(), "cast": film.cast}


TOOLS: Mapping[str, Callable[[str], Json]] = {"search": search, "details": details, "cast": cast}
ARGUMENT = {"search": "query", "details": "id", "cast": "id"}

TOOL_SPECS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": (function.__doc__ or name).strip(),
            "parameters": {
                "type": "object",
                "properties": {ARGUMENT[name]: {"type": "string"}},
                "required": [ARGUMENT[name]],
            },
        },
    }
    for name, function in TOOLS.items()
]
"""The tools as an OpenAI-compatible chat API declares them."""


def call_tool(name: str, arguments: Mapping[str, Any]) -> Json:
    """Run one tool; a wrong name or argument is answered as an error result, not raised."""
    tool = TOOLS.get(name)
    if tool is None:
        return {"error": f"there is no tool {name!r}; use one of {', '.join(TOOLS)}"}
    value = arguments.get(ARGUMENT[name])
    if not isinstance(value, str) or not value.strip():
        return {"error": f"{name} needs a non-empty string argument {ARGUMENT[name]!r}"}
    return tool(value)
