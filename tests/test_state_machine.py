"""The task state machine on its own: transitions, artifacts, history and event normalisation."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from accord.errors import InvalidAgentResponse
from accord.runtime import IllegalTaskEvent, apply_event, check_transition
from accord.runtime.state_machine import new_task
from accord.types import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

S = TaskState
TERMINAL = {S.COMPLETED, S.CANCELED, S.FAILED, S.REJECTED}
ALL_PAIRS = list(itertools.product(S, S))


def legal(current: TaskState, target: TaskState) -> bool:
    """The lifecycle rules of the spec, written out independently of the implementation."""
    if current in TERMINAL or target is S.UNKNOWN:
        return False
    return target is not S.SUBMITTED or current is S.SUBMITTED


def task_in(state: TaskState, task_id: str = "t1") -> Task:
    task = new_task(task_id, "c1", Message.user("hello", task_id=task_id, context_id="c1"))
    task.status = TaskStatus(state=state)
    return task


def status(
    state: TaskState,
    *,
    task_id: str = "t1",
    message: Message | None = None,
    final: bool = False,
    timestamp: str | None = "2025-01-01T00:00:00.000Z",
) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="c1",
        status=TaskStatus(state=state, message=message, timestamp=timestamp),
        final=final,
    )


def artifact(
    text: str,
    *,
    artifact_id: str = "a1",
    append: bool | None = None,
    task_id: str = "t1",
    metadata: dict[str, str] | None = None,
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="c1",
        artifact=Artifact(artifact_id=artifact_id, parts=[TextPart(text=text)], metadata=metadata),
        append=append,
    )


def texts(art: Artifact) -> list[str]:
    return [p.text for p in art.parts if isinstance(p, TextPart)]


# --- transitions -----------------------------------------------------------------------------


def test_new_task_is_submitted_with_the_message_in_history() -> None:
    message = Message.user("hi", task_id="t1", context_id="c1")
    task = new_task("t1", "c1", message)
    assert (task.id, task.context_id, task.status.state) == ("t1", "c1", S.SUBMITTED)
    assert task.status.timestamp
    assert task.history == [message]


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=lambda s: s.value)
def test_check_transition_follows_the_lifecycle(current: TaskState, target: TaskState) -> None:
    if legal(current, target):
        check_transition(current, target)
    else:
        with pytest.raises(IllegalTaskEvent):
            check_transition(current, target)


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=lambda s: s.value)
def test_status_events_follow_the_lifecycle(current: TaskState, target: TaskState) -> None:
    task = task_in(current)
    if legal(current, target):
        apply_event(task, status(target))
        assert task.status.state is target
    else:
        before = task.model_copy(deep=True)
        with pytest.raises(IllegalTaskEvent):
            apply_event(task, status(target))
        assert task == before, "a rejected event must leave the task untouched"


def test_illegal_transitions_are_invalid_agent_responses() -> None:
    with pytest.raises(InvalidAgentResponse) as caught:
        check_transition(S.COMPLETED, S.WORKING)
    assert caught.value.code == -32006
    assert "completed" in caught.value.message


def test_unknown_is_never_a_target() -> None:
    with pytest.raises(IllegalTaskEvent, match="unknown"):
        apply_event(task_in(S.WORKING), status(S.UNKNOWN))


def test_no_return_to_submitted() -> None:
    with pytest.raises(IllegalTaskEvent, match="submitted"):
        apply_event(task_in(S.INPUT_REQUIRED), status(S.SUBMITTED))


def test_a_typical_lifecycle_with_a_pause_for_input() -> None:
    task = task_in(S.SUBMITTED)
    for state in (S.WORKING, S.INPUT_REQUIRED, S.WORKING, S.AUTH_REQUIRED, S.WORKING, S.COMPLETED):
        apply_event(task, status(state))
    assert task.status.state is S.COMPLETED


@pytest.mark.parametrize("state", sorted(TERMINAL))
def test_terminal_tasks_take_no_artifacts(state: TaskState) -> None:
    task = task_in(state)
    with pytest.raises(IllegalTaskEvent):
        apply_event(task, artifact("late"))
    assert task.artifacts is None


@pytest.mark.parametrize("state", sorted(TERMINAL))
def test_terminal_tasks_take_no_messages(state: TaskState) -> None:
    task = task_in(state)
    with pytest.raises(IllegalTaskEvent):
        apply_event(task, Message.agent("late", task_id="t1"))
    assert len(task.history or []) == 1


@pytest.mark.parametrize("state", sorted(TERMINAL))
def test_terminal_tasks_take_no_snapshots_even_of_the_same_state(state: TaskState) -> None:
    task = task_in(state)
    snapshot = task.model_copy(update={"metadata": {"changed": True}})
    with pytest.raises(IllegalTaskEvent):
        apply_event(task, snapshot)
    assert task.metadata is None


# --- status events ---------------------------------------------------------------------------


def test_status_message_stays_in_status_until_the_conversation_moves_on() -> None:
    task = task_in(S.WORKING)
    question = Message.agent("Which city?", task_id="t1", context_id="c1")
    apply_event(task, status(S.INPUT_REQUIRED, message=question))
    assert task.status.message == question
    assert question not in (task.history or [])


def test_status_message_joins_history_before_the_next_user_message() -> None:
    task = task_in(S.WORKING)
    question = Message.agent("Which city?", task_id="t1", context_id="c1")
    apply_event(task, status(S.INPUT_REQUIRED, message=question))
    answer = Message.user("Paris", task_id="t1", context_id="c1")
    apply_event(task, answer)
    assert [m.text for m in task.history or []] == ["hello", "Which city?", "Paris"]


def test_status_message_joins_history_before_the_next_status() -> None:
    task = task_in(S.SUBMITTED)
    progress = Message.agent("halfway", task_id="t1", context_id="c1")
    apply_event(task, status(S.WORKING, message=progress))
    apply_event(task, status(S.COMPLETED))
    assert task.history is not None
    assert task.history[-1] == progress
    assert task.status.message is None


def test_status_message_joins_history_before_a_snapshot() -> None:
    task = task_in(S.SUBMITTED)
    progress = Message.agent("halfway", task_id="t1", context_id="c1")
    apply_event(task, status(S.WORKING, message=progress))
    apply_event(task, Task(id="t1", context_id="c1", status=TaskStatus(state=S.COMPLETED)))
    assert task.history is not None
    assert task.history[-1] == progress


def test_status_message_joins_history_only_once() -> None:
    task = task_in(S.SUBMITTED)
    progress = Message.agent("halfway", task_id="t1", context_id="c1")
    apply_event(task, status(S.WORKING, message=progress))
    apply_event(task, status(S.WORKING, message=progress))
    apply_event(task, status(S.COMPLETED))
    assert [m.message_id for m in task.history or []].count(progress.message_id) == 1


def test_status_without_message_adds_no_history() -> None:
    task = task_in(S.SUBMITTED)
    apply_event(task, status(S.WORKING))
    assert len(task.history or []) == 1


def test_missing_timestamp_is_filled_in() -> None:
    task = task_in(S.SUBMITTED)
    published = apply_event(task, status(S.WORKING, timestamp=None))
    assert isinstance(published, TaskStatusUpdateEvent)
    assert published.status.timestamp
    assert task.status.timestamp == published.status.timestamp


def test_given_timestamp_is_kept() -> None:
    task = task_in(S.SUBMITTED)
    apply_event(task, status(S.WORKING, timestamp="2030-05-06T07:08:09.000Z"))
    assert task.status.timestamp == "2030-05-06T07:08:09.000Z"


@pytest.mark.parametrize(
    ("state", "final"),
    [
        (S.WORKING, False),
        (S.INPUT_REQUIRED, True),
        (S.AUTH_REQUIRED, True),
        (S.COMPLETED, True),
        (S.CANCELED, True),
        (S.FAILED, True),
        (S.REJECTED, True),
    ],
)
@pytest.mark.parametrize("claimed", [False, True])
def test_final_is_normalised_to_the_state(state: TaskState, final: bool, claimed: bool) -> None:
    event = status(state, final=claimed)
    published = apply_event(task_in(S.WORKING), event)
    assert isinstance(published, TaskStatusUpdateEvent)
    assert published.final is final
    assert event.final is claimed, "the agent's own event object is not modified"


def test_status_event_of_another_task_is_rejected() -> None:
    task = task_in(S.WORKING)
    with pytest.raises(IllegalTaskEvent, match="other"):
        apply_event(task, status(S.COMPLETED, task_id="other"))
    assert task.status.state is S.WORKING


# --- messages and snapshots ------------------------------------------------------------------


def test_message_is_appended_to_history_with_ids_filled_in() -> None:
    task = task_in(S.WORKING)
    published = apply_event(task, Message.agent("progress"))
    assert isinstance(published, Message)
    assert (published.task_id, published.context_id) == ("t1", "c1")
    assert task.history is not None
    assert task.history[-1] is published


def test_message_of_another_task_is_rejected() -> None:
    task = task_in(S.WORKING)
    with pytest.raises(IllegalTaskEvent, match="other"):
        apply_event(task, Message.agent("hi", task_id="other"))
    assert len(task.history or []) == 1


def test_snapshot_of_another_task_is_rejected() -> None:
    task = task_in(S.WORKING)
    with pytest.raises(IllegalTaskEvent):
        apply_event(task, task_in(S.COMPLETED, task_id="other"))
    assert task.status.state is S.WORKING


def test_snapshot_replaces_status_and_artifacts_and_merges_history() -> None:
    task = task_in(S.SUBMITTED)
    known = (task.history or [])[0]
    reply = Message.agent("done", task_id="t1", context_id="c1")
    snapshot = Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=S.COMPLETED),
        artifacts=[Artifact(artifact_id="a1", parts=[TextPart(text="result")])],
        history=[known, reply],
        metadata={"k": "v"},
    )
    apply_event(task, snapshot)
    assert task.status.state is S.COMPLETED
    assert task.artifacts is not None and texts(task.artifacts[0]) == ["result"]
    assert [m.message_id for m in task.history or []] == [known.message_id, reply.message_id]
    assert task.metadata == {"k": "v"}


def test_snapshot_moving_backwards_is_rejected() -> None:
    task = task_in(S.WORKING)
    with pytest.raises(IllegalTaskEvent):
        apply_event(task, task_in(S.SUBMITTED))


# --- artifacts -------------------------------------------------------------------------------


def test_new_artifact_is_added() -> None:
    task = task_in(S.WORKING)
    apply_event(task, artifact("one", artifact_id="a1"))
    apply_event(task, artifact("two", artifact_id="a2"))
    assert [a.artifact_id for a in task.artifacts or []] == ["a1", "a2"]


def test_artifact_with_a_known_id_replaces_it() -> None:
    task = task_in(S.WORKING)
    apply_event(task, artifact("draft"))
    apply_event(task, artifact("final"))
    assert task.artifacts is not None
    assert len(task.artifacts) == 1
    assert texts(task.artifacts[0]) == ["final"]


def test_append_chunks_extend_the_artifact_in_order() -> None:
    task = task_in(S.WORKING)
    apply_event(task, artifact("a"))
    apply_event(task, artifact("b", append=True))
    apply_event(task, artifact("c", append=True))
    assert task.artifacts is not None
    assert texts(task.artifacts[0]) == ["a", "b", "c"]


def test_append_merges_metadata() -> None:
    task = task_in(S.WORKING)
    apply_event(task, artifact("a", metadata={"x": "1", "y": "1"}))
    apply_event(task, artifact("b", append=True, metadata={"y": "2"}))
    assert task.artifacts is not None
    assert task.artifacts[0].metadata == {"x": "1", "y": "2"}


def test_append_to_an_artifact_not_seen_yet_starts_it() -> None:
    task = task_in(S.WORKING)
    apply_event(task, artifact("first", append=True))
    assert task.artifacts is not None
    assert texts(task.artifacts[0]) == ["first"]


def test_later_chunks_never_change_published_events() -> None:
    task = task_in(S.WORKING)
    first = artifact("a", metadata={"n": "1"})
    published_first = apply_event(task, first)
    published_second = apply_event(task, artifact("b", append=True, metadata={"n": "2"}))
    apply_event(task, artifact("c", append=True))
    for event, expected in ((first, ["a"]), (published_first, ["a"]), (published_second, ["b"])):
        assert isinstance(event, TaskArtifactUpdateEvent)
        assert texts(event.artifact) == expected
    assert first.artifact.metadata == {"n": "1"}


def test_replacing_an_artifact_does_not_change_the_earlier_event() -> None:
    task = task_in(S.WORKING)
    first = artifact("draft")
    apply_event(task, first)
    apply_event(task, artifact("final"))
    apply_event(task, artifact("more", append=True))
    assert texts(first.artifact) == ["draft"]


def test_artifacts_from_a_snapshot_are_not_shared_with_it() -> None:
    task = task_in(S.WORKING)
    snapshot = task_in(S.WORKING)
    snapshot.artifacts = [Artifact(artifact_id="a1", parts=[TextPart(text="a")])]
    apply_event(task, snapshot)
    apply_event(task, artifact("b", append=True))
    assert texts(snapshot.artifacts[0]) == ["a"]


def test_artifact_of_another_task_is_rejected() -> None:
    task = task_in(S.WORKING)
    with pytest.raises(IllegalTaskEvent, match="other"):
        apply_event(task, artifact("x", task_id="other"))
    assert task.artifacts is None


def test_a_copy_with_changes_is_the_copy_pydantic_makes() -> None:
    status = TaskStatus(state=S.WORKING)
    copied = status.copied_with(timestamp="2026-01-01T00:00:00.000Z")
    expected = status.model_copy(update={"timestamp": "2026-01-01T00:00:00.000Z"})
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set == {"state", "timestamp"}
    assert (copied.model_extra, copied.__pydantic_private__) == (None, None)
    assert copied.to_json() == expected.to_json()
    assert status.timestamp is None  # the original is left as it was


def test_validated_is_model_validate_without_its_argument_checks() -> None:
    data = {"taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": False}
    assert TaskStatusUpdateEvent.validated(data) == TaskStatusUpdateEvent.model_validate(data)
    bad = {**data, "status": {"state": "sleeping"}, "metadata": "none"}
    with pytest.raises(ValidationError) as validated:
        TaskStatusUpdateEvent.validated(bad)
    with pytest.raises(ValidationError) as expected:
        TaskStatusUpdateEvent.model_validate(bad)
    assert validated.value.errors() == expected.value.errors()
    assert len(validated.value.errors()) == 2
