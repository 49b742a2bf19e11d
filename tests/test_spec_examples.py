"""The JSON examples in section 9 of the A2A 0.3.0 specification, read and rewritten by accord."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from accord.types import (
    A2AModel,
    A2ARequest,
    AgentCard,
    CancelTaskSuccessResponse,
    DeleteTaskPushNotificationConfigSuccessResponse,
    GetAuthenticatedExtendedCardSuccessResponse,
    GetTaskPushNotificationConfigSuccessResponse,
    GetTaskSuccessResponse,
    JSONRPCErrorResponse,
    ListTaskPushNotificationConfigSuccessResponse,
    Message,
    SendMessageSuccessResponse,
    SendStreamingMessageSuccessResponse,
    SetTaskPushNotificationConfigSuccessResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from conftest import SchemaErrors
from spec_files import SPECIFICATION_PATH, read_spec_file

SECTION_9 = re.compile(r"^## 9\. .*?(?=^## 10\.)", re.MULTILINE | re.DOTALL)
SUBSECTION = re.compile(r"^### (9\.\d+)\.", re.MULTILINE)
JSON_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```json[ \t]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
WHITESPACE = re.compile(r"\s*")
SSE_DATA = re.compile(r"^[ \t]*data:[ \t]?", re.MULTILINE)
JSON_STRING = r'"(?:[^"\\]|\\.)*"'
# Each pattern keeps JSON strings (group 1) and removes the rest of what it matches.
COMMENT = re.compile(rf"({JSON_STRING})|//[^\n]*|/\*.*?\*/", re.DOTALL)
TRAILING_COMMA = re.compile(rf"({JSON_STRING})|,(?=\s*[}}\]])")

REQUEST_MODELS: dict[str, type[A2AModel]] = {
    request.model_fields["method"].default: request for request in get_args(A2ARequest)
}
# A success response's model follows from the method of the request it answers.
RESPONSE_MODELS: dict[str, type[A2AModel]] = {
    "message/send": SendMessageSuccessResponse,
    "message/stream": SendStreamingMessageSuccessResponse,
    "tasks/resubscribe": SendStreamingMessageSuccessResponse,
    "tasks/get": GetTaskSuccessResponse,
    "tasks/cancel": CancelTaskSuccessResponse,
    "tasks/pushNotificationConfig/set": SetTaskPushNotificationConfigSuccessResponse,
    "tasks/pushNotificationConfig/get": GetTaskPushNotificationConfigSuccessResponse,
    "tasks/pushNotificationConfig/list": ListTaskPushNotificationConfigSuccessResponse,
    "tasks/pushNotificationConfig/delete": DeleteTaskPushNotificationConfigSuccessResponse,
    "agent/getAuthenticatedExtendedCard": GetAuthenticatedExtendedCardSuccessResponse,
}
# A push notification body is the task or event itself, told apart by `kind`.
PUSH_MODELS: dict[str, type[A2AModel]] = {
    "task": Task,
    "message": Message,
    "status-update": TaskStatusUpdateEvent,
    "artifact-update": TaskArtifactUpdateEvent,
}

# JSON code blocks per subsection, and SSE events in the one streaming block.
EXPECTED_BLOCKS = {"9.1": 1, "9.2": 4, "9.3": 2, "9.4": 4, "9.5": 3, "9.6": 2, "9.7": 2}
EXPECTED_SSE_EVENTS = 5
# Blocks that cannot be parsed at all, with the reason (none: every block parses).
UNPARSEABLE: dict[str, str] = {}
# What had to be removed before an example parsed: `//` comments annotate examples throughout
# the spec; the trailing comma is a genuine syntax error in the example.
EXPECTED_REPAIRS = {
    "9.3-2.3": {"trailing-comma"},
    "9.5-1": {"comments"},
    "9.5-2": {"comments"},
    "9.5-3": {"comments"},
    "9.6-1": {"comments"},
    "9.6-2": {"comments"},
}
# Examples that break the official schema in a way accord must reject: the defect, and the
# member accord's ValidationError reports.
INVALID = {
    "9.2-4": ("result-message-without-role", "role"),
    "9.3-1": ("file-with-data-instead-of-bytes-or-uri", "bytes"),
    "9.3-2.1": ("history-file-with-data-instead-of-bytes-or-uri", "bytes"),
    "9.4-1": ("messageId-in-params-instead-of-message", "messageId"),
    "9.4-4": ("status-message-without-messageId", "messageId"),
    "9.5-2": ("result-task-without-kind", "result"),
}
# Examples whose only schema defect is a Message without its required `kind` where nothing but a
# Message can stand (params.message, history, status.message): accord reads them, defaulting
# `kind` to "message", and fills the member in when it writes the object out.
MESSAGE_WITHOUT_KIND = {"9.2-1", "9.2-2", "9.2-3", "9.4-2", "9.4-3", "9.5-1", "9.6-1", "9.7-1"}


@dataclass(frozen=True)
class Example:
    """One JSON object of a section 9 code block."""

    id: str  # subsection-block, plus .n when a block holds several objects: "9.3-2.1"
    obj: dict[str, Any]
    role: str
    model: type[A2AModel]
    repairs: frozenset[str]

    @property
    def test_id(self) -> str:
        """The id, the role, then any defect: "9.2-4-response-result-message-without-role"."""
        words = [self.id, self.role]
        if self.id in INVALID:
            words.append(INVALID[self.id][0])
        if self.id in MESSAGE_WITHOUT_KIND:
            words.append("message-without-kind")
        return "-".join([*words, *sorted(self.repairs - {"comments"})])


def strip_outside_strings(pattern: re.Pattern[str], text: str) -> tuple[str, bool]:
    """The text without the pattern's non-string matches, and whether there were any."""
    removed = False

    def keep_strings(match: re.Match[str]) -> str:
        nonlocal removed
        if match.group(1) is not None:
            return match.group(1)
        removed = True
        return ""

    return pattern.sub(keep_strings, text), removed


