"""`accord mcp serve`: the mcp SDK's own client lists and calls A2A agents' skills over stdio
and streamable HTTP — a question answered in the same task, streamed progress, a file."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.types import CallToolResult, ImageContent, ResourceLink, TextContent, TextResourceContents

import accord
from accord import create_app
from accord.auth import ApiKey, Security
from accord.cli.exit_codes import EXIT_UNREACHABLE
from accord.cli.mcp_bridge import TOKEN_VARIABLE
from accord.mcp.serving import MCP_PATH
from accord.samples import currency, echo, expense, image, ticker
from accord.types import TaskState
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from served_process import STARTUP_TIMEOUT, accord_command, free_port
from test_sample_expense import VALID

pytestmark = pytest.mark.processes

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def quietly(context: accord.RequestContext) -> str:
    return f"heard: {context.text}"


NOT_STREAMING = accord.agent(
    quietly, name="Quiet", description="Answers in one message.", streaming=False
)


@pytest.fixture(scope="module")
def agent_urls() -> Iterator[list[str]]:
    """Currency (asks questions), Ticker (streams), Image (files), Echo (a plain reply) and an
    agent that does not stream, each on its own loopback port."""
    agents = [currency.agent, ticker.agent, image.agent, echo.message_agent, NOT_STREAMING]
    with ExitStack() as stack:
        yield [stack.enter_context(served(create_app(agent))) for agent in agents]


def stdio_bridge(urls: list[str]) -> Client:
    command = accord_command("mcp", "serve", *urls)
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    return Client(parameters, read_timeout_seconds=SAFETY_TIMEOUT * 3)


@contextmanager
def http_bridge(
    urls: list[str], *options: str, token: str | None = None
) -> Iterator[tuple[str, str]]:
    """`accord mcp serve --http` in a subprocess (with `token` in ACCORD_MCP_TOKEN); its MCP
    URL on loopback once it says it serves, and what it said until then (what it says after
    that is read, and dropped, by a thread)."""
    port = free_port()
    command = accord_command("mcp", "serve", *urls, "--http", "--port", str(port), *options)
    env = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
    if token is not None:
        env[TOKEN_VARIABLE] = token
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    watchdog = threading.Timer(STARTUP_TIMEOUT, process.kill)
    watchdog.start()
    drain = threading.Thread(target=process.stderr.read, daemon=True)
    try:
        said = ""
        for line in process.stderr:
            said += line
            if " over MCP at " in line:
                break
        watchdog.cancel()
        assert " over MCP at " in said, said
        drain.start()
        yield f"http://127.0.0.1:{port}{MCP_PATH}", said
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait(timeout=SAFETY_TIMEOUT)
        if drain.is_alive():
            drain.join(timeout=SAFETY_TIMEOUT)
        process.stderr.close()


@asynccontextmanager
async def over_http(urls: list[str], mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client of the bridge over streamable HTTP (`mode`: "legacy" for the handshake
    of the protocol's earlier versions, "auto" for its latest)."""
    with http_bridge(urls) as (mcp_url, _):
        timeout = SAFETY_TIMEOUT * 3
        async with Client(mcp_url, read_timeout_seconds=timeout, mode=mode) as client:
            yield client


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def test_skills_are_tools_and_cards_are_resources_over_stdio(agent_urls: list[str]) -> None:
    async with stdio_bridge(agent_urls) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        resources = (await client.list_resources()).resources
        card = await client.read_resource(resources[0].uri)
    assert list(tools) == ["convert_currency", "ticker", "draw_image", "echo_message", "quiet"]
    convert = tools["convert_currency"]
    assert convert.description and "Converts an amount" in convert.description
    assert "How much is 100 USD in EUR?" in convert.description
    schema = convert.input_schema
    assert schema["required"] == ["message"]
    assert {"message", "taskId", "contextId"} <= set(schema["properties"])
    assert [r.name for r in resources] == ["Currency", "Ticker", "Image", "Echo (message)", "Quiet"]
    assert resources[0].uri == agent_urls[0] + "/.well-known/agent-card.json"
    assert resources[0].mime_type == "application/json"
    (contents,) = card.contents
    assert isinstance(contents, TextResourceContents)
    assert json.loads(contents.text)["skills"][0]["id"] == "convert_currency"


