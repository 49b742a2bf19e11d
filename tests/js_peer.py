"""Runs the official JS SDK (`@a2a-js/sdk`, installed in tests/js by `make test`) as a test peer."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

from agents_for_tests import SAFETY_TIMEOUT
from services import unavailable

JS_DIR = Path(__file__).parent / "js"
SDK = JS_DIR / "node_modules" / "@a2a-js" / "sdk" / "package.json"
PEER_TIMEOUT = 3 * SAFETY_TIMEOUT
"""A node process starts and loads the SDK before it does anything: more time than in-process."""


def node() -> str:
    """The node executable, once the SDK is installed beside the scripts (else skip or fail)."""
    executable = shutil.which("node")
    if executable is None:
        unavailable("Node.js", "no `node` on PATH")
    if not SDK.exists():
        unavailable("@a2a-js/sdk", f"{SDK.parent} is missing; run `npm ci --prefix tests/js`")
    assert executable is not None
    return executable


class PeerFailed(Exception):
    """The JS script ended without a result: its error as it reported it."""


class JsClient:
    """tests/js/client.mjs kept running to drive one scenario after the other: a node process
    costs more CPU to start (and load the SDK) than most scenarios take. One that fails is
    killed; the next scenario starts another."""

    def __init__(self, stderr: IO[str]) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._stderr = stderr

    async def drive(
        self,
        url: str,
        interface: tuple[str, str],
        scenario: str,
        *arguments: str,
        on_step: Callable[[str], None] = lambda step: None,
    ) -> Any:
        """Run one scenario of client.mjs (given `arguments` after the scenario's name) against
        `url` over `interface`; `on_step` is called with each step it reports on the way.
        Returns its result."""
        process = self._running()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps([url, *interface, scenario, *arguments]) + "\n")
        process.stdin.flush()
        try:
            async with asyncio.timeout(PEER_TIMEOUT):
                while raw := await asyncio.to_thread(process.stdout.readline):
                    line = json.loads(raw)
                    if "step" in line:
                        on_step(line["step"])
                    elif "result" in line:
                        return line["result"]
                    else:
                        raise PeerFailed(line["error"]["message"])
            self._stderr.seek(0)
            raise PeerFailed(f"client.mjs printed no result: {self._stderr.read()}")
        except BaseException:
            self._stop(process, kill=True)  # what it would print next is this scenario's
            raise

    def _running(self) -> subprocess.Popen[str]:
        if self._process is None:
            self._stderr.seek(0)
            self._stderr.truncate()
            self._process = subprocess.Popen(
                [node(), str(JS_DIR / "client.mjs")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
            )
        return self._process

    def _stop(self, process: subprocess.Popen[str], *, kill: bool) -> None:
        self._process = None
        assert process.stdin is not None and process.stdout is not None
        if kill:
            process.kill()
        process.stdin.close()  # the end of its input: client.mjs exits
        try:
            process.wait(timeout=SAFETY_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

    def close(self) -> None:
        """Stop the node process."""
        if self._process is not None:
            self._stop(self._process, kill=False)


@contextmanager
def js_client() -> Iterator[JsClient]:
    """A JsClient for the block; its node process stops when the block ends."""
    with tempfile.TemporaryFile("w+") as stderr:
        client = JsClient(stderr)
        try:
            yield client
        finally:
            client.close()


@asynccontextmanager
async def js_server() -> AsyncIterator[str]:
    """tests/js/server.mjs serving on a free loopback port; yields its base URL."""
    process = await asyncio.create_subprocess_exec(
        node(), str(JS_DIR / "server.mjs"), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(PEER_TIMEOUT):
            started = json.loads(await process.stdout.readline())
        yield started["url"]
    finally:
        process.terminate()
        try:
            async with asyncio.timeout(SAFETY_TIMEOUT):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
