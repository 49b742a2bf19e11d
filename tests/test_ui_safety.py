"""The UI attacked in real Chromium: a page of another origin on another loopback port, a name
that rebinds to this machine, links that would act, an agent posing as a host, a secret typed
in a masked field, an attempt to frame it or run inline script."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from playwright.sync_api import Browser, Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from accord import Agent, create_app
from accord.auth import ApiKey, Security
from accord.samples import echo, vault
from accord.ui.access import UiAccess
from accord.web.allowed_hosts import AllowedHosts
from live_server import serve_app
from ui_pages import serve_ui, start_conversation, turns, ui_client

pytest_plugins = ["ui_browser"]

REBINDING_NAME = "rebound.test"
WAIT_MS = 15_000
CHROMIUM = "/usr/bin/chromium"
KEY = "key-the-user-typed"


def site(html: str) -> Starlette:
    """Another origin: one page of `html`."""

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(html)

    return Starlette(routes=[Route("/", page)])


class Recorder:
    """An HTTP server that keeps every request it gets (path and body), answering 404 or, at
    /host/agents, as a host would: a list, and 201 to a registration."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def app(self) -> Starlette:
        async def anything(request: Request) -> Response:
            body = (await request.body()).decode(errors="replace")
            self.requests.append((f"{request.method} {request.url.path}", body))
            if request.url.path == "/host/agents":
                return JSONResponse([] if request.method == "GET" else {}, status_code=200)
            return Response(status_code=404)

        return Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST"])])


def test_a_page_of_another_origin_cannot_send_or_add_agents(stack: ExitStack, page: Page) -> None:
    echo_url = stack.enter_context(serve_app(create_app(echo.agent)))
    ui = serve_ui(stack, echo_url)
    evil = Recorder()
    evil_url = stack.enter_context(serve_app(evil.app()))
    forged = json.dumps({"agent": echo_url, "text": "forged", "x": ""})[:-2]
    attack = f"""<!doctype html><body>
    <form id="form" method="POST" action="{ui}/api/send" enctype="text/plain">
      <input type="hidden" name='{forged}' value='"}}'>
    </form>
    <script>
      const body = JSON.stringify({{ url: "{evil_url}" }});
      const add = {{ method: "POST", mode: "no-cors", body }};
      const json = {{ ...add, headers: {{ "Content-Type": "application/json" }} }};
      Promise.allSettled([fetch("{ui}/api/agents", add), fetch("{ui}/api/agents", json),
        fetch("{ui}/api/send", {{ ...json, body: '{{"agent": "{echo_url}", "text": "forged"}}' }})])
        .then(() => {{ document.title = "sent"; document.getElementById("form").submit(); }});
    </script></body>"""
    attacker = stack.enter_context(serve_app(site(attack)))
    with page.expect_response(ui + "/api/send") as answered:
        page.goto(attacker + "/")
    assert answered.value.status == 403
    with ui_client(ui) as api:
        state = api.get("/api/state").json()
    assert state["conversations"] == [], "no message was sent in the user's name"
    assert [a["url"] for a in state["agents"]] == [echo_url], "no agent was added"
    assert evil.requests == []


def test_a_name_rebinding_to_the_ui_gets_nothing(stack: ExitStack, browser: Browser) -> None:
    ui = serve_ui(stack, stack.enter_context(serve_app(create_app(echo.agent))))
    port = ui.rsplit(":", 1)[1]
    allowed = serve_ui(stack, access=UiAccess(AllowedHosts.loopback(None, REBINDING_NAME)))
    allowed_port = allowed.rsplit(":", 1)[1]
    rules = f"--host-resolver-rules=MAP {REBINDING_NAME} 127.0.0.1"
    # A browser whose resolver maps the name to 127.0.0.1, as a rebinding DNS server would.
    rebound = browser.browser_type.launch(executable_path=CHROMIUM, args=["--no-sandbox", rules])
    try:
        page = rebound.new_page()
        page.set_default_timeout(WAIT_MS)
        for path in ("/", "/api/state", "/api/session"):
            answer = page.goto(f"http://{REBINDING_NAME}:{port}{path}")
            assert answer is not None and answer.status == 400, path
        assert "does not answer to the Host" in page.content()
        # A name the UI was started for (--allowed-host) works as loopback does.
        page.goto(f"http://{REBINDING_NAME}:{allowed_port}/")
        expect(page.locator("#live")).to_have_text("live")
    finally:
        rebound.close()


