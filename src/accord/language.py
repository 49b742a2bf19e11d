"""Language understanding for the samples and the host: rules, or a chat model when configured.

By default every sample parses requests with deterministic rules (no network, no key). Set
`ACCORD_LLM_BASE_URL` (an OpenAI-compatible API, e.g. `https://api.openai.com/v1`),
`ACCORD_LLM_MODEL` and, if the endpoint needs one, `ACCORD_LLM_API_KEY` to have a model read
requests instead (through `POST {base}/chat/completions`). What a model answers is checked
like any user input; if the model cannot be reached or answers nonsense, the sample falls
back to its rules.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

log = logging.getLogger(__name__)

BASE_URL_VARIABLE = "ACCORD_LLM_BASE_URL"
API_KEY_VARIABLE = "ACCORD_LLM_API_KEY"
MODEL_VARIABLE = "ACCORD_LLM_MODEL"
TIMEOUT = httpx.Timeout(60.0, connect=10.0)

T = TypeVar("T")
Json = dict[str, Any]


class ModelError(Exception):
    """The model could not be reached, or its answer was not what was asked for."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool the model (or a rule) wants called, with its arguments."""

    name: str
    arguments: Json
    id: str = ""


@dataclass(frozen=True, slots=True)
class ChatReply:
    """One answer of the model: text, or tool calls to make before it answers."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)


class ChatModel:
    """An OpenAI-compatible chat-completions endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    @classmethod
    def from_env(cls) -> ChatModel | None:
        """The model the environment configures, or None (then the samples use their rules)."""
        base_url = os.environ.get(BASE_URL_VARIABLE, "").strip()
        model = os.environ.get(MODEL_VARIABLE, "").strip()
        if not base_url or not model:
            return None
        return cls(base_url, model, os.environ.get(API_KEY_VARIABLE, "").strip() or None)

    async def chat(self, messages: Sequence[Json], tools: Sequence[Json] = ()) -> ChatReply:
        """The model's next turn in the conversation `messages` (offering it `tools`)."""
        body: Json = {"model": self.model, "messages": list(messages), "temperature": 0}
        if tools:
            body["tools"] = list(tools)
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                response = await http.post(self.url, json=body, headers=self.headers)
            response.raise_for_status()
            message = response.json()["choices"][0]["message"]
            content = message.get("content")
            calls = [
                ToolCall(
                    str(call["function"]["name"]),
                    _json_object(call["function"].get("arguments") or "{}"),
                    str(call.get("id", "")),
                )
                for call in message.get("tool_calls") or ()
            ]
        except (httpx.HTTPError, ValueError, LookupError, TypeError, AttributeError) as exc:
            raise ModelError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if content is not None and not isinstance(content, str):
            raise ModelError(f"{self.url}: the reply's content is not text")
        return ChatReply(content, calls)

    async def extract(self, instructions: str, text: str) -> Json:
        """A JSON object the model reads out of `text` as `instructions` describe."""
        reply = await self.chat(
            [
                {"role": "system", "content": instructions + " Answer with one JSON object only."},
                {"role": "user", "content": text},
            ]
        )
        return _json_object(reply.content or "")


def _json_object(text: str) -> Json:
    """The JSON object in `text` (models like to wrap it in prose or code fences)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ModelError(f"expected a JSON object, got {text[:200]!r}")
    try:
        value = json.loads(text[start : end + 1])
    except ValueError as exc:
        raise ModelError(f"expected a JSON object, got {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise ModelError(f"expected a JSON object, got {text[:200]!r}")
    return value


async def understand(
    text: str,
    *,
    instructions: str,
    rules: Callable[[str], T],
    from_model: Callable[[Mapping[str, Any]], T],
) -> T:
    """What `text` means: `rules(text)`, or with a model configured what it extracts.

    The model gets `instructions` (which say what JSON to answer with); `from_model` turns its
    JSON into the same result the rules give, and raises ValueError or ModelError when the
    JSON does not fit. Then, as when the model cannot be reached, the rules answer.
    """
    model = ChatModel.from_env()
    if model is None:
        return rules(text)
    try:
        return from_model(await model.extract(instructions, text))
    except (ModelError, ValueError, TypeError) as exc:
        log.warning("language model failed, using the built-in rules: %s", exc)
        return rules(text)
