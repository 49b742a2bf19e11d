"""The server's own cost of one request, in process: the ASGI app called without a socket.

`python bench/per_request.py LOAD [--requests N] [--warmup W] [--store memory|sqlite] [--check]`,
LOAD one of
`rpc-0.3`, `rpc-1.0` (JSON-RPC `message/send`, Task mode: accord.samples.echo:agent),
`rpc-0.3-message`, `rpc-1.0-message` (Message mode: the agent answers with a message),
`rest-1.0` (HTTP+JSON 1.0 `POST /message:send`) and `rest-0.3` (`POST /v1/message:send`).
It serves W requests, then N more, one at a time on one event loop, and prints the CPU time
per request of the N. No HTTP parsing, no network, no load generator: what is left is the
app's own work (middleware, binding, pipeline, codec, service, runtime, store), the same for
both versions but for what the version changes. `--store sqlite` keeps the tasks in a new
SQLite file (the default store of `accord serve`) instead of memory: each request then waits
for its save's commit, and valgrind counts the store's writer thread with the rest.

Wall and CPU time still move with the machine's load. For figures that do not, count the
instructions under valgrind, twice, and divide the difference by the difference in requests:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python bench/per_request.py rpc-1.0 --requests 200
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python bench/per_request.py rpc-1.0 --requests 1200

(`Collected : N` of each; `bench/instructions.sh LOAD` does exactly this.) `--check` prints
one response instead, to see that the load is served as meant.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from typing import Any

import accord
import accord.store
from accord.samples import echo

_MESSAGE_0_3 = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "hello"}]}
_MESSAGE_1_0 = {"role": "ROLE_USER", "parts": [{"text": "hello"}]}
_MESSAGE_0_3_PROTO = {"role": "ROLE_USER", "content": [{"text": "hello"}]}  # 0.3 HTTP+JSON


def _rpc(method: str, message: dict[str, Any]) -> bytes:
    message = {**message, "messageId": str(uuid.uuid4())}
    call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(call).encode()


def _rest(message: dict[str, Any]) -> bytes:
    return json.dumps({"message": {**message, "messageId": str(uuid.uuid4())}}).encode()


# name: (agent, path, body, A2A-Version header or None)
LOADS: dict[str, tuple[accord.Agent, str, bytes, str | None]] = {
    "rpc-0.3": (echo.agent, "/", _rpc("message/send", _MESSAGE_0_3), None),
    "rpc-1.0": (echo.agent, "/", _rpc("SendMessage", _MESSAGE_1_0), "1.0"),
    "rpc-0.3-message": (echo.message_agent, "/", _rpc("message/send", _MESSAGE_0_3), None),
    "rpc-1.0-message": (echo.message_agent, "/", _rpc("SendMessage", _MESSAGE_1_0), "1.0"),
    "rest-0.3": (echo.agent, "/v1/message:send", _rest(_MESSAGE_0_3_PROTO), None),
    "rest-1.0": (echo.agent, "/message:send", _rest(_MESSAGE_1_0), "1.0"),
}


class Client:
    """Calls the ASGI app with one request, as uvicorn would, and keeps the response."""

    def __init__(self, app: Any, path: str, body: bytes, version: str | None) -> None:
        self.app = app
        self.body = body
        headers = [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if version is not None:
            headers.append((b"a2a-version", version.encode()))
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": headers,
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
            "state": {},
        }
        self.status = 0
        self.response = bytearray()

    async def call(self) -> None:
        sent = False
        self.response.clear()

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()  # a client that stays connected
            sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
            elif message["type"] == "http.response.body":
                self.response += message.get("body", b"")

        await self.app(dict(self.scope), receive, send)


async def serve(load: str, requests: int, warmup: int, check: bool, store: str) -> None:
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as workdir:
        url = "memory" if store == "memory" else f"sqlite:///{workdir}/accord.db"
        await _serve(load, requests, warmup, check, accord.store.open_store(url))


async def _serve(
    load: str, requests: int, warmup: int, check: bool, store: accord.store.TaskStore
) -> None:
    agent, path, body, version = LOADS[load]
    app = accord.create_app(agent, store=store)
    async with app.router.lifespan_context(app):
        client = Client(app, path, body, version)
        if check:
            await client.call()
            print(client.status, client.response.decode())
            return
        for _ in range(warmup):
            await client.call()
        if client.status != 200 or b'"error"' in client.response:
            raise SystemExit(f"{load}: {client.status} {client.response.decode()}")
        started = time.process_time()
        for _ in range(requests):
            await client.call()
        spent = time.process_time() - started
    print(f"{load:16} {spent / requests * 1e6:7.1f} µs/request (CPU, {requests} requests)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("load", choices=sorted(LOADS))
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    asyncio.run(serve(args.load, args.requests, args.warmup, args.check, args.store))


if __name__ == "__main__":
    main()
