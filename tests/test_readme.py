"""The README's examples run as written: the first agent, its client snippet and the executor."""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any

import pytest

import accord
from accord import Client
from accord.types import TaskState
from live_server import serve_app

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def block_containing(marker: str) -> str:
    blocks = [b for b in python_blocks() if marker in b]
    assert len(blocks) == 1, f"expected one README block with {marker!r}"
    return blocks[0]


def run_block(source: str, tmp_path: Path, name: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return runpy.run_path(str(path), run_name=name)


def test_first_agent_streams_its_greeting(tmp_path: Path) -> None:
    module = run_block(block_containing("def greeter"), tmp_path, "greeter")
    greeter = module["greeter"]
    assert isinstance(greeter, accord.Agent)

    with serve_app(greeter.app()) as url:
        client_code = block_containing("async def main").replace("http://127.0.0.1:8002", url)
        printed: list[str] = []
        namespace: dict[str, Any] = {"print": lambda *a: printed.append(" ".join(map(str, a)))}
        exec(compile(client_code, "README client example", "exec"), namespace)

    assert printed == ["completed Hello, Ada! Nice to meet you. "]


async def test_executor_example_asks_then_books(tmp_path: Path) -> None:
    module = run_block(block_containing("class Booking"), tmp_path, "booking")
    with serve_app(module["booking"].app()) as url:
        async with Client(url) as client:
            first = await client.send("a flight please")
            assert isinstance(first, accord.types.Task)
            assert first.status.state is TaskState.INPUT_REQUIRED
            done = await client.send("to Lisbon", task_id=first.id)
            assert isinstance(done, accord.types.Task)
            assert done.status.state is TaskState.COMPLETED
            assert done.artifacts and done.artifacts[0].name == "booking"


@pytest.mark.parametrize("block", python_blocks())
def test_every_block_compiles(block: str) -> None:
    compile(block, "README", "exec")
