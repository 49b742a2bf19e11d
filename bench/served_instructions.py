"""Instructions a real `accord serve` process spends per request, counted by valgrind.

`python bench/served_instructions.py LOAD [--small N] [--large M] [--connections C]
[--store memory|sqlite] [--out DIR] [--json]`, LOAD one of those below. The echo agent is served by
`accord serve` (uvicorn, httptools, accord's protocol and middleware: what wrk meets) under
callgrind, twice: once answering N requests, once M; the difference over M - N is the
server's own work per request, whatever else the machine runs. The requests are the bytes
wrk sends in `make bench` (the same body each time, `Host`, `Content-Length`, `Content-Type`
and, in 1.0, `A2A-Version`), C connections at a time, each waiting for its answer before the
next. Where bench/per_request.py calls the app in process, this counts uvicorn's parsing and
writing, the headers and sizes on the wire and whatever `accord serve` adds.

With `--out DIR` the two callgrind profiles are kept there (`LOAD-N.out`, `LOAD-M.out`), for
`callgrind_annotate` to say where the difference goes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from common import HOST, PROJECT_PYTHON, SERVERS, free_port, send_body

_REST_1_0 = json.dumps({"message": json.loads(send_body("1.0"))["params"]["message"]}).encode()
_REST_0_3 = json.dumps(
    {"message": {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hello"}]}}
).encode()

# name: (agent, path, body, A2A-Version header or None)
LOADS: dict[str, tuple[str, str, bytes, str | None]] = {
    "rpc-0.3": ("accord.samples.echo:agent", "/", send_body("0.3"), None),
    "rpc-1.0": ("accord.samples.echo:agent", "/", send_body("1.0"), "1.0"),
    "rpc-0.3-message": ("accord.samples.echo:message_agent", "/", send_body("0.3"), None),
    "rpc-1.0-message": ("accord.samples.echo:message_agent", "/", send_body("1.0"), "1.0"),
    "rest-1.0": ("accord.samples.echo:agent", "/message:send", _REST_1_0, "1.0"),
    "rest-0.3": ("accord.samples.echo:agent", "/v1/message:send", _REST_0_3, None),
}


def request_bytes(port: int, path: str, body: bytes, version: str | None) -> bytes:
    """The request as wrk writes it for bench/lua/request.lua."""
    head = [f"POST {path} HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(body)}"]
    head.append("Content-Type: application/json")
    if version is not None:
        head.append(f"A2A-Version: {version}")
    return "\r\n".join(head).encode() + b"\r\n\r\n" + body


async def _answer(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    if match is None or not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"unexpected answer: {head!r}")
    return await reader.readexactly(int(match[1]))


async def _load(port: int, request: bytes, requests: int, connections: int) -> bytes:
    """Send `requests` requests over `connections` keep-alive connections; the last answer."""
    left = requests
    last = b""

    async def connection() -> None:
        nonlocal left, last
        reader, writer = await asyncio.open_connection(HOST, port)
        while left > 0:
            left -= 1
            writer.write(request)
            last = await _answer(reader)
        writer.close()
        await writer.wait_closed()

    await asyncio.gather(*(connection() for _ in range(connections)))
    return last


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait until the server accepts a connection (a bare connect: no request it would count
    a varying number of times)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not listen within {timeout:.0f} s")


def count(load: str, requests: int, connections: int, store: str, out: Path | None) -> int:
    """Instructions of a server process that answered `requests` requests of `load`."""
    target, path, body, version = LOADS[load]
    port = free_port()
    profile = out / f"{load}-{requests}.out" if out is not None else Path("/dev/null")
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as workdir:
        store_url = "memory" if store == "memory" else f"sqlite:///{workdir}/accord.db"
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}",
            str(PROJECT_PYTHON.with_name("accord")), "serve", target, "--host", HOST,
            "--port", str(port), "--log-level", "warning", "--store", store_url,
        ]  # fmt: skip
        env = dict(os.environ, PYTHONHASHSEED="0")
        process = subprocess.Popen(
            command, cwd=SERVERS, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _wait_listening(port, process, timeout=1800)
            request = request_bytes(port, path, body, version)
            answer = asyncio.run(_load(port, request, requests, connections))
            if b'"error"' in answer:
                raise SystemExit(f"{load}: {answer.decode()}")
            process.send_signal(signal.SIGINT)
            _, errors = process.communicate(timeout=1800)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    found = re.search(rb"Collected : (\d+)", errors)
    if found is None:
        raise SystemExit(f"no count from valgrind: {errors.decode()[-2000:]}")
    return int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("load", choices=sorted(LOADS))
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=400)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", action="store_true", help="print the figure as a JSON line")
    args = parser.parse_args()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    small = count(args.load, args.small, args.connections, args.store, args.out)
    large = count(args.load, args.large, args.connections, args.store, args.out)
    per_request = (large - small) // (args.large - args.small)
    if args.json:
        print(json.dumps({"status": "ok", "instructions": per_request}))
    else:
        print(f"{args.load} {per_request} instructions/request ({args.connections} connections)")


if __name__ == "__main__":
    main()
