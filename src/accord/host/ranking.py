"""Lexical ranking of remote agents for a request: BM25 over their skills' words."""

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
    counts: Counter[str]
    length: int


def _document(agent: RemoteAgent, skill_index: int | None) -> _Document:
    card = agent.card
    fields = [card.name, card.description]
    skill_name = card.name
    if skill_index is not None:
        skill = card.skills[skill_index]
        skill_name = skill.name
        # A skill's name and tags say what it is for more surely than its prose: count twice.
        fields += [skill.name, skill.name, skill.description, *skill.tags, *skill.tags]
        fields += skill.examples or []
    words = terms(" ".join(fields))
    return _Document(agent, skill_name, Counter(words), len(words))


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
            tf = document.counts[term]
            if tf:
                total += self.idf(term) * tf * (K1 + 1) / (tf + norm)
        return total

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
