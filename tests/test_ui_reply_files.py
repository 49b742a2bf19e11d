"""Attaching a file to an answer in headless Chromium, against real agents on loopback: a
receipt sent with the expense form the host relayed, a file sent in the reply box, and an answer
being written that outlives a redraw of its turn."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
from contextlib import ExitStack
from pathlib import Path

from playwright.sync_api import Page, expect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import accord
from accord import Agent, create_app
from accord.agents import EventSink
from accord.host import host_agent
from accord.samples import expense
from accord.types import FilePart, FileWithBytes
from accord.ui.attachments import MAX_FILE_BYTES
from agents_for_tests import HOST_TOKEN
from live_server import serve_app
from ui_pages import serve_ui, start_conversation, turns

pytest_plugins = ["ui_browser"]

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
RECEIPT = {"name": "receipt.png", "mimeType": "image/png", "buffer": PNG_BYTES}


def test_a_receipt_goes_with_the_expense_form_relayed_by_the_host(
    stack: ExitStack, page: Page, tmp_path: Path
) -> None:
    remote = stack.enter_context(serve_app(create_app(expense.agent)))
    ui = serve_ui(stack, host=host_agent(tmp_path / "agents.json", [remote], token=HOST_TOKEN))
    start_conversation(page, ui, "please reimburse my taxi, 42.50 EUR on 2025-03-14")
    expect(turns(page).nth(0)).to_contain_text("Expense asks: Please check and complete this form.")
    form = page.locator("form.a2a-form:has(button)")
    expect(form.get_by_label("Attach a file (up to 5.0 MiB)")).to_be_visible()
    form.locator("input[type=file]").set_input_files(RECEIPT)
    form.locator("button").click()
    done = turns(page).nth(1)
    expect(done.locator("[data-state]")).to_have_text("completed")
    digest = hashlib.sha256(PNG_BYTES).hexdigest()[:12]
    expect(done).to_contain_text(f"Receipt: receipt.png (image/png, 10.0 KiB, sha256 {digest})")
    expect(page.locator(".bubble.user .file.attached")).to_have_text(
        "Attached receipt.png (image/png, 10.0 KiB)"
    )


class AsksForAFile(accord.AgentExecutor):
    """Asks which file, then says what it was given."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        if context.is_new_task:
            await task.requires_input("Which picture?")
            return
        said = [f"you said: {context.text}"]
        for part in context.message.parts:
            if isinstance(part, FilePart) and isinstance(part.file, FileWithBytes):
                content = base64.b64decode(part.file.bytes)
                said.append(f"got {part.file.name} {part.file.mime_type} {len(content)} bytes")
        await task.complete("; ".join(said))


asking_agent = Agent(AsksForAFile(), name="Asker", description="Asks for a picture.")


def test_a_file_is_sent_in_the_reply_box(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, asking_agent)
    start_conversation(page, ui, "look at my picture")
    first = turns(page).nth(0)
    expect(first).to_contain_text("Which picture?")
    reply = first.locator("form.answer")
    expect(reply.get_by_label("Attach a file (up to 5.0 MiB)")).to_be_visible()

    huge = {"name": "huge.bin", "mimeType": "application/octet-stream",
            "buffer": b"\0" * (MAX_FILE_BYTES + 1)}  # fmt: skip
    reply.locator("input[type=file]").set_input_files(huge)
    reply.locator("button").click()
    expect(reply.locator(".error")).to_have_text(
        "Not sent: huge.bin is 5.0 MiB; the UI sends files up to 5.0 MiB."
    )
    expect(turns(page)).to_have_count(1)

    reply.locator("input[type=file]").set_input_files(
        {"name": "stars.png", "mimeType": "image/png", "buffer": PNG_BYTES}
    )
    reply.locator("[name=reply]").fill("this one")
    reply.locator("button").click()
    answer = turns(page).nth(1)
    expect(answer).to_contain_text(
        f"you said: this one; got stars.png image/png {len(PNG_BYTES)} bytes"
    )


def test_a_file_alone_is_a_reply(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, asking_agent)
    start_conversation(page, ui, "look at my picture")
    reply = turns(page).nth(0).locator("form.answer")
    reply.locator("input[type=file]").set_input_files(RECEIPT)
    reply.locator("button").click()
    expect(turns(page).nth(1)).to_contain_text("got receipt.png image/png")


class HeldStreamEnd:
    """An agent whose streamed answers (SSE) stay open after their last event until
    `release()`: the UI sees the task wait for input, but not yet the end of the turn."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.released = threading.Event()

    def release(self) -> None:
        self.released.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streamed = False

        async def held(message: Message) -> None:
            nonlocal streamed
            if message["type"] == "http.response.start":
                streamed = (b"content-type", b"text/event-stream") in [
                    (name.lower(), value.split(b";")[0]) for name, value in message["headers"]
                ]
            elif streamed and not message.get("more_body", False):
                await asyncio.to_thread(self.released.wait)
            await send(message)

        await self.app(scope, receive, held)


def test_an_answer_being_written_survives_a_redraw_of_its_turn(
    stack: ExitStack, page: Page
) -> None:
    agent = HeldStreamEnd(create_app(asking_agent))
    ui = serve_ui(stack, stack.enter_context(serve_app(agent)))
    stack.callback(agent.release)  # before the servers stop, whatever happens
    start_conversation(page, ui, "look at my picture")
    turn = turns(page).nth(0)
    expect(turn).to_contain_text("Which picture?")  # the turn goes on: its stream has not ended
    reply = turn.locator("form.answer")
    reply.locator("input[type=file]").set_input_files(RECEIPT)
    reply.locator("[name=reply]").press_sequentially("this one, ")
    drawn = turn.element_handle()
    agent.release()  # the turn ends: the UI draws it anew
    page.wait_for_function("turn => !turn.isConnected", arg=drawn)
    page.keyboard.type("with its receipt")  # the answer box kept the focus
    reply.locator("button").click()
    expect(turns(page).nth(1)).to_contain_text(
        f"you said: this one, with its receipt; got receipt.png image/png {len(PNG_BYTES)} bytes"
    )


def test_a_form_being_filled_in_survives_a_redraw_of_its_turn(stack: ExitStack, page: Page) -> None:
    agent = HeldStreamEnd(create_app(expense.agent))
    ui = serve_ui(stack, stack.enter_context(serve_app(agent)))
    stack.callback(agent.release)
    start_conversation(page, ui, "please reimburse my taxi on 2025-03-14")
    turn = turns(page).nth(0)
    expect(turn).to_contain_text("Please check and complete this form.")
    form = turn.locator("form.a2a-form")
    form.locator("[name=amount]").fill("42.5")
    form.locator("[name=currency]").select_option("EUR")
    form.locator("input[type=file]").set_input_files(RECEIPT)
    drawn = turn.element_handle()
    agent.release()
    page.wait_for_function("turn => !turn.isConnected", arg=drawn)
    form.locator("button").click()
    expect(turns(page).nth(1)).to_contain_text("approved: 42.50 EUR for taxi on 2025-03-14.")
    expect(turns(page).nth(1)).to_contain_text("Receipt: receipt.png (image/png, 10.0 KiB")
