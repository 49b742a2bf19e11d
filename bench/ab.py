"""A/B of two accord trees: server CPU time per request, the trees' servers alternating.

`python bench/ab.py TREE_A TREE_B [--rounds N] [--seconds S] [--connections C] [--store S]`:
each tree is a checkout with its own `.venv` (`make install`). Each round serves the echo agent
(Task mode, on the memory store or `--store sqlite`) from A, then from B, under the same wrk
load for JSON-RPC 0.3, JSON-RPC 1.0 and HTTP+JSON 1.0, and prints the server's CPU time per
completed request and the rate. CPU time per request moves much less with other load on a
shared machine than the rate does.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import ServerSpec, pin_load, raise_fd_limit, send_body, serve
from cpu_load import cpu_per_request

REST_SEND = json.dumps({"message": json.loads(send_body("1.0"))["params"]["message"]}).encode()
# (name, path, body, version header)
LOADS = [
    ("JSON-RPC 0.3", "/", send_body("0.3"), "0.3"),
    ("JSON-RPC 1.0", "/", send_body("1.0"), "1.0"),
    ("HTTP+JSON 1.0", "/message:send", REST_SEND, "1.0"),
]


def measure(
    tree: Path, load: tuple[str, str, bytes, str], seconds: int, conns: int, store: str
) -> str:
    spec = ServerSpec(tree.name, tree / ".venv" / "bin" / "python", "accord.samples.echo:agent",
                      accord=True, store=store)  # fmt: skip
    _, path, body, version = load
    with serve(spec) as server:
        result = cpu_per_request(
            server, body=body, path=path, version=version, seconds=seconds, connections=conns
        )
    errors = f", {result.errors} errors" if result.errors else ""
    return f"{result.cpu_us:6.0f} µs/req {result.rps:7.0f} req/s{errors}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    args = parser.parse_args()
    raise_fd_limit()
    pin_load()
    for round_ in range(1, args.rounds + 1):
        for load in LOADS:
            for tree in args.trees:
                line = measure(tree.resolve(), load, args.seconds, args.connections, args.store)
                print(f"round {round_}  {load[0]:14} {tree.name:10} {line}", flush=True)


if __name__ == "__main__":
    main()
