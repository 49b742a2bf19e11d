"""What a person types into the UI, in headless Chromium against real agents on loopback:
secret form fields masked everywhere, a send that fails keeping its text, cleared fields sent
as cleared, messages of several lines, and the names things are shown and saved under."""

from __future__ import annotations

import importlib.util
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

import accord
from accord import Agent, create_app
from accord.agents import EventSink
from accord.samples import coder, currency, echo, expense
from accord.types import DataPart, FilePart, FileWithBytes, TextPart
from agents_for_tests import HOST_TOKEN
from live_server import serve_app
from test_ui_browser import FakeHost, add_agent
from ui_pages import serve_ui, start_conversation, turns, ui_client

pytest_plugins = ["ui_browser"]

PIN, TOKEN = "pin-4711-wrong", "tok-secret-0815"
LOCKER_FORM = {
    "type": "object",
    "title": "Unlock",
    "properties": {
        "user": {"type": "string", "title": "User"},
        "pin": {"type": "string", "title": "PIN", "format": "password"},
        "token": {"type": "string", "title": "Token", "writeOnly": True},
    },
    "required": ["user", "pin"],
}


class Locker(accord.AgentExecutor):
    """Asks for a form with secret fields; a wrong PIN gets the form back with all that was
    sent in it (as a careless agent would), the right one opens."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        sent: dict[str, Any] = {}
        for part in context.message.parts:
            if isinstance(part, DataPart):
                sent.update(part.data)
        if sent.get("pin") == "1234":
            await task.complete(f"Opened for {sent.get('user')}.")
            return
        said = "Wrong PIN." if sent else "Who are you?"
        form = {"type": "form", "form": LOCKER_FORM, "formData": sent}
        await task.requires_input([TextPart(text=said), DataPart(data=form)])


locker = Agent(Locker(), name="Locker", description="Opens for the right PIN.")


def fill_locker_form(page: Page, scope: Any) -> None:
    form = scope.locator("form.a2a-form:has(button)")
    expect(form.locator("[name=pin]")).to_have_attribute("type", "password")
    expect(form.locator("[name=token]")).to_have_attribute("type", "password")
    expect(form.locator("[name=user]")).to_have_attribute("type", "text")
    form.locator("[name=user]").fill("ada")
    form.locator("[name=pin]").fill(PIN)
    form.locator("[name=token]").fill(TOKEN)
    form.locator("button[type=submit]").click()


def test_secret_form_fields_are_masked_everywhere(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, locker)
    start_conversation(page, ui, "let me in")
    fill_locker_form(page, page)
    again = turns(page).nth(1)
    expect(again).to_contain_text("Wrong PIN.")
    form = again.locator("form.a2a-form:has(button)")
    expect(form.locator("[name=user]")).to_have_value("ada")  # not secret: kept as it was
    expect(form.locator("[name=pin]")).to_have_value("")  # never filled with the mask
    expect(page.locator(".bubble.user").nth(1)).to_contain_text("ada")
    expect(page.locator(".bubble.user").nth(1).locator(".secret")).to_have_count(2)
    content = page.content()
    assert PIN not in content and TOKEN not in content
    with ui_client(ui) as api:
        state = api.get("/api/state").text
        [task] = api.get("/api/state").json()["tasks"]
        timeline = api.get("/api/state", params={"task": task["id"]}).text
    for seen in (state, timeline):
        assert PIN not in seen and TOKEN not in seen and "ada" in seen
    page.goto(ui + f"/tasks/{task['id']}")
    request = page.locator("#timeline li[data-kind=request]", has_text="SendStreamingMessage")
    expect(request.nth(1).locator(".secret").first).to_have_text("••••")
    assert PIN not in page.content() and TOKEN not in page.content()


def test_the_inspectors_wire_view_masks_a_secret_and_reveals_it_on_demand(
    stack: ExitStack, page: Page
) -> None:
    agent = stack.enter_context(serve_app(create_app(locker)))
    ui = serve_ui(stack)
    page.goto(ui + "/inspector?url=" + agent)
    page.click("#inspect button")
    expect(page.locator("[name=interface] option").first).to_be_attached()
    page.fill("#inspector-send [name=message]", "let me in")
    page.click("#inspector-send button[type=submit]")
    fill_locker_form(page, page.locator(".items"))
    expect(page.locator(".items [data-turn]").nth(1)).to_contain_text("Wrong PIN.")
    # "ada" as a JSON string: bare, it can turn up in another request's traceparent (hex).
    sent = page.locator("#frames li[data-kind=request]", has_text='"ada"')
    expect(sent.locator(".secret").first).to_have_text("••••")
    assert PIN not in page.content() and TOKEN not in page.content()
    reveal = sent.locator("button.reveal")
    expect(reveal).to_have_attribute("aria-pressed", "false")
    reveal.click()
    expect(reveal).to_have_attribute("aria-pressed", "true")
    expect(sent.locator("pre")).to_contain_text(PIN)
    expect(sent.locator("pre")).to_contain_text(TOKEN)
    reveal.click()
    expect(sent.locator("pre")).not_to_contain_text(PIN)


def test_a_failed_send_keeps_the_text_says_why_and_retries(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, echo.agent)
    page.goto(ui + "/")
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    page.route("**/api/send", lambda route: route.abort())  # as when the UI's server is down
    page.fill("[name=message]", "a message worth keeping")
    page.click("form.composer button[type=submit]")
    error = page.locator("#composer-error")
    expect(error).to_contain_text("The UI's server did not answer")
    expect(error).not_to_contain_text("Failed to fetch")
    expect(page.locator("[name=message]")).to_have_value("a message worth keeping")
    page.unroute("**/api/send")
    error.locator("button", has_text="Retry").click()
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    expect(turns(page).nth(0)).to_contain_text("a message worth keeping")
    expect(page.locator("[name=message]")).to_have_value("")
    expect(error).to_be_empty()


def test_a_cleared_form_field_is_sent_as_cleared(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, expense.agent)
    start_conversation(page, ui, "taxi to the airport, 42.50 EUR on 2025-03-14")
    form = page.locator("form.a2a-form:has(button)")
    expect(form.locator("[name=category]")).to_have_value("travel")
    form.locator("[name=purpose]").fill("taxi to the airport")
    form.locator("[name=amount]").fill("-5")
    form.locator("button[type=submit]").click()
    expect(turns(page).nth(1)).to_contain_text("amount must be more than 0")
    form = page.locator("form.a2a-form:has(button)")
    expect(form.locator("[name=purpose]")).to_have_value("taxi to the airport")
    form.locator("[name=purpose]").fill("")
    form.locator("[name=category]").select_option("")
    form.locator("[name=amount]").fill("42.5")
    form.locator("button[type=submit]").click()
    expect(turns(page).nth(2)).to_contain_text("purpose is required")
    form = page.locator("form.a2a-form:has(button)")
    expect(form.locator(".field-error[data-field=purpose]")).to_have_text("Purpose is required")
    expect(form.locator("[name=category]")).to_have_value("")
    expect(form.locator("[name=amount]")).to_have_value("42.5")


def test_the_message_box_takes_several_lines(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, echo.agent)
    page.goto(ui + "/")
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    box = page.locator("[name=message]")
    box.click()
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("second line")
    expect(turns(page)).to_have_count(0)  # Shift+Enter is a new line, not a send
    page.keyboard.press("Enter")
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    said = page.locator(".bubble.user .text").first.inner_text()
    assert said == "first line\nsecond line"
    expect(box).to_have_value("")


def test_an_answered_turn_drops_its_input_required_badge(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, currency.agent)
    start_conversation(page, ui, "convert 100 USD")
    first = turns(page).nth(0)
    expect(first.locator("[data-state]")).to_have_text("input-required")
    first.locator("[name=reply]").fill("to yen")
    first.locator("form.answer button[type=submit]").click()
    expect(turns(page).nth(1).locator("[data-state]")).to_have_text("completed")
    expect(first.locator("[data-state]")).to_have_count(0)


class Unnamed(accord.AgentExecutor):
    """Answers with artifacts that have no name: a text in JSON, a PDF file."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.add_artifact(
            [TextPart(text='{"ok": true}')], metadata={"mimeType": "application/json"}
        )
        pdf = FileWithBytes(bytes="JVBERi0xLjQK", mime_type="application/pdf")
        await task.add_artifact([FilePart(file=pdf)])
        await task.complete()


