"""The one table of how each binding answers each error: its columns, and how errors find a row."""

from __future__ import annotations

import pytest

from accord.codecs.error_statuses import ErrorStatus, error_status
from accord.errors import (
    A2AError,
    AuthenticatedExtendedCardNotConfigured,
    BodyTooLarge,
    InvalidRequest,
    MethodNotAllowed,
    RateLimited,
    ServerBusy,
    TaskNotFound,
    Unauthenticated,
    WrongContentType,
)
from accord.runtime.bus import StreamOverrun
from accord.types import JSONRPCError


@pytest.mark.parametrize(
    ("error", "row"),
    [
        (InvalidRequest(), ErrorStatus(200, 400, "INVALID_ARGUMENT")),
        (BodyTooLarge(), ErrorStatus(413, 413, "RESOURCE_EXHAUSTED")),
        (WrongContentType(), ErrorStatus(415, 415, "INVALID_ARGUMENT")),
        (MethodNotAllowed(), ErrorStatus(200, 405, "UNIMPLEMENTED")),
        (TaskNotFound(), ErrorStatus(200, 404, "NOT_FOUND")),
        (AuthenticatedExtendedCardNotConfigured(), ErrorStatus(200, 400, "FAILED_PRECONDITION")),
        (Unauthenticated(), ErrorStatus(401, 401, "UNAUTHENTICATED")),
        (RateLimited(), ErrorStatus(429, 429, "RESOURCE_EXHAUSTED")),
        (ServerBusy(), ErrorStatus(503, 503, "UNAVAILABLE")),
    ],
)
def test_each_binding_has_its_column(error: A2AError, row: ErrorStatus) -> None:
    assert error_status(error) == row


def test_a_subclass_answers_as_its_nearest_listed_base() -> None:
    assert error_status(StreamOverrun()) == error_status(RateLimited())


def test_an_error_of_an_agent_own_class_answers_by_its_code() -> None:
    class Gone(A2AError):
        code = TaskNotFound.code

    assert error_status(Gone()) == error_status(TaskNotFound())


def test_a_code_no_protocol_has_is_an_internal_error() -> None:
    error = A2AError.from_error_object(JSONRPCError(code=-31999, message="odd"))
    assert error_status(error) == ErrorStatus(200, 500, "INTERNAL")
