"""The package's imports run one way: no cycles, each layer only below itself, a lean client."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# What each part of accord may import besides itself: at module level, in functions and for
# type checking alike. Every part has its row, and the rows form layers (no part reaches one
# that reaches it back); bottom up: types/errors, core, codecs and store, runtime, server, and
# on top the client and the tools.
BASE = {"types", "errors"}
CORE = BASE | {"core"}
ALLOWED: dict[str, set[str]] = {
    "types": set(),
    "errors": {"types"},
    "core": BASE,
    "language": set(),  # the chat model the samples and the host read requests with
    "lazy_exports": set(),  # a package's names loaded on first use: accord's, client's, server's
    "extensions": CORE,
    "agents": CORE,
    "codecs": CORE,
    "store": CORE,
    "keys": BASE,
    "web": BASE,  # Host names, same origin, the fetch guard: the server's, the UI's, the host's
    "push": CORE | {"keys", "codecs"},  # codecs: a 1.0 notification's event read back
    "auth": CORE | {"keys"},
    "grpc": CORE | {"codecs"},
    "runtime": CORE | {"agents", "store", "keys", "web"},
    "server": CORE
    | {"extensions", "agents", "codecs", "store", "runtime", "grpc", "keys", "auth", "web",
       "lazy_exports"},
    "client": CORE | {"codecs", "grpc", "keys", "lazy_exports"},
    "integrations": CORE | {"agents"},  # framework adapters: the agents API only
    "accord": {"errors", "agents", "client", "server", "lazy_exports"},  # each loaded on use
    "samples": CORE | {"accord", "extensions", "agents", "language", "mcp"},
    "ui": CORE | {"codecs", "web", "runtime", "client"},  # runtime: its state_machine
    "gateway": CORE | {"agents", "client", "extensions"},  # an Agent whose executor is a Client
    "host": CORE | {"accord", "agents", "auth", "web", "server", "client", "language"},
    # A2A agents as MCP tools (web: the HTTP endpoint's token), MCP tools for agents
    "mcp": CORE | {"accord", "agents", "client", "web"},
    "observability": CORE | {"accord", "agents", "codecs", "runtime", "server", "client"},
    "cli": CORE | {"accord", "extensions", "agents", "codecs", "store", "keys", "push", "auth",
                   "grpc", "runtime", "server", "client", "samples", "ui", "host", "language",
                   "web", "mcp", "observability", "registry"},
    "__main__": {"cli"},
    "registry": CORE | {"accord", "agents", "auth", "codecs", "store", "keys", "web", "client",
                        "server"},
    "testing": CORE | {"agents", "server", "client"},  # an agent's tests: a client in-process
}  # fmt: skip
"""The client's `grpc` is the service tables (accord.grpc.services); the server's gRPC binding
is `accord.server.grpc_binding`."""

HEAVY_FOR_A_CLIENT = ("starlette", "uvicorn", "sqlalchemy", "aiosqlite", "asyncpg", "redis")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path
    for path in SRC.rglob("*.py")
    if "generated" not in path.parts  # protoc's output
}


def imported(path: Path, *, type_only: bool, late: bool = False) -> Iterator[str]:
    """The accord modules `path` imports at module level, with `type_only` also those in its
    `if TYPE_CHECKING:` blocks, with `late` also those imported inside functions."""

    def walk(body: list[ast.stmt]) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                if type_only:
                    yield from walk(node.body)
                yield from walk(node.orelse)
            elif isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield node.module
                yield from (f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if late:
                    yield from walk(node.body)
            else:  # if, try, with, for, class bodies...
                for field in ("body", "orelse", "finalbody"):
                    yield from walk(getattr(node, field, []))
                for handler in getattr(node, "handlers", ()):
                    yield from walk(handler.body)

    tree = ast.parse(path.read_text(encoding="utf-8"))
    yield from (name for name in walk(tree.body) if name in MODULES)


def graph(*, type_only: bool, late: bool = False) -> dict[str, set[str]]:
    return {
        name: set(imported(path, type_only=type_only, late=late)) - {name}
        for name, path in MODULES.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return found


def part(module: str) -> str:
    """The part of accord a module belongs to (`accord.codecs.v1_0` -> `codecs`)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "accord"


def test_every_part_has_its_row() -> None:
    assert {part(module) for module in MODULES} == set(ALLOWED)


