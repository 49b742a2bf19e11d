"""CPU time (user + sys) the `accord` command spends starting: median of N runs.

`python bench/startup.py [--runs N]` times `accord send --help`, `accord serve --help`,
`accord push failures --store memory`, `accord serve accord.samples.echo:agent --store
memory` up to its first answered request (the server's CPU read from /proc then), and
`accord send URL hello` to that server. Wall time
moves with the machine's load; CPU time much less, but still some: compare medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ACCORD = [sys.executable, "-m", "accord"]
COMMANDS = {
    "send --help": ["send", "--help"],
    "serve --help": ["serve", "--help"],
    "push failures": ["push", "failures", "--store", "memory"],
}


def command_cpu(arguments: list[str]) -> float:
    """Seconds of CPU one run of `accord ARGUMENTS` takes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*ACCORD, *arguments], capture_output=True, check=False, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve() -> tuple[subprocess.Popen[bytes], str, float]:
    """A memory-store echo server, its URL and the seconds of CPU it took to answer its card."""
    port = free_port()
    server = subprocess.Popen(
        [*ACCORD, "serve", "accord.samples.echo:agent", "--store", "memory", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            with urllib.request.urlopen(f"{url}/.well-known/agent-card.json", timeout=5):
                break
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"the server ended ({server.returncode}), unanswered") from None
            time.sleep(0.02)
    with open(f"/proc/{server.pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return server, url, ticks / os.sysconf("SC_CLK_TCK")


def stopped(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        for name, arguments in COMMANDS.items():
            cpu = statistics.median(command_cpu(arguments) for _ in range(runs))
            print(f"accord {name}: {cpu:.2f} s CPU")
        starts = []
        for _ in range(runs):
            server, url, cpu = serve()
            starts.append(cpu)
            stopped(server)
        print(f"accord serve (to first answer): {statistics.median(starts):.2f} s CPU")
        server, url, _ = serve()
        try:
            cpu = statistics.median(command_cpu(["send", url, "hello"]) for _ in range(runs))
            print(f"accord send URL hello: {cpu:.2f} s CPU")
        finally:
            stopped(server)


if __name__ == "__main__":
    main()
