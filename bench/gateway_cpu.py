"""The gateway's own CPU time per relayed blocking send, in process.

`python bench/gateway_cpu.py LOAD [--requests N] [--warmup W]`, LOAD `rpc-0.3` (JSON-RPC
`message/send`) or `rest-1.0` (HTTP+JSON 1.0 `POST /message:send`): the official SDK's echo
agent on 0.3 JSON-RPC (bench/servers/gateway_upstream.py) in a process of its own on the
server CPU, and `accord.gateway` in front of it in this process on the load CPU, its ASGI app
called without a socket (as bench/per_request.py calls accord's). Prints the CPU time per
request of the N after W: the gateway's server side, its runtime and its client's call
upstream, without the load generator's HTTP or the upstream's work, which bench/gateway.py's
figure per process mixes with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from common import HOST, LOAD_CPU, PROJECT_PYTHON, free_port
from gateway import running
from per_request import _MESSAGE_0_3, _MESSAGE_1_0, Client, _rest, _rpc

import accord

LOADS = {
    "rpc-0.3": ("/", _rpc("message/send", _MESSAGE_0_3), None),
    "rest-1.0": ("/message:send", _rest(_MESSAGE_1_0), "1.0"),
}


async def serve(upstream_url: str, load: str, requests: int, warmup: int) -> float:
    """CPU seconds per request of the gateway to `upstream_url` serving `load`."""
    app = accord.create_app(accord.gateway(upstream_url))
    async with app.router.lifespan_context(app):
        client = Client(app, *LOADS[load])
        for _ in range(warmup):
            await client.call()
        if client.status != 200 or b"ompleted" not in client.response.lower():
            raise SystemExit(f"{load}: {client.status} {client.response.decode()}")
        started = time.process_time()
        for _ in range(requests):
            await client.call()
        return (time.process_time() - started) / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("load", choices=sorted(LOADS))
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()
    port = free_port()
    upstream = [
        str(PROJECT_PYTHON), "-m", "uvicorn", "gateway_upstream:app", "--host", HOST,
        "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    env = {**os.environ, "UPSTREAM_URL": f"http://{HOST}:{port}/"}
    os.sched_setaffinity(0, {LOAD_CPU})
    with running(upstream, port, env=env) as (url, _):
        spent = asyncio.run(serve(url, args.load, args.requests, args.warmup))
    print(f"gateway {args.load:9} {spent * 1e6:7.1f} µs/request (CPU, {args.requests} requests)")


if __name__ == "__main__":
    main()
