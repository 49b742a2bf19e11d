"""The CLI as scripts use it: exit codes that say how a task ended, options where people type
them, files written only where asked, and one line (never a traceback) for bad input."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

import accord
from accord.agents import EventSink
from accord.auth import ApiKey, Security
from accord.cli.chat import ChatSession
from accord.cli.main import app
from accord.cli.turns import OutputChoice
from accord.core import Inbound, Principal
from accord.errors import Unauthenticated
from accord.extensions.timing import TIMING_URI, TimingExtension
from accord.samples import expense
from accord.types import DataPart, FilePart
from live_server import serve_app

# --- an agent whose every ending can be asked for ----------------------------------------------


class Outcomes(accord.AgentExecutor):
    """Ends its task as the message says: fail, reject, cancel, ask, auth; `files` answers
    with a text, a file and data; `tell` says what the request carried; else it completes."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        word = context.text.strip()
        if word == "fail":
            await task.fail("it broke")
        elif word == "reject":
            await task.reject("not for me")
        elif word == "cancel":
            await task.cancel("gave up")
        elif word == "ask":
            await task.requires_input("which one?")
        elif word == "auth":
            await task.requires_auth("sign in first")
        elif word == "files":
            await task.add_artifact(
                [
                    accord.types.TextPart(text="here it is"),
                    FilePart.from_bytes(b"report body", "report.txt"),
                    DataPart(data={"pages": 3}),
                ],
                name="report",
            )
            await task.complete()
        elif word == "tell":
            call = context.call
            headers = {k.lower(): v for k, v in (call.headers if call else {}).items()}
            said = {
                "metadata": context.metadata,
                "trace": headers.get("x-trace"),
                "extensions": sorted(e.uri for e in call.extensions) if call else [],
                "principal": context.principal.id,
            }
            await task.add_artifact(json.dumps(said, sort_keys=True))
            await task.complete()
        else:
            await task.add_artifact("done")
            await task.complete()


class KeyCheck:
    """The authenticator of docs/architecture.md: a key no card declares."""

    async def authenticate(self, inbound: Inbound) -> Principal:
        if inbound.headers.get("X-API-Key") != "secret":
            raise Unauthenticated("send X-API-Key", challenges=['ApiKey header="X-API-Key"'])
        return Principal("team-a", scheme="apiKey")


OUTCOMES = accord.Agent(Outcomes(), name="Outcomes", extensions=[TimingExtension()])


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_app(OUTCOMES.app()) as base_url:
        yield base_url


def invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin)


def tell(result: Result) -> dict[str, object]:
    assert result.exit_code == 0, result.output
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


# --- exit codes --------------------------------------------------------------------------------


def test_the_root_help_lists_the_exit_codes() -> None:
    text = invoke("--help").stdout
    listed = dict(re.findall(r"^\s+(\d+)\s+(.+)$", text.split("Exit status:")[1], re.MULTILINE))

    assert set(listed) == {"0", "1", "2", "3", "4", "5", "6", "7", "130"}
    assert "failed" in listed["3"] and "canceled" in listed["4"] and "input" in listed["5"]


@pytest.mark.parametrize(
    ("word", "code"),
    [("done", 0), ("fail", 3), ("reject", 3), ("cancel", 4), ("ask", 5), ("auth", 5)],
)
@pytest.mark.parametrize("streaming", ["--stream", "--no-stream"])
def test_send_exits_with_how_the_task_ended(url: str, word: str, code: int, streaming: str) -> None:
    result = invoke("send", url, word, streaming)

    assert result.exit_code == code, result.output


def test_get_and_cancel_exit_with_how_the_task_ended(url: str) -> None:
    failed = json.loads(invoke("send", url, "fail", "--json").stdout.splitlines()[-1])
    waiting = json.loads(invoke("send", url, "ask", "--json").stdout.splitlines()[-1])

    assert invoke("get", url, failed["id"]).exit_code == 3
    assert invoke("get", url, waiting["id"]).exit_code == 0  # waiting: nothing went wrong
    canceled = invoke("cancel", url, waiting["id"])
    assert canceled.exit_code == 0, canceled.output
    assert canceled.stdout.splitlines() == ["(canceled)"]  # the state, not the task again
    assert invoke("get", url, waiting["id"]).exit_code == 4


