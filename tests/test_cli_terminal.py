"""The CLI in a terminal (a pseudo-terminal): the spinner, Ctrl-C and Ctrl-D in a chat."""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Iterator

import pexpect
import pyte
import pytest
from rich.console import Console

from accord import SyncClient
from accord.cli.conversation import ConversationView
from accord.cli.interrupts import interrupts_held
from accord.samples import ticker
from accord.types import TaskState
from live_server import serve_app

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def ticker_url() -> Iterator[str]:
    with serve_app(ticker.agent.app()) as url:
        yield url


def screen_after(output: str) -> list[str]:
    """The lines a terminal shows once `output` is written to it (control sequences done)."""
    screen = pyte.Screen(100, 24)
    pyte.Stream(screen).feed(output.replace("\r\n", "\n").replace("\n", "\r\n"))
    return [line.rstrip() for line in screen.display if line.strip()]


def accord_in_terminal(*args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "accord", *args],
        encoding="utf-8",
        timeout=20,
        dimensions=(24, 100),
    )


def test_a_spinner_shows_while_the_agent_works_and_leaves_no_trace(ticker_url: str) -> None:
    child = accord_in_terminal("send", ticker_url, "3")

    child.expect("Ticker is working…")
    seen = child.before + child.after
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0
    assert screen_after(seen + child.before) == ["tick 1", "tick 2", "tick 3"]


def test_ctrl_c_during_an_answer_cancels_its_task_and_stays_in_the_chat(ticker_url: str) -> None:
    child = accord_in_terminal("chat", ticker_url)
    child.expect_exact("you> ")
    child.sendline("100")  # ten seconds of ticks
    child.expect_exact("tick 2")

    child.sendintr()
    child.expect_exact("Cancel this task? [Y/n] ")
    child.sendline("")
    child.expect_exact("(canceled)")
    child.expect_exact("you> ")
    child.sendintr()  # at the prompt: a fresh line, still in the chat
    child.expect_exact("you> ")
    child.sendline("/task")
    child.expect(r"task (\S+) in context")
    task_id = child.match.group(1)
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0
    assert child.before == "\r\n"  # Ctrl-D leaves on a clean new line
    with SyncClient(ticker_url) as client:
        assert client.get_task(task_id).status.state is TaskState.CANCELED


def test_declining_to_cancel_leaves_the_task_running(ticker_url: str) -> None:
    child = accord_in_terminal("chat", ticker_url)
    child.expect_exact("you> ")
    child.sendline("30")
    child.expect_exact("tick 1")

    child.sendintr()
    child.expect_exact("Cancel this task? [Y/n] ")
    child.sendline("n")
    child.expect_exact("(the task goes on; /task shows it, /cancel ends it)")
    child.expect_exact("you> ")
    child.sendline("/cancel")
    child.expect_exact("(canceled)")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0


def _interrupted_once(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """Ctrl-C arrives inside `Console.method`, before it does its part, the first time only."""
    original = getattr(Console, method)
    interrupted: list[bool] = []

    def arrives_inside(self: Console, *args: object) -> None:
        if not interrupted:
            interrupted.append(True)
            os.kill(os.getpid(), signal.SIGINT)
        original(self, *args)

    monkeypatch.setattr(Console, method, arrives_inside)


@pytest.mark.parametrize("method", ["push_render_hook", "pop_render_hook"])
def test_ctrl_c_while_the_spinner_starts_or_stops_leaves_the_console_whole(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """The interrupt is raised once the spinner has started or stopped whole: the answer's
    end still stops it, and the console has no live display left over."""
    console = Console(file=io.StringIO(), force_terminal=True)
    view = ConversationView(console)
    _interrupted_once(monkeypatch, method)
    with pytest.raises(KeyboardInterrupt):
        view.waiting()
        view.finish()
    view.finish()
    assert console._live_stack == [] and console._render_hooks == []


def test_a_held_interrupt_is_raised_after_the_block() -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt), interrupts_held():
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("the block went on")
    steps.append("after")
    assert steps == ["the block went on", "after"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
