"""One task store, one agent: two agents served from one folder with the default store keep
their tasks apart, a store keeping another agent's tasks refuses to serve (on every backend),
and replicas of one agent still share theirs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import accord
from accord.cli.main import app as cli
from accord.client import SyncClient
from accord.errors import TaskNotFound
from accord.samples import echo
from accord.store import StoreOfAnotherAgent, default_store_url
from accord.types import TaskState
from served_process import accord_servers
from stores import Backend, backend_fixture  # noqa: F401 - fixtures

MOVIES = accord.Agent(echo.agent.executor, name="Movies")
CURRENCY = accord.Agent(echo.agent.executor, name="Currency Agent")
"""Served as `accord serve test_store_per_agent:MOVIES` (and `:CURRENCY`)."""


def sent(client: SyncClient, text: str, task_id: str | None = None) -> accord.types.Task:
    answer = client.send(text, task_id=task_id)
    assert isinstance(answer, accord.types.Task), answer
    return answer


@pytest.mark.processes
def test_two_agents_served_from_one_folder_never_see_each_others_tasks(tmp_path: Path) -> None:
    movies_args = ("test_store_per_agent:MOVIES",)
    currency_args = ("test_store_per_agent:CURRENCY",)
    (tmp_path / ".accord").mkdir()
    (tmp_path / ".accord" / "accord.db").write_bytes(b"")  # where an earlier accord kept tasks
    with (
        accord_servers(movies_args, currency_args, cwd=tmp_path) as (movies, currency),
        SyncClient(movies.url) as to_movies,
        SyncClient(currency.url) as to_currency,
    ):
        currency_task = sent(to_currency, "convert 10 EUR")
        movies_task = sent(to_movies, "a film, please")

        listed_by_movies = {task.id for task in to_movies.list_tasks().tasks}
        with pytest.raises(TaskNotFound):
            to_movies.get_task(currency_task.id)
        with pytest.raises(TaskNotFound):
            to_movies.send("run this one", task_id=currency_task.id)
        listed_by_currency = {task.id for task in to_currency.list_tasks().tasks}
        with pytest.raises(TaskNotFound):
            to_currency.get_task(movies_task.id)
        still = to_currency.get_task(currency_task.id)

    assert listed_by_movies == {movies_task.id}
    assert listed_by_currency == {currency_task.id}
    assert still.status.state is TaskState.COMPLETED
    assert len(still.history or []) == len(currency_task.history or [])
    assert "tasks are kept in sqlite:///.accord/movies.db" in movies.output, movies.output
    assert "tasks are kept in sqlite:///.accord/currency-agent.db" in currency.output
    assert sorted(p.name for p in (tmp_path / ".accord").glob("*.db")) == [
        "accord.db",
        "currency-agent.db",
        "movies.db",
    ]
    assert (tmp_path / ".accord" / "accord.db").read_bytes() == b""  # left as it was
    note = "./.accord/accord.db (where an earlier accord kept tasks) is not used by default"
    assert note in movies.output and "--store sqlite:///.accord/accord.db" in movies.output


def test_commands_managing_one_store_take_the_one_in_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["db", "upgrade"]).stderr.startswith(
        "error: name the task store with --store URL (./.accord holds no store)"
    )
    (tmp_path / ".accord").mkdir()
    runner.invoke(cli, ["db", "upgrade", "--store", default_store_url("Movies")])

    upgraded = runner.invoke(cli, ["db", "upgrade"])
    runner.invoke(cli, ["db", "upgrade", "--store", default_store_url("Currency Agent")])
    two = runner.invoke(cli, ["push", "failures"])

    assert upgraded.exit_code == 0
    assert upgraded.stdout.startswith("sqlite:///.accord/movies.db is up to date")
    assert two.exit_code == 2
    assert "./.accord holds currency-agent.db, movies.db" in two.stderr


@pytest.mark.processes
def test_replicas_of_one_agent_served_from_one_folder_share_its_store(tmp_path: Path) -> None:
    args = ("test_store_per_agent:MOVIES",)
    with (
        accord_servers(args, args, cwd=tmp_path) as (first, second),
        SyncClient(first.url) as to_first,
        SyncClient(second.url) as to_second,
    ):
        task = sent(to_first, "a film, please")
        seen = to_second.get_task(task.id)
        listed = {listed.id for listed in to_second.list_tasks().tasks}

    assert seen.status.state is TaskState.COMPLETED
    assert listed == {task.id}


@pytest.mark.processes
def test_serving_an_agent_on_another_agents_store_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = default_store_url("Movies")
    with (
        accord_servers(("test_store_per_agent:MOVIES",), cwd=tmp_path) as (movies,),
        SyncClient(movies.url) as client,
    ):
        sent(client, "a film, please")

    refused = CliRunner().invoke(cli, ["serve", "test_store_per_agent:CURRENCY", "--store", url])

    assert refused.exit_code == 1
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"error: {url}: this task store keeps the tasks of the agent 'Movies',")
    assert "not of 'Currency Agent'" in line and "--store-agent" in line


def test_the_default_store_is_named_after_the_agent() -> None:
    assert default_store_url("Greeter") == "sqlite:///.accord/greeter.db"
    assert default_store_url("Currency Agent") == "sqlite:///.accord/currency-agent.db"
    assert default_store_url("  ☃ ") == "sqlite:///.accord/agent.db"
    assert default_store_url("../../etc/passwd") == "sqlite:///.accord/etc-passwd.db"


# --- the store's side, on every backend ---------------------------------------------------------


async def test_a_store_keeps_the_tasks_of_the_first_agent_bound_to_it(backend: Backend) -> None:
    store = await backend.open()
    await store.bind_agent("Movies")
    await store.bind_agent("Movies")  # a replica, or the same agent restarted
    again = await backend.open()  # another engine on the same data (SQL)
    await again.bind_agent("Movies")

    with pytest.raises(StoreOfAnotherAgent) as refused:
        await again.bind_agent("Currency Agent")

    assert (refused.value.recorded, refused.value.agent) == ("Movies", "Currency Agent")
    assert "'Movies'" in str(refused.value) and "'Currency Agent'" in str(refused.value)


async def test_an_app_on_another_agents_store_does_not_start(backend: Backend) -> None:
    store = await backend.open()
    await store.bind_agent("Movies")

    with pytest.raises(StoreOfAnotherAgent):
        async with _lifespan(accord.create_app(CURRENCY, store=store)):
            pass
    async with _lifespan(accord.create_app(CURRENCY, store=store, store_agent="Movies")):
        pass  # shared on purpose: the agent serves under the name the store keeps


def _lifespan(app: object) -> object:
    return app.router.lifespan_context(app)  # type: ignore[attr-defined]
