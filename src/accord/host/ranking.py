"""Lexical ranking of remote agents for a request: BM25 over their skills' words, each skill's
weight capped so that a card stuffed with keywords cannot win every request."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from accord.host.registry import RemoteAgent

K1 = 1.2
"""How quickly repeating a word in a skill stops adding to its score."""
B = 0.75
"""How much a long skill description is penalized against a short one."""
MAX_TERM_COUNT = 3
"""The most a word counts in one skill, however often the card repeats it."""
MAX_TERMS = 40
"""The distinct words of one skill that count (its name and tags first)."""
SKILL_WEIGHT = 48.0
"""The weight one skill spreads over its words: a skill weighing more (claiming many words,
each as strongly as it can) has every word scaled down, so claiming every word of every
request matches each of them weakly, and a skill that describes itself wins its own words."""
FIELD_WORDS = {"name": 8, "tags": 10, "description": 80, "examples": 5}
"""How much of each field counts: words of a name or description, tags, examples."""
EXACT_BONUS = 1.5
"""A skill whose whole name (two words or more) the request says scores this much more."""

STOPWORDS = frozenset({
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "by", "can",
    "could", "do", "does", "for", "from", "get", "give", "has", "have", "how", "i", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "show", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to",
    "us", "was", "we", "what", "when", "where", "which", "who", "whom", "will", "with",
    "would", "you", "your",
})  # fmt: skip
WORD = re.compile(r"[^\W_]+")


def stem(word: str) -> str:
    """A crude English stem, so `converts`, `converting` and `convert` meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The words of `text` that carry meaning, stemmed (numbers and stop words left out)."""
    words = WORD.findall(text.lower())
    return [stem(w) for w in words if w not in STOPWORDS and not w.isdigit()]


@dataclass(frozen=True, slots=True)
class Match:
    """How well one agent fits a request: its best skill and that skill's score."""

    agent: RemoteAgent
    skill: str
    score: float


@dataclass(frozen=True, slots=True)
class _Document:
    agent: RemoteAgent
    skill: str
    counts: dict[str, float]
    length: float
    name: tuple[str, ...]  # the skill's name as terms, for exact matches


def _document(agent: RemoteAgent, skill_index: int | None) -> _Document:
    card = agent.card
    skill_name = card.name
    # (words, weight): a skill's name and tags say what it is for more surely than its prose.
    fields: list[tuple[list[str], int]] = []
    if skill_index is not None:
        skill = card.skills[skill_index]
        skill_name = skill.name
        fields.append((_words(skill.name, "name"), 2))
        fields += [(terms(tag), 2) for tag in skill.tags[: FIELD_WORDS["tags"]]]
        fields.append((_words(skill.description, "description"), 1))
        examples = (skill.examples or [])[: FIELD_WORDS["examples"]]
        fields.append(([w for text in examples for w in terms(text)], 1))
    fields.append((_words(card.name, "name"), 1))
    fields.append((_words(card.description, "description"), 1))
    counts: dict[str, int] = {}
    for words, weight in fields:
        for word in dict.fromkeys(words):  # a word counts once per field
            if word in counts or len(counts) < MAX_TERMS:
                counts[word] = min(counts.get(word, 0) + weight, MAX_TERM_COUNT)
    name = tuple(_words(skill_name, "name")) if skill_index is not None else ()
    weight = sum(counts.values())
    scale = min(1.0, SKILL_WEIGHT / weight) if weight else 1.0
    weights = {word: count * scale for word, count in counts.items()}
    return _Document(agent, skill_name, weights, weight * scale, name)


def _words(text: str, field: str) -> list[str]:
    """The terms of `text`, as many as count for `field`."""
    return terms(text)[: FIELD_WORDS[field]]


def _says(query: Sequence[str], name: tuple[str, ...]) -> bool:
    """Whether the terms of `query` hold `name` (two terms or more) in a row."""
    size = len(name)
    return size >= 2 and any(tuple(query[i : i + size]) == name for i in range(len(query)))


class SkillIndex:
    """The skills of some agents, ready to rank them for requests (BM25, each skill a document).

    An agent's score for a request is the score of its best skill; the agent's name and
    description count as part of every skill (an agent without skills is one document).
    """

    def __init__(self, agents: Sequence[RemoteAgent]) -> None:
        self.documents = [
            _document(agent, index)
            for agent in agents
            for index in (range(len(agent.card.skills)) if agent.card.skills else [None])
        ]
        self.frequency: Counter[str] = Counter()
        for document in self.documents:
            self.frequency.update(document.counts.keys())
        lengths = [d.length for d in self.documents]
        self.average_length = sum(lengths) / len(lengths) if lengths else 0.0

    def idf(self, term: str) -> float:
        n, df = len(self.documents), self.frequency[term]
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def score(self, query: Sequence[str], document: _Document) -> float:
        total = 0.0
        norm = K1 * (1 - B + B * document.length / (self.average_length or 1))
        for term in set(query):
            tf = document.counts.get(term, 0)
            if tf:
                total += self.idf(term) * tf * (K1 + 1) / (tf + norm)
        return total * EXACT_BONUS if _says(query, document.name) else total

    def rank(self, request: str) -> list[Match]:
        """The agents with a skill sharing words with `request`, best first (ties: in order)."""
        query = terms(request)
        best: dict[str, Match] = {}
        for document in self.documents:
            score = self.score(query, document)
            known = best.get(document.agent.url)
            if score > 0 and (known is None or score > known.score):
                best[document.agent.url] = Match(document.agent, document.skill, score)
        return sorted(best.values(), key=lambda match: -match.score)