async def test_a_question_is_answered_in_the_same_task_over_stdio(agent_urls: list[str]) -> None:
    async with stdio_bridge(agent_urls) as client:
        asked = await client.call_tool("convert_currency", {"message": "convert 100 USD"})
        question = asked.structured_content
        assert not asked.is_error
        assert question["state"] == "input-required"
        assert question["question"] == "To which currency?"
        assert texts(asked)[0] == "To which currency?"
        assert question["taskId"] in texts(asked)[1]
        answered = await client.call_tool(
            "convert_currency", {"message": "to EUR", "taskId": question["taskId"]}
        )
    result = answered.structured_content
    assert not answered.is_error
    assert result["state"] == "completed"
    assert (result["taskId"], result["contextId"]) == (question["taskId"], question["contextId"])
    assert result["data"][0]["source"] == "USD" and result["data"][0]["target"] == "EUR"
    assert texts(answered)[0].startswith("100.00 USD = ")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_streamed_updates_are_progress_notifications_over_http(
    agent_urls: list[str], mode: str
) -> None:
    notes: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        notes.append((done, message))

    async with over_http(agent_urls, mode) as client:
        result = await client.call_tool("ticker", {"message": "5"}, progress_callback=progress)
    ticks = [message for _, message in notes if message and message.startswith("tick")]
    assert ticks == [f"tick {n}\n" for n in range(1, 6)]
    assert len(notes) == 8  # submitted, working, five ticks, completed
    assert [done for done, _ in notes] == sorted(done for done, _ in notes)
    assert texts(result) == ["".join(ticks)]
    assert result.structured_content["state"] == "completed"


