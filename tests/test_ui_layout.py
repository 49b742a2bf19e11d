"""The UI on any screen, in headless Chromium against real agents on loopback: text wraps, a
phone's 360 px fit every page, the conversation follows new answers, every control is named
and reachable by keyboard, axe-core finds nothing serious, and each page looks as its stored
baseline does at 360 and 1280 px (tests/ui_baselines/, see ui_screens.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Browser, Page, expect

import accord
from accord import Agent
from accord.agents import EventSink
from accord.samples import echo, expense, vault
from ui_chromium import opened_page, serious_violations, with_axe
from ui_pages import serve_ui, start_conversation, turns, ui_client
from ui_screens import assert_looks_like_baseline

pytest_plugins = ["ui_browser"]

LONG_WORD = "X" * 3000
PAGES = ["/", "/tasks", "/task", "/agents", "/inspector"]
PHONE = {"is_mobile": True, "has_touch": True}


class Teller(accord.AgentExecutor):
    """Answers N (the message) with N numbered lines, a few at a time."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        count = int(context.text.strip() or "1")
        artifact_id = None
        for first in range(0, count, 5):
            lines = "".join(f"line {n}\n" for n in range(first + 1, min(first + 5, count) + 1))
            artifact_id = await task.add_artifact(
                lines, artifact_id=artifact_id, name="lines", append=artifact_id is not None
            )
            await asyncio.sleep(0.02)
        await task.complete(f"{count} lines told.")


teller = Agent(Teller(), name="Teller", description="Tells as many lines as you ask for.")


def page_width(page: Page) -> int:
    width: int = page.evaluate("document.scrollingElement.scrollWidth")
    return width


def open_every_page(page: Page, ui: str, task_id: str) -> Iterator[str]:
    """Each page of the UI opened in turn (the task page on `task_id`), once it is live."""
    for path in PAGES:
        page.goto(ui + (f"/tasks/{task_id}" if path == "/task" else path))
        expect(page.locator("#live")).to_have_text("live")
        yield path


def first_task(ui: str) -> str:
    with ui_client(ui) as api:
        task_id: str = api.get("/api/state").json()["tasks"][0]["id"]
    return task_id


def test_one_long_word_wraps_on_every_page(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, echo.agent)
    start_conversation(page, ui, LONG_WORD)
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    send = page.locator("form.composer button[type=submit]")
    box = send.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1200, box
    for path in open_every_page(page, ui, first_task(ui)):
        assert page_width(page) <= 1200, f"{path} is {page_width(page)} px wide"


def test_every_page_fits_a_phone(stack: ExitStack, browser: Browser) -> None:
    ui = serve_ui(stack, echo.agent, expense.agent)
    with opened_page(browser, "phone-pages", 360, 740, **PHONE) as page:
        start_conversation(page, ui, "hello from a phone " + LONG_WORD[:200])
        expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
        for path in open_every_page(page, ui, first_task(ui)):
            if path == "/inspector":
                page.fill("[name=url]", ui)  # a long address in the form
            assert page_width(page) <= 360, f"{path} is {page_width(page)} px wide at 360 px"
        expense_url = page.evaluate("Object.values(S.agents).find((a) => a.name === 'Expense').url")
        start_conversation(page, ui, "taxi, 42 EUR", agent=expense_url)
        expect(page.locator("form.a2a-form button[type=submit]")).to_be_visible()
        assert page_width(page) <= 360, f"a form is {page_width(page)} px wide at 360 px"


def test_the_sidebar_folds_behind_a_button_on_a_phone(stack: ExitStack, browser: Browser) -> None:
    ui = serve_ui(stack, echo.agent)
    with opened_page(browser, "phone-sidebar", 360, 740, **PHONE) as page:
        start_conversation(page, ui, "first")
        expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
        sidebar = page.locator("aside.sidebar")
        toggle = page.locator("button.sidebar-toggle")
        expect(sidebar).to_be_hidden()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.tap()
        expect(sidebar).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        sidebar.get_by_role("button", name="New conversation").tap()
        expect(sidebar).to_be_hidden()  # a choice made closes it
        expect(page.locator("#title")).to_have_text("New conversation with Echo")
        toggle.tap()
        sidebar.locator("a", has_text="first").tap()
        expect(sidebar).to_be_hidden()
        expect(turns(page)).to_have_count(1)


AT_BOTTOM = "() => innerHeight + scrollY >= document.scrollingElement.scrollHeight - 4"


def send_in_conversation(ui: str, text: str) -> None:
    """Send `text` in the UI's first conversation as another page would (the page under
    test is not touched, so its scroll position stays the reader's)."""
    with ui_client(ui) as api:
        [conversation] = api.get("/api/state").json()["conversations"]
        body = {"agent": conversation["agent"], "text": text, "conversation": conversation["id"]}
        assert api.post("/api/send", json=body).status_code == 202


