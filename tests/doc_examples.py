"""Runs the code examples of a Markdown document the way a reader would, in a fresh folder.

Fenced blocks run in order, in one temporary folder per document where `.venv` leads to the
project's environment (so `.venv/bin/accord` works as in a clone, and so do `accord` and
`python`, as in an activated environment):

- `python`: run as a script; `python file=NAME` is saved as NAME for later blocks instead.
- `sh`: each command runs in bash and must succeed. A command that starts serving (it says
  `serving ... at URL` or uvicorn's `running on URL`) keeps running, as in another terminal,
  until the next `## ` section begins (a reader stops it with Ctrl-C before moving on).
  `make TARGET` is checked with `make -n` in the project (the target exists), not run.
- `console`: `$ COMMAND` lines run as in `sh`; the lines after each are its whole output
  (stdout, then stderr; an error shown there may end the command with a failure code; a
  server's, what it said until it answered).
- blocks without a language, `text` and `json` are pictures (a layout, a wire shape with
  elisions): shown, not run.
- a language followed by `skip` (`sh skip`) is not run: for what a test cannot do (other
  machines, minutes of work). Say why in the text around it.

Ports 8000-8099 in commands and code are mapped to free ports, the same one for the same
number throughout the document, so examples never meet a server that is already there.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from served_process import free_port

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent.parent
COMMAND_TIMEOUT = 60.0
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.DOTALL | re.MULTILINE)
_SERVING = re.compile(r"(?:serving .* at|running on) (?P<url>https?://[^\s)]+)")
_PORT = re.compile(r"(?<=[:= ])80\d\d\b")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: its language, the words after it, its text and where it starts."""

    language: str
    words: tuple[str, ...]
    text: str
    line: int
    section: int = 0

    @property
    def skipped(self) -> bool:
        return "skip" in self.words

    @property
    def file_name(self) -> str | None:
        names = [word.removeprefix("file=") for word in self.words if word.startswith("file=")]
        return names[0] if names else None


def blocks(document: Path) -> list[Block]:
    """The fenced code blocks of `document`, in order."""
    source = document.read_text()
    found = []
    for match in _FENCE.finditer(source):
        language, *words = match["info"].split() or [""]
        line = source.count("\n", 0, match.start()) + 1
        section = len(re.findall(r"^## ", source[: match.start()], flags=re.MULTILINE))
        found.append(Block(language, tuple(words), match["body"], line, section))
    return found


def commands(text: str) -> list[str]:
    """The commands of a shell block: continued lines and open quotes joined, comments and
    blank lines gone."""
    found: list[str] = []
    pending = ""
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            tokens = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        if tokens:
            found.append(pending)
        pending = ""
    return found


@dataclass
class Reader:
    """A reader working through one document: the folder, the ports, the servers started."""

    folder: Path
    ports: dict[str, str] = field(default_factory=dict)
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    count: int = 0
    section: int = 0

    def run_block(self, block: Block) -> None:
        where = f"block at line {block.line}"
        if block.section != self.section:
            self.stop_servers()
            self.section = block.section
        if block.language == "python" and block.file_name:
            (self.folder / block.file_name).write_text(self.local(block.text))
        elif block.language == "python":
            self.count += 1
            script = self.folder / f"example_{self.count}.py"
            script.write_text(self.local(block.text))
            self.run(f"python {script.name}", where)
        elif block.language == "sh":
            for command in commands(block.text):
                self.run(command, where)
        elif block.language == "console":
            for command, expected in transcript(block.text):
                output = self.run(command, where, must_succeed=False)
                shown = [line.rstrip() for line in output.splitlines()]
                assert shown == [self.local(line) for line in expected], (
                    f"{where}: {command} said:\n{output}"
                )

    def local(self, text: str) -> str:
        """`text` with the document's ports mapped to free ones."""
        return _PORT.sub(lambda match: self._port(match.group()), text)

    def run(self, command: str, where: str, *, must_succeed: bool = True) -> str:
        """Run one command; its output (stdout, then stderr). Servers are left running.

        A command must succeed unless its transcript shows what it says (an error, maybe).
        """
        if re.match(r"make\b", command):
            command = f"make -n -C {shlex.quote(str(ROOT))} {command.removeprefix('make')}"
        command = self.local(command)
        self.count += 1
        out = self.folder / f".out-{self.count}"
        err = self.folder / f".err-{self.count}"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env={**_environment(), "ACCORD_PORT": self._port("8000")},
                start_new_session=True,
            )
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while process.poll() is None:
            served = _SERVING.search(err.read_text(errors="replace"))
            if served:
                _wait_until_answering(served["url"], process)
                self.servers.append(process)
                return out.read_text(errors="replace") + err.read_text(errors="replace")
            if time.monotonic() > deadline:
                _stop(process)
                raise AssertionError(f"{where}: {command} did not finish")
            time.sleep(0.05)
        output = out.read_text(errors="replace") + err.read_text(errors="replace")
        assert process.returncode == 0 or not must_succeed, f"{where}: {command} failed\n{output}"
        return output

    def stop_servers(self) -> None:
        for process in self.servers:
            _stop(process)
        self.servers.clear()

    def _port(self, port: str) -> str:
        if port not in self.ports:
            self.ports[port] = str(free_port())
        return self.ports[port]


def transcript(text: str) -> Iterator[tuple[str, list[str]]]:
    """The `$ command` lines of a console block, each with the lines shown after it."""
    command: str | None = None
    expected: list[str] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, expected
            command, expected = line[2:], []
        elif command is not None:
            expected.append(line.rstrip())
    if command is not None:
        yield command, expected


@contextmanager
def reader(tmp_path: Path) -> Iterator[Reader]:
    """A reader in an empty folder whose `.venv` is the project's; servers stop at the end."""
    (tmp_path / ".venv").symlink_to(VENV)
    person = Reader(tmp_path)
    try:
        yield person
    finally:
        person.stop_servers()


def _environment() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ACCORD_", "PYTEST", "COV_"))
    }
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    return env


def _wait_until_answering(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            # whether it answers, not whom it is: an example's own CA signed its certificate
            httpx.get(url.rstrip("/") + "/.well-known/agent-card.json", timeout=2, verify=False)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError(f"the server said it serves {url} but does not answer")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