async def test_a_file_comes_back_as_an_image_and_a_link_over_http(agent_urls: list[str]) -> None:
    async with over_http(agent_urls) as client:
        result = await client.call_tool("draw_image", {"message": "a red circle"})
    images = [block for block in result.content if isinstance(block, ImageContent)]
    links = [block for block in result.content if isinstance(block, ResourceLink)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(PNG_MAGIC)
    assert len(links) == 1 and links[0].uri.startswith(agent_urls[2] + "/images/")


async def test_replies_without_a_task_and_without_streaming(agent_urls: list[str]) -> None:
    async with over_http(agent_urls) as client:
        echoed = await client.call_tool("echo_message", {"message": "hello"})
        quiet_reply = await client.call_tool("quiet", {"message": "psst"})
    assert texts(echoed) == ["hello"] and "taskId" not in echoed.structured_content
    assert texts(quiet_reply) == ["heard: psst"]


async def test_mistakes_get_clear_answers(agent_urls: list[str]) -> None:
    async with over_http(agent_urls) as client:
        with pytest.raises(MCPError, match="no tool named 'nope'"):
            await client.call_tool("nope", {"message": "hi"})
        wrong = await client.call_tool("ticker", {"message": 3})
        extra = await client.call_tool("ticker", {"message": "3", "files": [], "colour": "red"})
        unknown_task = await client.call_tool("ticker", {"message": "3", "taskId": "no-such"})
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("http://elsewhere.example/card.json")
    assert wrong.is_error
    assert "message: Input should be a valid string" in texts(wrong)[0]
    assert texts(extra) == ["bad arguments: colour, files: not an argument of ticker"]
    assert unknown_task.is_error and "could not answer" in texts(unknown_task)[0]


def test_an_agent_that_cannot_be_reached_is_named(tmp_path: Any) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = subprocess.run(
        accord_command("mcp", "serve", url),
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == EXIT_UNREACHABLE
    assert result.stderr.strip().startswith(f"error: cannot connect to {url}/.well-known/")


async def tool_names(mcp_url: str, token: str) -> list[str]:
    """The tools the SDK's client lists at `mcp_url`, sending `token` as a bearer token."""
    http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http_client,
        Client(streamable_http_client(mcp_url, http_client=http_client)) as client,
    ):
        return [tool.name for tool in (await client.list_tools()).tools]


def refusal(mcp_url: str, headers: dict[str, str]) -> httpx.Response:
    """What the endpoint answers an `initialize` sent with `headers`."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    return httpx.post(mcp_url, json=initialize, headers={**accept, **headers}, timeout=10)


async def test_beyond_loopback_the_http_endpoint_needs_the_token_it_printed(
    agent_urls: list[str],
) -> None:
    with http_bridge(agent_urls[:1], "--host", "0.0.0.0") as (mcp_url, said):
        token = said.split("Authorization: Bearer ", 1)[1].split()[0]
        missing = refusal(mcp_url, {})
        wrong = refusal(mcp_url, {"Authorization": f"Bearer {token}x"})
        basic = refusal(mcp_url, {"Authorization": f"Basic {token}"})
        assert await tool_names(mcp_url, token) == ["convert_currency"]
    assert len(token) >= 32
    for answer in (missing, wrong, basic):
        assert answer.status_code == 401, answer.text
        assert answer.headers["www-authenticate"].startswith("Bearer")


async def test_a_token_set_is_needed_on_loopback_too(agent_urls: list[str]) -> None:
    with http_bridge(agent_urls[:1], token="a-token-of-ours") as (mcp_url, said):
        refused = refusal(mcp_url, {})
        assert await tool_names(mcp_url, "a-token-of-ours") == ["convert_currency"]
    assert refused.status_code == 401
    assert "a-token-of-ours" not in said  # a token given is not printed


def test_the_http_endpoint_has_the_limits_of_every_server_command(agent_urls: list[str]) -> None:
    """A POST asking to upgrade is answered and its connection closed, as `accord serve`
    does: no WebSocket handshake left waiting, no connection held."""
    with http_bridge(agent_urls[:1]) as (mcp_url, _):
        address = httpx.URL(mcp_url)
        asking = (
            f"POST {address.path} HTTP/1.1\r\nHost: {address.host}:{address.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 2\r\n\r\n{}"
        )
        with socket.create_connection((address.host, address.port), SAFETY_TIMEOUT) as sent:
            sent.sendall(asking.encode())
            answer = b""
            while chunk := sent.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 ") and b"connection: close" in answer.lower(), answer


async def test_a_call_given_up_cancels_the_task_over_stdio(agent_urls: list[str]) -> None:
    ticking = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        if message and message.startswith("tick"):
            ticking.set()

    async with stdio_bridge(agent_urls) as client, anyio.create_task_group() as group:
        call = partial(client.call_tool, "ticker", {"message": "1000"}, progress_callback=progress)
        group.start_soon(call)
        await ticking.wait()
        group.cancel_scope.cancel()
    async with accord.Client(agent_urls[1]) as agent:
        (task,) = (await agent.list_tasks(page_size=1)).tasks
        with anyio.fail_after(SAFETY_TIMEOUT):
            while task.status.state is not TaskState.CANCELED:
                await anyio.sleep(0.1)
                task = await agent.get_task(task.id)
        ticks = (await agent.get_task(task.id)).artifacts or []
    assert ticks and len(ticks[0].parts) < 1000


def whoami(context: accord.RequestContext) -> str:
    return f"hello {context.principal.id}"


async def test_the_agents_get_the_clis_credentials() -> None:
    guarded = accord.agent(
        whoami, name="Guarded", security=Security(ApiKey({"mcp-key": "mcp-user"}))
    )
    with served(create_app(guarded)) as url:
        command = accord_command("mcp", "serve", url)
        env = {**get_default_environment(), "ACCORD_API_KEY": "mcp-key"}
        parameters = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with Client(parameters, read_timeout_seconds=SAFETY_TIMEOUT * 3) as client:
            result = await client.call_tool("guarded", {"message": "hi"})
    assert texts(result) == ["hello mcp-user"]


async def test_data_and_a_file_go_to_a_skill_that_takes_them() -> None:
    receipt = b"%PDF-1.7\n" + b"receipt " * 100
    arguments = {
        "message": "please reimburse",
        "data": {**VALID, "category": "travel"},
        "files": [{"data": base64.b64encode(receipt).decode(), "name": "invoice.pdf"}],
    }
    with served(create_app(expense.agent)) as url:
        async with stdio_bridge([url]) as client:
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool(tool.name, arguments)
            garbled = {"message": "hi", "files": [{"data": "not base64!"}]}
            refused = await client.call_tool(tool.name, garbled)
    assert {"data", "files"} <= set(tool.input_schema["properties"])
    assert result.structured_content["state"] == "completed", texts(result)
    record = result.structured_content["data"][0]
    assert record["receipt"]["sha256"] == hashlib.sha256(receipt).hexdigest()
    assert record["receipt"]["mediaType"] == "application/pdf"
    assert refused.is_error
    assert texts(refused) == ["bad arguments: files.0.data is not base64"]
