"""The UI's task controls in headless Chromium, against real agents on loopback: canceling a
task, attaching a file to a message, and listing the tasks an agent keeps."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from contextlib import ExitStack

import httpx
from playwright.sync_api import Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import accord
from accord import Agent, create_app
from accord.agents import EventSink
from accord.auth import ApiKey, Security
from accord.client import ApiKey as ApiKeyCredential
from accord.client import SyncClient
from accord.errors import TaskNotCancelable
from accord.samples import currency, echo
from accord.types import FilePart, FileWithBytes, TaskState
from accord.ui.attachments import MAX_FILE_BYTES
from live_server import serve_app
from test_agent_card_versions import ONLY_V1_0, without
from ui_pages import serve_ui, start_conversation, turns, ui_client

pytest_plugins = ["ui_browser"]


class Slow(accord.AgentExecutor):
    """Works on every task until it is canceled."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        await task.update_status(TaskState.WORKING, "Working on it, for a long while")
        await asyncio.sleep(600)


class Stubborn(accord.AgentExecutor):
    """Asks a question, and refuses to let the task be canceled."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        await accord.TaskUpdater(context, events).requires_input("Which warehouse?")

    async def cancel(self, context: accord.RequestContext, events: EventSink) -> None:
        raise TaskNotCancelable("the order is already with the warehouse")


slow_agent = Agent(Slow(), name="Slow", description="Works until canceled.")
stubborn_agent = Agent(Stubborn(), name="Stubborn", description="Never lets go.")


def test_a_working_task_is_canceled_from_the_conversation(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, slow_agent)
    start_conversation(page, ui, "count the stars")
    first = turns(page).nth(0)
    expect(first.locator("[data-state]")).to_have_text("working")
    expect(first).to_contain_text("Working on it")
    first.get_by_role("button", name="Cancel task").click()
    expect(page.locator(".bubble.user").nth(1)).to_contain_text("Cancel task")
    canceling = turns(page).nth(1)
    expect(canceling.locator("[data-state]")).to_have_text("canceled")
    expect(page.get_by_role("button", name="Cancel task")).to_have_count(0)
    expect(page.locator("[data-turn] .error")).to_have_count(0)  # the stream's end is no error

    page.click("nav >> text=Tasks")
    expect(page.locator("#tasks tr[data-task] [data-state]")).to_have_text("canceled")
    page.locator("#tasks tr[data-task] a").click()
    requests = page.locator("#timeline li[data-kind=request] pre")
    expect(requests.filter(has_text='"method":"CancelTask"')).to_have_count(1)


def test_an_agent_refusing_to_cancel_is_shown(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, stubborn_agent)
    start_conversation(page, ui, "ship my order")
    first = turns(page).nth(0)
    expect(first.locator("[data-state]")).to_have_text("input-required")
    first.locator("[name=reply]").fill("the one in Leeds")  # a draft, then a change of mind
    first.get_by_role("button", name="Cancel task").click()
    refused = turns(page).nth(1).locator(".error")
    expect(refused).to_contain_text("TaskNotCancelable): the order is already with the warehouse")
    # The task still waits for its answer, in place, with the answer being written.
    expect(first.locator("[name=reply]")).to_have_value("the one in Leeds")
    expect(first.get_by_role("button", name="Cancel task")).to_be_visible()

    page.goto(ui + str(first.locator("a[href^='/tasks/']").get_attribute("href")))
    page.get_by_role("button", name="Cancel task").click()
    expect(page.locator("#task-error")).to_contain_text("the order is already with the warehouse")
    expect(page.locator("h1 [data-state]")).to_have_text("input-required")


@accord.agent(name="Files", description="Says what files it was given.")
async def file_agent(context: accord.RequestContext) -> str:
    said = [f"you said: {context.text}"]
    for part in context.message.parts:
        if isinstance(part, FilePart) and isinstance(part.file, FileWithBytes):
            content = base64.b64decode(part.file.bytes)
            digest = hashlib.sha256(content).hexdigest()[:16]
            said.append(f"{part.file.name} {part.file.mime_type} {len(content)} bytes {digest}")
    return "\n".join(said)


PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40


def test_a_file_is_sent_with_the_message(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, file_agent)
    page.goto(ui + "/")
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    expect(page.get_by_label("Attach a file (up to 5.0 MiB)")).to_be_visible()
    page.fill("[name=message]", "what is in this picture?")
    page.set_input_files(
        "[name=file]", {"name": "stars.png", "mimeType": "image/png", "buffer": PNG_BYTES}
    )
    page.click("form.composer button")
    digest = hashlib.sha256(PNG_BYTES).hexdigest()[:16]
    answer = turns(page).nth(0)
    expect(answer).to_contain_text("you said: what is in this picture?")
    expect(answer).to_contain_text(f"stars.png image/png {len(PNG_BYTES)} bytes {digest}")
    expect(page.locator(".bubble.user .file.attached")).to_have_text(
        "Attached stars.png (image/png, 10.0 KiB)"
    )
    assert PNG_BYTES.hex()[:64] not in ui_client(ui).get("/api/state").text  # bytes not kept

    page.set_input_files(
        "[name=file]",
        {"name": "huge.bin", "mimeType": "application/octet-stream",
         "buffer": b"\0" * (MAX_FILE_BYTES + 1)},
    )  # fmt: skip
    page.click("form.composer button")
    expect(page.locator("#composer-error")).to_contain_text(
        "huge.bin is 5.0 MiB; the UI sends files up to 5.0 MiB"
    )
    expect(turns(page)).to_have_count(1)


def test_an_attachment_the_api_cannot_send_is_refused_in_words(stack: ExitStack) -> None:
    ui = serve_ui(stack, file_agent)
    big = base64.b64encode(b"\0" * (MAX_FILE_BYTES + 1)).decode()
    for file, error in [
        ({"name": "a.txt", "mimeType": "text/plain", "bytes": "not base64!"}, "not valid base64"),
        ({"name": "a.bin", "bytes": big}, "a.bin is larger than 5 MiB"),
        ("a.txt", "`file` must be an object"),
    ]:
        answer = ui_client(ui).post("/api/send", json={"agent": "x", "text": "t", "file": file})
        assert answer.status_code == 400, answer.text
        assert error in answer.json()["error"]


def test_the_agents_own_tasks_are_listed_and_opened(stack: ExitStack, page: Page) -> None:
    agent_url = stack.enter_context(serve_app(create_app(currency.agent)))
    with SyncClient(agent_url) as client:
        done = client.send("convert 100 USD to EUR")
        waiting = client.send("convert 5 USD")
    ui = serve_ui(stack, agent_url)
    page.goto(ui + "/tasks")
    expect(page.locator("#tasks")).to_contain_text("No tasks yet")
    rows = page.locator("#agent-tasks tr[data-agent-task]")
    expect(rows).to_have_count(2)
    assert rows.evaluate_all("rs => rs.map((r) => r.dataset.agentTask)") == [waiting.id, done.id]
    expect(rows.nth(0).locator("[data-state]")).to_have_text("input-required")
    expect(rows.nth(0)).to_contain_text("To which currency?")
    expect(rows.nth(1).locator("[data-state]")).to_have_text("completed")

    rows.nth(1).locator("a").click()
    page.locator("#fetch-task").click()  # the link names the task; the user fetches it
    expect(page.locator("h1 [data-state]")).to_have_text("completed")
    expect(page.locator("#history .bubble.user")).to_contain_text("convert 100 USD to EUR")
    expect(page.locator("[data-artifact]")).to_contain_text("100.00 USD = ")
    expect(page.locator("#timeline")).to_be_hidden()  # no wire log: the UI did not start it
    expect(page.get_by_role("button", name="Cancel task")).to_have_count(0)

    page.go_back()
    page.locator(f"#agent-tasks tr[data-agent-task='{waiting.id}'] a").click()
    page.locator("#fetch-task").click()
    expect(page.locator("h1 [data-state]")).to_have_text("input-required")
    page.get_by_role("button", name="Cancel task").click()
    expect(page.locator("h1 [data-state]")).to_have_text("canceled")
    with SyncClient(agent_url) as client:
        assert client.get_task(waiting.id).status.state is TaskState.CANCELED


KEYS = {"key-of-team-a": "team-a", "key-of-team-b": "team-b"}


def test_the_list_holds_the_tasks_of_the_uis_credentials(stack: ExitStack, page: Page) -> None:
    guarded_agent = Agent(echo.agent.executor, name="Guarded", description="Echoes its callers.",
                          security=Security(ApiKey(KEYS)))  # fmt: skip
    guarded = stack.enter_context(serve_app(create_app(guarded_agent)))
    sent = {}
    for key in KEYS:
        with SyncClient(guarded, credentials=[ApiKeyCredential(key=key)]) as client:
            sent[key] = client.send(f"hello from {KEYS[key]}")
    ui = serve_ui(stack, guarded)
    page.goto(ui + "/tasks")
    expect(page.locator("#agent-tasks-note")).to_contain_text("HTTP 401")

    answer = ui_client(ui).post("/api/agents", json={"url": guarded,
                                "credentials": {"apiKey": "key-of-team-b"}})  # fmt: skip
    assert answer.status_code == 201, answer.text
    page.get_by_role("button", name="List tasks").click()
    rows = page.locator("#agent-tasks tr[data-agent-task]")
    expect(rows).to_have_count(1)
    assert rows.get_attribute("data-agent-task") == sent["key-of-team-b"].id


def only_0_3_card_app(agent_url: str) -> Starlette:
    """The card of the agent at `agent_url` as a 0.3 agent serves it (no 1.0 interfaces)."""
    card = without(httpx.get(agent_url + "/.well-known/agent-card.json").json(), ONLY_V1_0)

    async def serve_card(request: Request) -> JSONResponse:
        return JSONResponse(card)

    return Starlette(routes=[Route("/.well-known/agent-card.json", serve_card)])


def test_an_agent_that_cannot_list_its_tasks_is_said_to(stack: ExitStack, page: Page) -> None:
    echo_url = stack.enter_context(serve_app(create_app(echo.agent)))
    older = stack.enter_context(serve_app(only_0_3_card_app(echo_url)))
    ui = serve_ui(stack, older)
    start_conversation(page, ui, "hello over 0.3")
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    page.click("nav >> text=Tasks")
    expect(page.locator("#agent-tasks-note [data-unsupported]")).to_contain_text(
        "Echo does not list its tasks (it speaks A2A 0.3; listing tasks needs 1.0)"
    )
    expect(page.locator("#tasks tr[data-task]")).to_have_count(1)  # its own, still shown
