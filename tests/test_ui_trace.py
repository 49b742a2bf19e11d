"""The web UI and traces, in headless Chromium: a turn's requests carry one trace id, which
the agent sees, the wire view shows, and the task's page links."""

from __future__ import annotations

import re
from contextlib import ExitStack

from playwright.sync_api import Page, expect

import accord
from accord import Agent
from accord.agents import EventSink
from ui_pages import serve_ui, start_conversation, turns

pytest_plugins = ["ui_browser"]


class SaysItsTrace(accord.AgentExecutor):
    """Completes each task saying the trace id its request named."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        traceparent = context.trace_headers.get("traceparent", "none-none")
        await accord.TaskUpdater(context, events).complete(f"trace {traceparent.split('-')[1]}")


def test_a_task_page_links_the_trace_its_requests_named(stack: ExitStack, page: Page) -> None:
    agent = Agent(SaysItsTrace(), name="Tracer", streaming=False)
    ui = serve_ui(stack, agent, trace_url="https://traces.example/trace/{trace_id}")
    start_conversation(page, ui, "hello")
    said = turns(page).nth(0)
    expect(said).to_contain_text(re.compile(r"trace [0-9a-f]{32}"))
    trace_id = re.search(r"trace ([0-9a-f]{32})", said.inner_text()).group(1)  # type: ignore[union-attr]

    page.click("nav >> text=Tasks")
    page.locator("#tasks tr[data-task] a").click()
    link = page.locator("#task-trace")
    expect(link).to_contain_text(trace_id)
    expect(link).to_have_attribute("href", f"https://traces.example/trace/{trace_id}")
    requests = page.locator("#timeline li[data-kind=request] pre")
    sent = requests.filter(has_text='"method":"SendMessage"')
    expect(sent.filter(has_text=f"traceparent: 00-{trace_id}-")).to_have_count(1)