def test_links_only_fill_the_forms(stack: ExitStack, page: Page) -> None:
    target = Recorder()
    target_url = stack.enter_context(serve_app(target.app()))
    ui = serve_ui(stack)
    page.goto(f"{ui}/inspector?url={target_url}")
    expect(page.locator("#inspect [name=url]")).to_have_value(target_url)
    page.goto(f"{ui}/tasks/some-task?agent={target_url}")
    expect(page.locator("#fetch-task")).to_contain_text(f"Fetch it from {target_url}")
    expect(page.locator("#live")).to_have_text("live")
    assert target.requests == [], "opening a link fetched nothing"
    page.click("#fetch-task")
    expect(page.locator("#task-error")).to_be_visible()
    assert target.requests, "the button does"


def test_credentials_go_to_no_agent_that_poses_as_a_host(stack: ExitStack, page: Page) -> None:
    poser = Recorder()
    poser_url = stack.enter_context(serve_app(poser.app()))
    guarded = stack.enter_context(serve_app(create_app(Agent(
        echo.agent.executor, name="Guarded", description="Echoes its callers.",
        security=Security(ApiKey({KEY: "team-a"}))))))  # fmt: skip
    ui = serve_ui(stack, poser_url)  # it answers GET /host/agents, but it is no host of ours
    page.goto(ui + "/agents")
    page.fill("#add-agent [name=url]", guarded)
    page.select_option("#add-agent [name=credential-kind]", "apiKey")
    page.fill("#add-agent [name=credential-secret]", KEY)
    page.click("text=Add agent")
    expect(page.locator(f"[data-agent='{guarded}'] [data-credentials]")).to_be_visible()
    assert not any(KEY in body for _, body in poser.requests), poser.requests
    assert not any("/host/agents" in request for request, _ in poser.requests)
    expect(page.locator("[data-agent] h2", has_text="Delegates to")).to_have_count(0)


def test_a_secret_typed_in_a_masked_field_is_shown_nowhere(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, vault.agent)
    start_conversation(page, ui, "open the vault")
    first = turns(page).nth(0)
    expect(first.locator("[data-state]")).to_have_text("auth-required")
    first.locator("[name=reply]").fill("open sesame")
    first.locator("form.answer button").click()
    expect(turns(page).nth(1).locator("[data-state]")).to_have_text("completed")
    expect(page.locator(".bubble.user").nth(1).locator(".secret")).to_have_text("••••")
    assert "open sesame" not in page.content()
    with ui_client(ui) as api:
        state = api.get("/api/state").text
        [task] = api.get("/api/state").json()["tasks"]
        timeline = api.get("/api/state", params={"task": task["id"]}).text
    assert "open sesame" not in state
    assert "open sesame" not in timeline and "(hidden)" in timeline
    page.goto(ui + f"/tasks/{task['id']}")
    expect(page.locator("#timeline li[data-kind=request]").first).to_be_visible()
    assert "open sesame" not in page.content()


def test_the_ui_cannot_be_framed_nor_run_inline_script(stack: ExitStack, browser: Browser) -> None:
    ui = serve_ui(stack)
    framing = stack.enter_context(serve_app(site(f'<iframe id="ui" src="{ui}/"></iframe>')))
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text))
    page.goto(framing + "/")
    page.wait_for_load_state("load")
    frame = page.frame_locator("#ui")
    expect(frame.locator("#main")).to_have_count(0)  # the UI refused to be framed
    page.goto(ui + "/")
    expect(page.locator("#live")).to_have_text("live")
    page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.injected = true"; document.body.append(s); }"""
    )
    assert page.evaluate("window.injected === undefined"), "inline script ran"
    assert any("Content Security Policy" in v for v in violations), violations
    context.close()


@pytest.fixture
def logged_out_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    yield opened
    context.close()


def test_with_a_token_the_ui_opens_only_from_the_url_printed(
    stack: ExitStack, logged_out_page: Page
) -> None:
    ui = serve_ui(stack, echo.agent, access=UiAccess(login_token="printed-at-start"))
    answer = logged_out_page.goto(ui + "/")
    assert answer is not None and answer.status == 401
    logged_out_page.goto(ui + "/?token=printed-at-start")
    assert logged_out_page.url == ui + "/"  # the token left the address bar
    expect(logged_out_page.locator("#live")).to_have_text("live")
    expect(logged_out_page.locator("[name=agent] option")).to_have_count(1)
