"""Runs the official JS SDK (`@a2a-js/sdk`, installed in tests/js by `make test`) as a test peer."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

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


async def drive(
    url: str,
    interface: tuple[str, str],
    scenario: str,
    *arguments: str,
    on_step: Callable[[str], None] = lambda step: None,
) -> Any:
    """Run one scenario of tests/js/client.mjs (given `arguments` after the scenario's name)
    against `url` over `interface`; `on_step` is called with each step it reports on the way.
    Returns its result."""
    binding, version = interface
    process = await asyncio.create_subprocess_exec(
        node(),
        str(JS_DIR / "client.mjs"),
        url,
        binding,
        version,
        scenario,
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(PEER_TIMEOUT):
            async for raw in process.stdout:
                line = json.loads(raw)
                if "step" in line:
                    on_step(line["step"])
                elif "result" in line:
                    return line["result"]
                else:
                    raise PeerFailed(line["error"]["message"])
            stderr = await process.stderr.read() if process.stderr else b""
            raise PeerFailed(f"client.mjs printed no result: {stderr.decode()}")
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


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
