"""Where the test suite's CPU goes: a pytest plugin logging each test's CPU, and its ranking.

Each test's CPU is that of the pytest process and of the children it reaped meanwhile (the
`accord` servers and commands it started, node, Chromium), from getrusage before and after
the test (setup and teardown included: a module's fixtures count at its first or last test).
CPU, unlike wall time, hardly moves with the machine's load.

    PYTHONPATH=bench SUITE_CPU_LOG=/tmp/cpu.jsonl .venv/bin/pytest -p suite_cpu tests/test_x.py
    .venv/bin/python bench/suite_cpu.py /tmp/cpu.jsonl [MODULES]

The second prints the total and the MODULES (default 30) that cost the most.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process, and of the children it reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    own, children = _cpu()
    started = time.monotonic()
    try:
        return (yield)
    finally:
        own_after, children_after = _cpu()
        line = {
            "id": item.nodeid,
            "self": own_after - own,
            "children": children_after - children,
            "wall": time.monotonic() - started,
        }
        with Path(os.environ.get("SUITE_CPU_LOG", "suite_cpu.jsonl")).open("a") as log:
            log.write(json.dumps(line) + "\n")


def rank(log: Path, shown: int) -> None:
    """Print the log's total CPU and its `shown` costliest modules."""
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for line in log.read_text().splitlines():
        test = json.loads(line)
        totals = modules[test["id"].split("::")[0]]
        totals[0] += test["self"]
        totals[1] += test["children"]
        totals[2] += test["wall"]
        totals[3] += 1
    print(f"{sum(t[0] + t[1] for t in modules.values()):.0f} s CPU in {len(modules)} modules")
    print("   cpu s   self s  children s   wall s  tests  module")
    ranked = sorted(modules.items(), key=lambda item: -(item[1][0] + item[1][1]))
    for module, (own, children, wall, tests) in ranked[:shown]:
        cpu = own + children
        print(f"{cpu:8.1f} {own:8.1f} {children:11.1f} {wall:8.1f} {tests:6.0f}  {module}")


if __name__ == "__main__":
    rank(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30)