def test_a_piped_chat_exits_with_how_its_last_task_ended(url: str) -> None:
    assert invoke("chat", url, stdin="done\nfail\n").exit_code == 3
    assert invoke("chat", url, stdin="fail\nask\n").exit_code == 5
    assert invoke("chat", url, stdin="ask\n/cancel\n").exit_code == 4
    assert invoke("chat", url, stdin="done\n").exit_code == 0


def test_credentials_refused_and_agents_unreachable_have_codes_of_their_own() -> None:
    vault = accord.agent(lambda context: "in", name="Vault", security=Security(ApiKey({"k": "a"})))
    with serve_app(vault.app()) as vault_url:
        none_given = invoke("send", vault_url, "hi")
        wrong = invoke("send", vault_url, "hi", "--api-key", "guess")
        right = invoke("send", vault_url, "hi", "--api-key", "k")

    assert (none_given.exit_code, wrong.exit_code, right.exit_code) == (6, 6, 0)
    assert invoke("send", vault_url, "hi").exit_code == 7  # the server is gone
    assert invoke("send", "not a url", "hi").exit_code == 2


# --- options where people type them ------------------------------------------------------------


def test_credentials_work_before_and_after_the_command_even_if_the_card_declares_none() -> None:
    agent = accord.Agent(Outcomes(), name="Keyed")
    with serve_app(agent.app(authenticator=KeyCheck())) as keyed:
        before = invoke("--api-key", "secret", "send", keyed, "tell")
        after = invoke("send", keyed, "tell", "--api-key", "secret")
        overridden = invoke("--api-key", "wrong", "send", keyed, "tell", "--api-key", "secret")
        missing = invoke("send", keyed, "tell")

    assert tell(before)["principal"] == tell(after)["principal"] == "team-a"
    assert tell(overridden)["principal"] == "team-a"
    assert missing.exit_code == 6


def test_headers_extensions_and_metadata_reach_the_agent(url: str) -> None:
    result = invoke(
        "send",
        url,
        "tell",
        *("--header", "X-Trace: 42", "--extension", TIMING_URI),
        *("--metadata", '{"ticket": "T-1"}'),
    )

    said = tell(result)
    assert said["trace"] == "42" and said["extensions"] == [TIMING_URI]
    metadata = said["metadata"]
    assert isinstance(metadata, dict) and metadata["ticket"] == "T-1"
    assert f"{TIMING_URI}/receivedAt" in metadata  # the extension was active


def test_chat_sends_metadata_and_headers_with_each_message(url: str) -> None:
    result = invoke("chat", url, "--metadata", '{"a": 1}', "--header", "X-Trace: 7", stdin="tell\n")

    said = tell(result)
    assert said["metadata"] == {"a": 1} and said["trace"] == "7"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--header", "no colon", "--header must be NAME:VALUE"),
        ("--header", "Bad Name: x", "--header must be NAME:VALUE"),
        ("--metadata", "[1]", "--metadata must be a JSON object, got an array"),
        ("--metadata", "{", "--metadata is not valid JSON"),
    ],
)
def test_bad_headers_and_metadata_are_one_line(
    url: str, option: str, value: str, says: str
) -> None:
    result = invoke("send", url, "hi", option, value)

    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert says in result.stderr


# --- files where asked, parts apart, the final state ---------------------------------------------


def test_get_saves_files_only_when_asked(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task = json.loads(invoke("send", url, "files", "--json").stdout.splitlines()[-1])

    shown = invoke("get", url, task["id"])
    assert shown.exit_code == 0, shown.output
    assert list(tmp_path.iterdir()) == []
    assert "[file report.txt (text/plain, 11 B)]" in shown.stdout

    saved = invoke("get", url, task["id"], "--save-to", "out")
    assert (tmp_path / "out" / "report.txt").read_bytes() == b"report body"
    assert "saved out/report.txt (11 B)" in saved.stdout


def test_verbose_saves_files_as_the_default_view_and_puts_parts_on_their_own_lines(
    url: str, tmp_path: Path
) -> None:
    result = invoke("send", url, "files", "--verbose", "--save-to", str(tmp_path))

    lines = result.stdout.splitlines()
    assert (tmp_path / "report.txt").read_bytes() == b"report body"
    start = lines.index("artifact report: here it is")
    assert lines[start + 1 : start + 3] == [f"saved {tmp_path}/report.txt (11 B)", '{"pages": 3}']


def test_data_tables_leave_no_trailing_spaces(url: str) -> None:
    result = invoke("send", url, "files", "--save-to", "/tmp")

    assert "pages  3" in result.stdout.splitlines()
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]


