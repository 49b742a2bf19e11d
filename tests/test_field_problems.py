"""Validation errors worded for a person: fields as the sender wrote them, no union members or
class names, what each field must be; the server's decoding and the client's alike."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import AfterValidator, BaseModel, Field, TypeAdapter, ValidationError

from accord.codecs.field_problems import describe_validation_error, field_problems
from accord.codecs.v0_3 import CLIENT
from accord.errors import InvalidParams
from accord.types import MessageSendParams, Task
from codec_checks import QUESTION, TASK, assert_readable


def _problems(model: Any, data: Any, *, seen: bool = True) -> list[dict[str, str]]:
    adapter = TypeAdapter(model)
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(data)
    return field_problems(caught.value, data) if seen else field_problems(caught.value)


def _positive(value: int) -> int:
    if value <= 0:
        raise ValueError("a count of things is positive")
    return value


class Limits(BaseModel):
    size: Annotated[int, Field(ge=1, le=10)]
    count: Annotated[int, AfterValidator(_positive)] = 1
    mode: Literal["fast", "slow"] = "fast"


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({}, "size", "is required"),
        ({"size": 0}, "size", "must be at least 1"),
        ({"size": 11}, "size", "must be at most 10"),
        ({"size": "ten"}, "size", "must be an integer"),
        ({"size": 1.5}, "size", "must be a whole number"),
        ({"size": 1, "count": -1}, "count", "a count of things is positive"),
        ({"size": 1, "mode": "quick"}, "mode", "must be 'fast' or 'slow'"),
        ("limits", "", "must be an object"),
    ],
)
def test_each_problem_says_what_the_field_must_be(data: Any, field: str, message: str) -> None:
    assert _problems(Limits, data) == [{"field": field, "message": message}]


def test_a_value_that_fits_no_member_of_a_union_is_told_by_the_member_it_comes_closest_to() -> None:
    message = QUESTION.to_wire()
    file_part = {"kind": "file", "file": {"bytes": 5}}
    problems = _problems(MessageSendParams, {"message": {**message, "parts": [file_part]}})
    assert problems == [{"field": "message.parts.0.file.bytes", "message": "must be a string"}]


def test_what_every_member_of_a_union_misses_is_said_once() -> None:
    message = {**QUESTION.to_wire(), "parts": [{"kind": "file", "file": {"name": "a"}}]}
    problems = _problems(MessageSendParams, {"message": message})
    assert problems == [{"field": "message.parts.0.file", "message": "needs bytes or uri"}]


def test_without_the_data_class_names_are_left_out_of_the_field() -> None:
    message = {**QUESTION.to_wire(), "parts": [{"kind": "file", "file": {"bytes": 5}}]}
    problems = _problems(MessageSendParams, {"message": message}, seen=False)
    assert problems[0] == {
        "field": "message.parts.0.file.file.bytes",
        "message": "must be a string",
    }
    assert not any("FileWith" in problem["field"] for problem in problems)


def test_a_described_validation_error_counts_the_others() -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(Task).validate_python({"status": {"state": "done"}})
    described = describe_validation_error(caught.value)
    assert described.startswith("id: is required (and ")
    assert "Field required" not in described


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"kind": "weather"}, "kind 'weather' is not one of 'task', 'message'"),
        ({**TASK.to_wire(), "id": 1}, "id: must be a string"),
        ({**TASK.to_wire(), "status": {"state": "done"}}, "status.state: must be 'submitted', "),
    ],
)
def test_the_client_names_what_is_wrong_in_a_result(result: Any, message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        CLIENT.send.decode(result)
    assert caught.value.message.startswith(message), caught.value.message
    assert_readable(caught.value)