def parse_payload(text: str) -> tuple[list[Any], frozenset[str]]:
    """The JSON values in one payload (several may follow each other) and the repairs made."""
    text, had_comments = strip_outside_strings(COMMENT, text)
    text, had_trailing_commas = strip_outside_strings(TRAILING_COMMA, text)
    repairs = {"comments"} if had_comments else set()
    if had_trailing_commas:
        repairs.add("trailing-comma")
    decoder = json.JSONDecoder()
    values, position = [], WHITESPACE.match(text).end()
    while position < len(text):
        value, position = decoder.raw_decode(text, position)
        values.append(value)
        position = WHITESPACE.match(text, position).end()
    return values, frozenset(repairs)


def classify(obj: dict[str, Any], sse: bool, answers: str | None) -> tuple[str, type[A2AModel]]:
    """The kind of example and the accord model that reads it."""
    if "method" in obj:
        return "request", REQUEST_MODELS[obj["method"]]
    if "error" in obj:
        return "error-response", JSONRPCErrorResponse
    if "result" in obj:
        assert answers is not None, f"response without a request before it: {obj}"
        return ("sse-response" if sse else "response"), RESPONSE_MODELS[answers]
    if "capabilities" in obj:
        return "agent-card", AgentCard
    return "push-notification", PUSH_MODELS[obj["kind"]]


def extract(markdown: str) -> tuple[list[Example], dict[str, str], dict[str, int], int]:
    """The examples of section 9, unparseable blocks, block counts and the SSE event count."""
    section = SECTION_9.search(markdown)
    assert section is not None, "section 9 not found in the specification"
    examples: list[Example] = []
    unparseable: dict[str, str] = {}
    blocks: dict[str, int] = {}
    sse_events = 0
    parts = SUBSECTION.split(section.group())
    for number, body in zip(parts[1::2], parts[2::2], strict=True):
        answers = None  # the method of the latest request in this subsection
        fences = list(JSON_FENCE.finditer(body))
        blocks[number] = len(fences)
        for block, fence in enumerate(fences, start=1):
            code = textwrap.dedent(fence.group("code"))
            sse = SSE_DATA.match(code) is not None
            payloads = SSE_DATA.split(code)[1:] if sse else [code]
            sse_events += len(payloads) if sse else 0
            parsed: list[tuple[Any, frozenset[str]]] = []
            try:
                for payload in payloads:
                    values, repairs = parse_payload(payload)
                    parsed += [(value, repairs) for value in values]
            except json.JSONDecodeError as error:
                unparseable[f"{number}-{block}"] = str(error)
                continue
            for index, (obj, repairs) in enumerate(parsed, start=1):
                answers = obj.get("method", answers)
                role, model = classify(obj, sse, answers)
                suffix = f".{index}" if len(parsed) > 1 else ""
                examples.append(Example(f"{number}-{block}{suffix}", obj, role, model, repairs))
    return examples, unparseable, blocks, sse_events


EXAMPLES, UNPARSED, BLOCKS, SSE_EVENTS = extract(read_spec_file(SPECIFICATION_PATH))


def cases(*, invalid: bool) -> list[Any]:
    """The examples (schema-invalid ones or the others) as test parameters."""
    return [
        pytest.param(example, id=example.test_id)
        for example in EXAMPLES
        if (example.id in INVALID) == invalid
    ]


def with_message_kinds(value: Any) -> Any:
    """A copy of a wire object with `kind: message` added to each message lacking it."""
    if isinstance(value, list):
        return [with_message_kinds(item) for item in value]
    if not isinstance(value, dict):
        return value
    copy = {key: with_message_kinds(item) for key, item in value.items()}
    if isinstance(copy.get("message"), dict):
        copy["message"] = {"kind": "message", **copy["message"]}
    if isinstance(copy.get("history"), list):
        copy["history"] = [{"kind": "message", **message} for message in copy["history"]]
    return copy


def test_every_block_is_found_and_parsed() -> None:
    assert BLOCKS == EXPECTED_BLOCKS
    assert SSE_EVENTS == EXPECTED_SSE_EVENTS
    assert UNPARSED == UNPARSEABLE


def test_repairs_and_defects_are_as_listed() -> None:
    assert {ex.id: set(ex.repairs) for ex in EXAMPLES if ex.repairs} == EXPECTED_REPAIRS
    ids = {example.id for example in EXAMPLES}
    assert ids >= set(INVALID) | MESSAGE_WITHOUT_KIND


@pytest.mark.parametrize("example", cases(invalid=False))
def test_example_round_trips(example: Example, schema_errors: SchemaErrors) -> None:
    definition = example.model.__name__
    if example.id in MESSAGE_WITHOUT_KIND:
        assert schema_errors(definition, example.obj) != []
        assert schema_errors(definition, with_message_kinds(example.obj)) == []
    else:
        assert schema_errors(definition, example.obj) == []

    parsed = example.model.model_validate(example.obj)

    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == example.obj
    assert schema_errors(definition, parsed.to_wire()) == []


@pytest.mark.parametrize("example", cases(invalid=True))
def test_invalid_example_is_rejected(example: Example, schema_errors: SchemaErrors) -> None:
    definition = example.model.__name__
    # Invalid even once every Message has its `kind`: the named defect is a real one.
    assert schema_errors(definition, with_message_kinds(example.obj)) != []
    with pytest.raises(ValidationError) as failure:
        example.model.model_validate(example.obj)
    _, member = INVALID[example.id]
    assert member in {error["loc"][-1] for error in failure.value.errors()}