# --- the card's security, chat's words ----------------------------------------------------------


def test_card_shows_the_security_it_asks_for() -> None:
    vault = accord.agent(lambda context: "in", name="Vault", security=Security(ApiKey({"k": "a"})))
    with serve_app(vault.app()) as vault_url:
        shown = invoke("card", vault_url).stdout.splitlines()

    assert "security: apiKey (an API key in the header 'X-API-Key')" in shown
    assert "  apiKey: an API key in the header 'X-API-Key'" in shown


def test_chat_names_its_own_commands_in_errors(url: str, tmp_path: Path) -> None:
    result = invoke("chat", url, stdin=f"/file {tmp_path}/missing.txt\n/data [1]\n")

    assert f"cannot read /file {tmp_path}/missing.txt" in result.stdout
    assert "/data must be a JSON object, got an array" in result.stdout
    assert "--file" not in result.stdout and "--data" not in result.stdout


def test_a_form_shows_as_fields_and_a_chat_at_a_terminal_asks_for_each() -> None:
    # the date kept; the amount asked again after "lots"; the category after "XYZ"
    answers = iter(
        ["taxi 42.50 EUR on 2025-03-14", "", "lots", "42.5", "", "XYZ", "", "airport taxi"]
    )
    prompts: list[str] = []

    def typed(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)  # StopIteration once they run out: the end of input

    screen = io.StringIO()
    console = Console(file=screen, highlight=False, soft_wrap=True, markup=False)
    with serve_app(expense.agent.app()) as expense_url:
        sent = invoke("send", expense_url, "taxi 42.50 EUR on 2025-03-14")
        with accord.SyncClient(expense_url) as client:
            session = ChatSession(
                client, console, OutputChoice(), Path(), _until_eof(typed), interactive=True
            )
            session.run()

    assert sent.exit_code == 5
    assert "  Amount (number, more than 0, at most 5000) [42.5]: What you paid." in sent.stdout
    assert "    one of: travel, meals, lodging, supplies, other" in sent.stdout
    assert '"properties"' not in sent.stdout and len(sent.stdout.splitlines()) < 15
    assert prompts[1:6] == [
        "Date (date) [2025-03-14]: ",
        "Amount (number, more than 0, at most 5000) [42.5]: ",
        "Amount (number, more than 0, at most 5000) [42.5]: ",
        "Currency (text) [EUR]: ",
        "Category (text, optional) [travel]: ",
    ]
    out = screen.getvalue()
    assert "a number, please" in out
    assert "one of travel, meals, lodging, supplies, other, please" in out
    assert "status       approved" in out and "purpose      airport taxi" in out


def _until_eof(read: Callable[[str], str]) -> Callable[[str], str]:
    def read_line(prompt: str) -> str:
        try:
            return read(prompt)
        except StopIteration:
            raise EOFError from None

    return read_line


def test_a_piped_chat_leaves_forms_to_its_lines() -> None:
    lines = 'taxi 42.50 EUR on 2025-03-14\n/data {"purpose": "airport taxi"}\nhere it is\n'
    with serve_app(expense.agent.app()) as expense_url:
        result = invoke("chat", expense_url, stdin=lines)

    assert result.exit_code == 0, result.output
    assert "Purpose (text" in result.stdout  # the form shown as its fields
    assert "status       approved" in result.stdout


def test_the_coders_files_are_saved_as_they_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from accord.samples.coder import CoderAgent

    monkeypatch.chdir(tmp_path)
    coder = accord.Agent(CoderAgent(chunk_delay=0), name="Coder")
    with serve_app(coder.app()) as coder_url:
        streamed = invoke("send", coder_url, "a CLI todo app in python")
        whole = invoke(
            "send", coder_url, "a CLI todo app in python", "--no-stream", "--save-to", "b"
        )

    assert streamed.exit_code == whole.exit_code == 0, streamed.output + whole.output
    names = ["README.md", "store.py", "todo.py", "test_todo.py"]
    assert [
        line.split(" (")[0] for line in streamed.stdout.splitlines() if line.startswith("saved")
    ] == [f"saved {name}" for name in names]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(names)
    assert (tmp_path / "todo.py").read_text() == (tmp_path / "b" / "todo.py").read_text()
    assert "def " in (tmp_path / "todo.py").read_text()
