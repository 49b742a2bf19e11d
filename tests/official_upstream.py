"""An official a2a-sdk agent in a process of its own, its card listing one interface only:
`python official_upstream.py BINDING VERSION` prints its URL, then serves until killed.

`hold PATH` works until the file PATH exists, then answers as the official echo does."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

from a2a.helpers import get_message_text, new_task_from_user_message
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part

from test_interop_official_server import OfficialEcho, official_server

FILE_CHECK = 0.05
"""How often a held task looks for its file (seconds)."""


class FileGatedEcho(OfficialEcho):
    """The official echo, its `hold PATH` released by a file another process writes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = get_message_text(context.message)
        if not text.startswith("hold "):
            await super().execute(context, event_queue)
            return
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.start_work()
        released = Path(text.removeprefix("hold ").strip())
        await asyncio.to_thread(wait_for, released)
        await updater.add_artifact(parts=[Part(text=text)])
        await updater.complete()


def wait_for(path: Path) -> None:
    """Return once the file `path` exists (written by the test, in another process)."""
    while not path.exists():
        time.sleep(FILE_CHECK)


def main(binding: str, version: str) -> None:
    with official_server(FileGatedEcho()) as server:
        server.list_interface(binding, version)
        print(server.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main(*sys.argv[1:3])