def test_the_layers_are_one_way() -> None:
    assert cycles(ALLOWED) == []


def test_the_agents_hand_off_to_the_server_by_name() -> None:
    """`Agent.app` and `Agent.serve` name what serves an agent (it sits above the agents, so
    no import of it is allowed there); the names must stay right."""
    import accord.cli.serve
    import accord.server
    from accord.agents.agent import APP_FACTORY, SERVER, entry_point

    assert entry_point(APP_FACTORY) is accord.server.create_app
    assert entry_point(SERVER) is accord.cli.serve.serve_agent


def test_the_modules_were_found() -> None:
    assert {"accord.server.pipeline", "accord.core.call_context", "accord.client"} <= set(MODULES)


def test_no_import_cycle_at_run_time() -> None:
    assert cycles(graph(type_only=False)) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_part_imports_only_the_layers_below_it() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in graph(type_only=True, late=True).items()
        for target in targets
        if part(target) != part(module) and part(target) not in ALLOWED[part(module)]
    ]
    assert wrong == []


def test_the_client_uses_only_the_grpc_service_tables() -> None:
    grpc_imports = {
        target
        for module, targets in graph(type_only=True).items()
        if part(module) == "client"
        for target in targets
        if part(target) == "grpc"
    }
    assert grpc_imports <= {"accord.grpc", "accord.grpc.services"}


@pytest.mark.parametrize(
    "statement", ["import accord.client", "from accord import Client", "import accord.push"]
)
@pytest.mark.processes
def test_a_client_script_loads_no_server(statement: str) -> None:
    check = (
        f"import sys\n{statement}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in HEAVY"
        " or m.startswith(('accord.server', 'accord.store', 'accord.runtime')))\n"
        "print(','.join(loaded))\n"
    )
    script = f"HEAVY = {HEAVY_FOR_A_CLIENT!r}\n{check}"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


KEYS = ("accord.keys", "jwt", "cryptography")


@pytest.mark.processes
def test_a_client_loads_the_keys_only_when_trusted_keys_are_used() -> None:
    """jwt and cryptography cost a script that only calls agents ~160 ms: loaded for
    `trusted_keys` only."""
    check = (
        "import sys\n"
        "def loaded(): return sorted({m for m in sys.modules if m.startswith(KEYS)})\n"
        "from accord.client import Client\n"
        "print(loaded())\n"
        "Client('http://agent.example', trusted_keys='http://agent.example/jwks.json')\n"
        "print(loaded())\n"
    )
    script = f"KEYS = {KEYS!r}\n{check}"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    plain, trusting = result.stdout.splitlines()
    assert plain == "[]"
    assert "'accord.keys'" in trusting and "'jwt'" in trusting


def modules_loaded_by(script: str) -> set[str]:
    """The modules a fresh interpreter has loaded once it ran `script`."""
    check = f"import sys\n{script}\nprint(' '.join(sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True, timeout=60
    )
    return set(result.stdout.split())


@pytest.mark.processes
def test_one_module_of_the_client_loads_only_what_it_needs() -> None:
    """The server's CLI reports a missing credential (`accord.client.credentials`) without
    loading the rest of the client: the client itself, its transports, the card resolver."""
    loaded = modules_loaded_by("import accord.client.credentials")

    assert loaded.isdisjoint(
        {"accord.client.client", "accord.client.transports", "accord.client.card_resolver"}
    )


@pytest.mark.processes
def test_serving_on_the_memory_store_loads_no_sqlalchemy() -> None:
    script = (
        "import asyncio\n"
        "from accord.cli.storage import prepare_store, using_store\n"
        "prepare_store('memory', 'Echo')\n"
        "using_store('memory', lambda store: asyncio.sleep(0))\n"
    )
    assert not any(name.startswith("sqlalchemy") for name in modules_loaded_by(script))


@pytest.mark.processes
def test_the_commands_that_talk_to_an_agent_load_the_keys_only_to_verify_a_card() -> None:
    loaded = modules_loaded_by("import accord.cli.agent_commands")

    assert not any(name.startswith(KEYS) for name in loaded)


@pytest.mark.processes
def test_the_server_config_loads_no_app() -> None:
    """`accord serve --help` reads the options from `accord.server.config`, not the app."""
    loaded = modules_loaded_by("import accord.server.config")

    assert loaded.isdisjoint({"accord.server.app", "accord.server.service"})
