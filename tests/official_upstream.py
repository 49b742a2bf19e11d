"""An official a2a-sdk agent in a process of its own, its card listing one interface only:
`python official_upstream.py BINDING VERSION` prints its URL, then serves until killed.

`hold PATH` works until the file PATH exists, then answers as the official echo does."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

from test_interop_official_server import OfficialEcho, official_server

FILE_CHECK = 0.05
"""How often a held task looks for its file (seconds)."""


class FileGatedEcho(OfficialEcho):
    """The official echo, its `hold PATH` released by a file another process writes."""

    async def hold(self, text: str) -> None:
        await asyncio.to_thread(wait_for, Path(text.removeprefix("hold ").strip()))


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
