"""Profiles accord's Task-mode `message/send` under wrk load with py-spy; prints the hot spots.

`python bench/profile.py [SECONDS] [--gc-off] [--target MODULE:ATTR] [--store sqlite]
[--version 1.0]` (default: 20 s of accord.samples.echo:agent, memory store, JSON-RPC 0.3).
The raw py-spy samples go to bench/results/profile.txt; the summary lists functions by own
time (that function was running) and accord's functions by total time (on the stack). py-spy
charges a garbage collection to whatever line allocated when it started:
`--gc-off` serves with the cyclic GC disabled, to see the code's own costs apart from the GC's.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

from common import ACCORD_TASK, BENCH, ServerSpec, pin_load, raise_fd_limit, send_body, serve
from load import wrk

PY_SPY = BENCH / ".venv-peer" / "bin" / "py-spy"
RAW = BENCH / "results" / "profile.txt"
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")
TOP = 25


def _short(frame: str) -> str:
    """`function (path/to/module.py:12)` as `function (package/module.py)`."""
    match = FRAME.match(frame)
    if not match:
        return frame
    path = match["file"]
    for marker in ("site-packages/", "/src/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{match['function']} ({path})"


def summarize(raw: str) -> tuple[int, Counter[str], Counter[str]]:
    """Total samples, samples per function as the leaf (own), and anywhere on the stack (total)."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_short(f) for f in stack.split(";") if not f.startswith("process ")]
        samples += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)
    return samples, own, total


class _GcOff(ServerSpec):
    """`accord serve` in a process whose cyclic garbage collector is disabled."""

    def command(self, port: int, workdir: Path) -> list[str]:
        script = "import gc; gc.disable(); from accord.cli.main import main; main()"
        return [str(self.python), "-c", script, *super().command(port, workdir)[1:]]


def main(seconds: int, spec: ServerSpec, version: str = "0.3") -> None:
    raise_fd_limit()
    pin_load()
    RAW.parent.mkdir(exist_ok=True)
    body = send_body(version)
    with serve(spec) as server:
        wrk(server.port, connections=50, seconds=3, body=body, version=version)
        spy = subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(server.pid), "--duration", str(seconds),
             "--rate", "200", "--format", "raw", "--output", str(RAW)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            result = wrk(server.port, connections=50, seconds=seconds, body=body, version=version)
        finally:
            spy.wait(timeout=seconds + 60)
    samples, own, total = summarize(RAW.read_text())
    print(f"{spec.target} under wrk -c50 while sampled: {result.rps:,.0f} req/s")
    print(f"{samples} samples of the server's CPU time (idle excluded)\n")
    inside = Counter({f: n for f, n in total.items() if "(accord/" in f and n < samples})
    for title, counter in (("own time", own), ("total time, accord functions", inside)):
        print(f"| {title} | share |\n| --- | ---: |")
        for function, count in counter.most_common(TOP):
            print(f"| `{function}` | {count / samples:.1%} |")
        print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", type=int, nargs="?", default=20)
    parser.add_argument("--gc-off", action="store_true", help="serve with the cyclic GC off")
    parser.add_argument("--target", default=ACCORD_TASK.target, help="agent to serve")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--version", choices=("0.3", "1.0"), default="0.3", help="A2A version")
    args = parser.parse_args()
    kind = _GcOff if args.gc_off else ServerSpec
    spec = kind(f"accord {args.target}", ACCORD_TASK.python, args.target, True, args.store)
    main(args.seconds, spec, args.version)