def test_the_conversation_follows_new_answers_while_read_at_the_bottom(
    stack: ExitStack, browser: Browser
) -> None:
    ui = serve_ui(stack, teller)
    with opened_page(browser, "follow", 1280, 600) as page:
        start_conversation(page, ui, "30")
        expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
        page.evaluate("scrollTo(0, document.scrollingElement.scrollHeight)")
        send_in_conversation(ui, "40")
        expect(turns(page).nth(1).locator("[data-state]")).to_have_text("completed")
        page.wait_for_function(AT_BOTTOM)
        jump = page.locator("button#new-messages")
        expect(jump).to_be_hidden()
        page.evaluate("scrollTo(0, 0)")
        send_in_conversation(ui, "20")
        expect(turns(page).nth(2).locator("[data-state]")).to_have_text("completed")
        assert page.evaluate("scrollY") == 0, "reading earlier turns, the page stays put"
        expect(jump).to_be_visible()
        jump.click()
        page.wait_for_function(AT_BOTTOM)
        expect(jump).to_be_hidden()


def test_no_serious_accessibility_violation_on_any_page(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, echo.agent, expense.agent, vault.agent)
    with_axe(page)
    start_conversation(page, ui, "hello")
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    found = {}
    for path in open_every_page(page, ui, first_task(ui)):
        found[path] = serious_violations(page)
    with ui_client(ui) as api:
        urls = {agent["name"]: agent["url"] for agent in api.get("/api/state").json()["agents"]}
    for name, said, waiting in [
        ("Expense", "taxi, 42 EUR", "form"),
        ("Vault", "open", "[type=password]"),
    ]:
        start_conversation(page, ui, said, agent=urls[name])
        expect(turns(page).nth(0).locator(waiting)).to_be_visible()
        found[f"{name}'s question"] = serious_violations(page)
    page.goto(ui + "/inspector?url=" + urls["Echo"])
    page.click("#inspect button[type=submit]")
    page.fill("#inspector-send [name=message]", "hello")
    page.click("#inspector-send button[type=submit]")
    expect(page.locator("#frames li").first).to_be_visible()
    found["an inspection"] = serious_violations(page)
    assert not any(found.values()), found


def test_a_conversation_by_keyboard_alone(stack: ExitStack, browser: Browser) -> None:
    ui = serve_ui(stack, echo.agent)
    with opened_page(browser, "keyboard", 360, 740) as page:
        page.goto(ui + "/")
        expect(page.locator("[name=agent] option")).not_to_have_count(0)
        unnamed = page.evaluate(
            """() => [...document.querySelectorAll("input, select, textarea, button")]
                .filter((el) => !el.labels?.length && !el.getAttribute("aria-label")
                                && !el.textContent.trim())
                .map((el) => el.outerHTML)"""
        )
        assert not unnamed, f"controls without a label: {unnamed}"
        for _ in range(10):  # Tab to the button that opens the conversations
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.matches('button.sidebar-toggle')"):
                break
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", "the focused control shows it"
        page.keyboard.press("Enter")
        expect(page.locator("aside.sidebar")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("aside.sidebar")).to_be_hidden()
        assert page.evaluate("document.activeElement.matches('button.sidebar-toggle')")
        page.locator("[name=message]").focus()
        page.keyboard.type("typed, never clicked")
        page.keyboard.press("Enter")
        expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")


@pytest.mark.parametrize("width", [360, 1280])
def test_every_page_looks_as_its_baseline(stack: ExitStack, browser: Browser, width: int) -> None:
    ui = serve_ui(stack, echo.agent)
    with opened_page(browser, f"screens-{width}", width, 800) as page:
        page.clock.set_fixed_time(datetime(2026, 1, 2, 10, 30, tzinfo=UTC))
        start_conversation(page, ui, "Hello! " + "A long line that wraps. " * 8)
        expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
        conversation = page.url  # the conversation open, with its ?c=
        for path in open_every_page(page, ui, first_task(ui)):
            if path == "/":
                page.goto(conversation)
                expect(turns(page)).to_have_count(1)
            if path == "/tasks":
                expect(page.locator("#agent-tasks tr")).to_have_count(1)
            if path == "/inspector":
                page.fill("[name=url]", page.evaluate("Object.keys(S.agents)[0]"))
                page.click("#inspect button[type=submit]")
                expect(page.locator("#inspected .card")).to_be_visible()
            name = "task" if path == "/task" else path.strip("/") or "conversation"
            assert_looks_like_baseline(page, f"{name}-{width}", mask=[page.locator(CHANGING)])


CHANGING = ", ".join(
    [
        "code",  # ids
        ".url, [name=url], [name=interface]",  # addresses, with their ports
        "#timeline pre",  # frames, with ids and ports
        "#timeline .row > span:not(.kind)",  # times, titles naming ports and ids
        "main > div > p.muted",  # a task's context id
        "[data-task] td:first-child, [data-task] td:last-child",  # id, time
        "[data-agent-task] td:nth-child(-n+2), [data-agent-task] td:last-child",  # ids, time
    ]
)