def test_an_artifact_without_a_name_is_titled_by_its_type(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, Agent(Unnamed(), name="Unnamed", description="Nameless artifacts."))
    start_conversation(page, ui, "anything")
    turn = turns(page).nth(0)
    expect(turn.locator("[data-state]")).to_have_text("completed")
    assert turn.locator(".artifact .name").all_inner_texts() == ["JSON text", "PDF file"]
    names = []
    for link in turn.locator("a.download").all():
        with page.expect_download() as saved:
            link.click()
        names.append(saved.value.suggested_filename)
    assert names == ["artifact.json", "artifact.pdf"]


@pytest.mark.skipif(
    importlib.util.find_spec("accord.host") is None,
    reason="accord.host (the multi-agent host) is not in this build",
)
def test_a_file_relayed_by_the_host_downloads_under_its_own_name(
    stack: ExitStack, page: Page, tmp_path: Path
) -> None:
    from accord.host import host_agent

    remote = stack.enter_context(serve_app(create_app(coder.agent)))
    ui = serve_ui(stack, host=host_agent(tmp_path / "agents.json", [remote], token=HOST_TOKEN))
    start_conversation(page, ui, "write a CLI todo app in python")
    turn = turns(page).nth(0)
    expect(turn.locator("[data-state]")).to_have_text("completed", timeout=30_000)
    store = turn.locator(".artifact", has_text="store.py")
    expect(store.locator(".name")).to_have_text("Coder: store.py")
    with page.expect_download() as saved:
        store.locator("a.download").click()
    assert saved.value.suggested_filename == "store.py"


def test_an_address_with_no_agent_is_named_as_written(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack)
    page.goto(ui + "/inspector?url=http://no-such-host.invalid")
    page.click("#inspect button")
    banner = page.locator("#inspected .banner")
    expect(banner).to_contain_text("nothing answers at no-such-host.invalid")
    expect(banner).not_to_contain_text("None")


def test_a_registration_with_the_host_is_a_sentence_of_its_own(
    stack: ExitStack, page: Page
) -> None:
    host_url = stack.enter_context(serve_app(FakeHost().app()))
    agent = stack.enter_context(serve_app(create_app(echo.agent)))
    ui = serve_ui(stack, host=host_url)
    page.goto(ui + "/agents")
    add_agent(page, agent)
    banner = page.locator("#agent-message .banner")
    expect(banner).to_have_text(re.compile(r"^Added Echo\. Registered with Fake host\.$"))
