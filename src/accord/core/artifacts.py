"""Folding an artifact update into a task: the one rule for chunks, shared by runtime and stores."""

from __future__ import annotations

from accord.types import Artifact, Task, TaskArtifactUpdateEvent


def merge_artifact(task: Task, event: TaskArtifactUpdateEvent) -> None:
    """Apply `event` to `task`'s artifacts in place: append its parts to the artifact with its
    id (`append`), replace that artifact, or add a new one. Validation is the caller's."""
    artifacts = task.artifacts if task.artifacts is not None else []
    task.artifacts = artifacts
    incoming = event.artifact
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == incoming.artifact_id:
            if event.append:
                existing.parts.extend(incoming.parts)
                if incoming.metadata:
                    existing.metadata = {**(existing.metadata or {}), **incoming.metadata}
            else:
                artifacts[index] = own_artifact(incoming)
            return
    artifacts.append(own_artifact(incoming))


def own_artifact(artifact: Artifact) -> Artifact:
    """A copy with its own parts list, so later chunks never alter the event it came in."""
    return artifact.copied_with(parts=list(artifact.parts))
