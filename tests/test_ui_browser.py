"""The web UI end to end in headless Chromium: every flow a person takes, against real agents.

Debian's chromium (`make pytest` installs it) driven by Playwright (see ui_browser.py); the
agents and the UI run on loopback ports. Each test saves a screenshot under test-artifacts/ui/.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import accord
from accord import Agent, create_app
from accord.auth import ApiKey, Basic, Security
from accord.samples import coder, currency, echo, expense, image, vault
from accord.types import FilePart, FileWithUri, Part
from agents_for_tests import HOST_TOKEN
from live_server import serve_app
from sample_servers import closed_port_url
from ui_pages import serve_ui, start_conversation, turns, ui_client

pytest_plugins = ["ui_browser"]


def test_currency_asks_a_follow_up_question_answered_in_place(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, currency.agent)
    start_conversation(page, ui, "convert 100 USD")
    first = turns(page).nth(0)
    expect(first).to_contain_text("To which currency?")
    expect(first.locator("[data-state]")).to_have_text("input-required")
    first.locator("[name=reply]").fill("to yen")
    first.locator("form.answer button").click()
    second = turns(page).nth(1)
    expect(second.locator("[data-state]")).to_have_text("completed")
    expect(second).to_contain_text("100.00 USD = ")
    expect(second).to_contain_text("JPY")
    links = [turns(page).nth(i).locator("a[href^='/tasks/']").get_attribute("href") for i in (0, 1)]
    assert links[0] == links[1], "the answer continues the same task"
    expect(first.locator("[name=reply]")).to_have_count(0)  # answered: no second reply box


def test_expense_form_is_filled_corrected_and_submitted(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, expense.agent)
    start_conversation(page, ui, "taxi to the airport, 42.50 EUR on 2025-03-14")
    form = page.locator("form.a2a-form:has(button)")
    expect(form.locator("[name=amount]")).to_have_value("42.5")  # what the sentence said
    expect(form.locator("[name=currency]")).to_have_value("EUR")
    expect(form.locator("[name=date]")).to_have_value("2025-03-14")
    form.locator("[name=amount]").fill("-5")
    form.locator("button").click()
    error = page.locator("form.a2a-form:has(button) .field-error[data-field=amount]")
    expect(error).to_have_text("Amount must be more than 0")
    expect(turns(page).nth(1)).to_contain_text(
        "Please correct the form: amount must be more than 0"
    )
    form = page.locator("form.a2a-form:has(button)")
    form.locator("[name=amount]").fill("42.5")
    form.locator("[name=purpose]").fill("taxi to the airport")
    form.locator("button").click()
    done = turns(page).nth(2)
    expect(done.locator("[data-state]")).to_have_text("completed")
    expect(done).to_contain_text("approved: 42.50 EUR for taxi to the airport on 2025-03-14")
    expect(done.locator("[data-artifact=reimbursement]")).to_contain_text('"status": "approved"')
    expect(page.locator("form.a2a-form:has(button)")).to_have_count(0)


def test_image_is_drawn_and_shown_inline(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, image.agent)
    start_conversation(page, ui, "three red circles and a gold star on a night sky")
    turn = turns(page).nth(0)
    picture = turn.locator("img.inline")
    expect(picture).to_have_count(1)  # the inline copy; the URL one is linked, not repeated
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
    )
    assert (picture.get_attribute("src") or "").startswith("data:image/png;base64,")
    served = turn.locator("a.file-url").get_attribute("href") or ""
    assert served.startswith("http://127.0.0.1:") and served.endswith(".png")
    fetched = page.request.get(served)
    assert fetched.ok and fetched.body().startswith(b"\x89PNG")
    with page.expect_download() as saved:
        turn.locator("a.download").click()
    assert Path(saved.value.path()).read_bytes() == fetched.body()  # the same picture


def test_coder_files_stream_in_as_they_are_written(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, coder.agent)
    page.add_init_script(
        """
        window.seen = [];
        new MutationObserver(() => {
          const files = [...document.querySelectorAll('[data-turn] .artifact pre')];
          const sizes = files.map((pre) => pre.textContent.length).join(',');
          if (window.seen[window.seen.length - 1] !== sizes) window.seen.push(sizes);
        }).observe(document, { childList: true, subtree: true, characterData: true });
        """
    )
    start_conversation(page, ui, "a CLI todo app in python")
    turn = turns(page).nth(0)
    expect(turn.locator("[data-state]")).to_have_text("completed", timeout=30_000)
    names = turn.locator(".artifact .name").all_inner_texts()
    assert names == ["README.md", "store.py", "todo.py", "test_todo.py"]
    todo = turn.locator("[data-artifact='todo.py'] pre").inner_text()
    compile(todo, "todo.py", "exec")  # the chunks joined make the whole file
    seen: list[str] = page.evaluate("window.seen")
    growing = [s for s in seen if s]
    assert len(growing) > len(names) * 2, f"the files should grow chunk by chunk: {growing}"
    # A browser stalled by a busy machine applies the events that came meanwhile at once (the
    # first state it showed held two files): still, files show before the last one exists.
    assert len(growing[0].split(",")) < len(names), "the first files show before the last"
    with page.expect_download() as saved:
        turn.locator("[data-artifact='todo.py'] a.download").click()
    assert saved.value.suggested_filename == "todo.py"
    assert Path(saved.value.path()).read_text() == todo


def test_vault_credential_is_sent_in_place(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, vault.agent)
    start_conversation(page, ui, "open the vault")
    first = turns(page).nth(0)
    expect(first.locator("[data-state]")).to_have_text("auth-required")
    secret = first.locator("[name=reply]")
    expect(secret).to_have_attribute("type", "password")
    secret.fill("open sesame")
    first.locator("form.answer button").click()
    expect(turns(page).nth(1).locator("[data-state]")).to_have_text("completed")


@accord.agent(name="Links", description="Answers with files by URL, one of them a script.")
async def linking_agent(context: accord.RequestContext) -> AsyncIterator[Part]:
    yield FilePart(file=FileWithUri(uri="javascript:alert(document.domain)", name="run.txt"))
    yield FilePart(file=FileWithUri(uri="https://example.org/notes.txt", name="notes.txt"))


def test_links_an_agent_sends_cannot_run_script(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, linking_agent)
    start_conversation(page, ui, "links please")
    links = turns(page).nth(0).locator("a.download")
    expect(links).to_have_count(2)
    assert [links.nth(i).get_attribute("href") for i in (0, 1)] == [
        "#",
        "https://example.org/notes.txt",
    ]


def test_task_list_and_a_task_timeline_with_the_raw_frames(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, currency.agent)
    start_conversation(page, ui, "convert 100 USD to EUR")
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("completed")
    page.click("nav >> text=Tasks")
    row = page.locator("#tasks tr[data-task]")
    expect(row).to_have_count(1)
    expect(row.locator("[data-state]")).to_have_text("completed")
    expect(row).to_contain_text("Currency")
    row.locator("a").click()
    expect(page.locator("h1")).to_contain_text("completed")
    timeline = page.locator("#timeline li")
    kinds = timeline.evaluate_all("items => items.map((li) => li.dataset.kind)")
    assert kinds[:5] == ["request", "response", "body", "request", "response"], kinds
    card_get = timeline.nth(0).locator("pre").text_content() or ""
    assert (
        card_get.startswith("GET http://127.0.0.1:") and "/.well-known/agent-card.json" in card_get
    )
    assert '"name":"Currency"' in (timeline.nth(2).locator("pre").text_content() or "")
    call = timeline.nth(3).locator("pre").text_content() or ""
    assert '"method":"SendStreamingMessage"' in call and "a2a-version: 1.0" in call
    assert "convert 100 USD to EUR" in call
    frames = page.locator("#timeline li[data-kind=frame] pre").all_text_contents()
    events = page.locator("#timeline li[data-kind=event]").all_inner_texts()
    assert len(frames) == len(events) >= 3  # each event decoded from its own SSE frame
    assert all(frame.startswith("id: ") and "\ndata: {" in frame for frame in frames)
    assert any("TASK_STATE_COMPLETED" in frame for frame in frames)  # the 1.0 wire
    assert "status-update completed (final)" in events[-1]


def test_a_new_turn_appears_live_on_an_open_task_page(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack, currency.agent)
    start_conversation(page, ui, "convert 100 USD")
    expect(turns(page).nth(0).locator("[data-state]")).to_have_text("input-required")
    task_url = turns(page).nth(0).locator("a[href^='/tasks/']").get_attribute("href")
    watcher = page.context.new_page()
    watcher.goto(ui + str(task_url))
    expect(watcher.locator("h1 [data-state]")).to_have_text("input-required")
    requests_before = watcher.locator("#timeline li[data-kind=request]").count()
    turns(page).nth(0).locator("[name=reply]").fill("in euros")
    turns(page).nth(0).locator("form.answer button").click()
    expect(watcher.locator("h1 [data-state]")).to_have_text("completed")
    expect(watcher.locator("#timeline li[data-kind=request]")).to_have_count(requests_before + 1)
    watcher.close()


def invalid_card_app() -> Starlette:
    card = {
        "name": 7,
        "description": "A card with mistakes",
        "url": "http://127.0.0.1:1/",
        "protocolVersion": "0.3.0",
        "version": "1",
        "capabilities": {"streaming": "yes"},
        "defaultInputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": "none"}],
    }

    async def serve_card(request: Request) -> JSONResponse:
        return JSONResponse(card)

    return Starlette(routes=[Route("/.well-known/agent-card.json", serve_card)])


class FakeHost:
    """An agent with the host's management routes, keeping what it was asked to add."""

    def __init__(self, refuse: str | None = None) -> None:
        self.refuse = refuse
        self.added: list[str] = []

    def app(self) -> Starlette:
        inner = create_app(Agent(echo.agent.executor, name="Fake host", description="Delegates"))

        async def listed(request: Request) -> JSONResponse:
            entry = {"name": "remote", "description": "", "skills": [], "card": {}}
            return JSONResponse([{**entry, "url": url} for url in self.added])

        async def add(request: Request) -> Response:
            if self.refuse:
                return JSONResponse({"error": self.refuse}, status_code=400)
            self.added.append((await request.json())["url"])
            return JSONResponse({"url": self.added[-1]}, status_code=201)

        routes = [
            Route("/host/agents", listed, methods=["GET"]),
            Route("/host/agents", add, methods=["POST"]),
        ]
        app = Starlette(routes=routes)
        app.mount("/", inner)
        return app


def add_agent(page: Page, url: str) -> None:
    page.fill("[name=url]", url)
    page.click("text=Add agent")


def test_agents_are_added_by_url_and_their_cards_checked(stack: ExitStack, page: Page) -> None:
    host = FakeHost()
    host_url = stack.enter_context(serve_app(host.app()))
    invalid = stack.enter_context(serve_app(invalid_card_app()))
    valid = stack.enter_context(serve_app(create_app(currency.agent)))
    ui = serve_ui(stack, host=host_url)
    page.goto(ui + "/agents")
    expect(page.locator(f"[data-agent='{host_url}']")).to_contain_text("Delegates to")

    add_agent(page, "not a url")
    expect(page.locator("#agent-error")).to_contain_text("is not a web address")
    add_agent(page, closed_port_url())
    expect(page.locator("#agent-error")).to_contain_text("nothing answers at 127.0.0.1:")
    add_agent(page, valid + "/nothing-here")
    expect(page.locator("#agent-error")).to_contain_text("no agent card there")

    add_agent(page, invalid)
    card = page.locator(f"[data-agent='{invalid}']")
    check = card.locator(".check[data-version='0.3']")
    expect(check).to_contain_text("not a valid A2A 0.3.0 card")
    for problem in (
        "`name` should be text, but it is a number (7)",
        '`capabilities.streaming` should be true or false, but it is text ("yes")',
        "`defaultOutputModes` is missing; the specification requires it",
        '`skills[0].tags` should be a list, but it is text ("none")',
    ):
        expect(check).to_contain_text(problem)
    expect(page.locator("#agent-message")).to_contain_text("its card has problems")

    add_agent(page, valid)
    card = page.locator(f"[data-agent='{valid}']")
    expect(card.locator(".check[data-version='1.0']")).to_contain_text("a valid A2A 1.0 card")
    expect(card.locator(".check[data-version='0.3']")).to_contain_text("a valid A2A 0.3.0 card")
    expect(card).to_contain_text("Convert currency")
    expect(page.locator("#agent-message")).to_contain_text("Registered with Fake host")
    assert host.added == [invalid, valid]
    expect(page.locator(f"[data-agent='{host_url}'] li", has_text=valid)).to_have_count(1)


def test_a_host_refusal_is_shown(stack: ExitStack, page: Page) -> None:
    host = FakeHost(refuse="that agent has no skills")
    host_url = stack.enter_context(serve_app(host.app()))
    valid = stack.enter_context(serve_app(create_app(echo.agent)))
    ui = serve_ui(stack, host=host_url)
    page.goto(ui + "/agents")
    expect(page.locator(f"[data-agent='{host_url}']")).to_be_visible()
    add_agent(page, valid)
    expect(page.locator("#agent-message")).to_contain_text(
        "the host refused it (HTTP 400): that agent has no skills"
    )


WIRE_OF_EACH_INTERFACE = {
    "JSONRPC|1.0": ('"method":"SendStreamingMessage"', "a2a-version: 1.0"),
    "HTTP+JSON|1.0": ("/message:stream", "a2a-version: 1.0"),
    "JSONRPC|0.3": ('"method":"message/stream"', "content-type: application/json"),
    "HTTP+JSON|0.3": ("/v1/message:stream", "content-type: application/json"),
    "JSONRPC|0.1": ('"method":"tasks/sendSubscribe"', "a2a-version: 0.1"),
}


def test_inspector_talks_to_any_agent_in_every_version(stack: ExitStack, page: Page) -> None:
    agent_url = stack.enter_context(serve_app(create_app(echo.agent, grpc_port=0)))
    ui = serve_ui(stack)
    page.goto(ui + "/inspector?url=" + agent_url)
    page.click("#inspect button")
    expect(page.locator("#inspected")).to_contain_text("a valid A2A 1.0 card")
    options = page.locator("[name=interface] option").evaluate_all("os => os.map((o) => o.value)")
    assert set(WIRE_OF_EACH_INTERFACE) | {"GRPC|1.0", "GRPC|0.3"} <= set(options), options
    for interface, expected in WIRE_OF_EACH_INTERFACE.items():
        page.select_option("[name=interface]", interface)
        page.fill("#inspector-send [name=message]", f"hello over {interface}")
        page.click("#inspector-send button")
        expect(page.locator("[data-turn]")).to_contain_text(f"hello over {interface}")
        frames = page.locator("#frames li[data-kind=request] pre").all_text_contents()
        call = next(f for f in frames if f"hello over {interface}" in f)
        for fact in expected:
            assert fact in call, (interface, fact, call)
    for interface in ("GRPC|1.0", "GRPC|0.3"):
        page.select_option("[name=interface]", interface)
        page.fill("#inspector-send [name=message]", f"hello over {interface}")
        page.click("#inspector-send button")
        expect(page.locator("[data-turn]")).to_contain_text(f"hello over {interface}")
        expect(page.locator("#frames li[data-kind=note]")).to_contain_text("gRPC carries protobuf")


def test_inspector_explains_an_address_with_no_agent(stack: ExitStack, page: Page) -> None:
    ui = serve_ui(stack)
    page.goto(ui + "/inspector?url=" + closed_port_url())
    page.click("#inspect button")
    expect(page.locator("#inspected .banner")).to_contain_text("nothing answers at")


@pytest.mark.skipif(
    importlib.util.find_spec("accord.host") is None,
    reason="accord.host (the multi-agent host) is not in this build",
)
def test_host_answers_with_two_agents(stack: ExitStack, page: Page, tmp_path: Path) -> None:
    from accord.host import host_agent

    samples = [stack.enter_context(serve_app(create_app(a))) for a in (currency.agent, image.agent)]
    ui = serve_ui(stack, host=host_agent(tmp_path / "agents.json", samples, token=HOST_TOKEN))
    page.goto(ui + "/agents")
    expect(page.locator("[data-agent] h2", has_text="Delegates to")).to_have_count(1)
    start_conversation(page, ui, "convert 100 USD to EUR and draw three red circles")
    turn = turns(page).nth(0)
    expect(turn.locator("[data-state]")).to_have_text("completed", timeout=30_000)
    expect(turn).to_contain_text("Currency: 100.00 USD = ")
    names = turn.locator(".artifact .name").all_inner_texts()
    assert [name.split(":")[0] for name in names] == ["Currency", "Image"], names
    expect(turn.locator("[data-artifact^='Image:'] img.inline")).to_be_visible()


@pytest.mark.skipif(
    importlib.util.find_spec("accord.host") is None,
    reason="accord.host (the multi-agent host) is not in this build",
)
def test_host_relays_a_form_filled_in_place(stack: ExitStack, page: Page, tmp_path: Path) -> None:
    from accord.host import host_agent

    remote = stack.enter_context(serve_app(create_app(expense.agent)))
    ui = serve_ui(stack, host=host_agent(tmp_path / "agents.json", [remote], token=HOST_TOKEN))
    start_conversation(page, ui, "please reimburse my taxi, 42.50 EUR on 2025-03-14")
    expect(turns(page).nth(0)).to_contain_text("Expense asks: Please check and complete this form.")
    form = page.locator("form.a2a-form:has(button)")
    form.locator("[name=date]").fill("2999-01-01")
    form.locator("button").click()
    error = page.locator("form.a2a-form:has(button) .field-error[data-field=date]")
    expect(error).to_have_text("Date must not be in the future")
    page.locator("form.a2a-form:has(button) [name=date]").fill("2025-03-14")
    page.locator("form.a2a-form:has(button) button").click()
    done = turns(page).nth(2)
    expect(done.locator("[data-state]")).to_have_text("completed")
    expect(done).to_contain_text("approved: 42.50 EUR")


UI_KEY = "ui-test-key-4711"


def guarded_echo(security: Security) -> Agent:
    return Agent(echo.agent.executor, name="Guarded", description="Echoes callers it knows.",
                 security=security)  # fmt: skip


def test_an_api_key_given_on_the_agents_page_is_presented(stack: ExitStack, page: Page) -> None:
    guarded = stack.enter_context(
        serve_app(create_app(guarded_echo(Security(ApiKey({UI_KEY: "team-a"})))))
    )
    ui = serve_ui(stack, guarded)
    start_conversation(page, ui, "hello without a key")
    refused = turns(page).nth(0).locator(".error")
    expect(refused).to_contain_text("Guarded refused the request: HTTP 401")
    expect(refused).to_contain_text("it asks for apiKey (an API key in the header 'X-API-Key')")

    page.goto(ui + "/agents")
    page.fill("#add-agent [name=url]", guarded)
    page.select_option("#add-agent [name=credential-kind]", "apiKey")
    page.fill("#add-agent [name=credential-secret]", UI_KEY)
    page.click("text=Add agent")
    card = page.locator(f"[data-agent='{guarded}']")
    expect(card.locator("[data-credentials]")).to_have_text("credentials: apiKey")
    assert UI_KEY not in page.content()
    assert UI_KEY not in ui_client(ui).get("/api/state").text

    start_conversation(page, ui, "hello with a key")
    answered = turns(page).nth(0)
    expect(answered.locator("[data-state]")).to_have_text("completed")
    expect(answered).to_contain_text("hello with a key")
    # The wire log still records the exchange, without the key.
    task_link = answered.locator("a[href^='/tasks/']").get_attribute("href")
    page.goto(ui + str(task_link))
    expect(page.locator("#timeline li[data-kind=request]").first).to_be_visible()
    assert UI_KEY not in page.content()


def test_the_inspector_takes_a_user_and_password(stack: ExitStack, page: Page) -> None:
    security = Security(Basic(lambda user, password: user if password == "pw" else None))
    guarded = stack.enter_context(serve_app(create_app(guarded_echo(security))))
    ui = serve_ui(stack)
    page.goto(ui + "/inspector?url=" + guarded)
    page.click("#inspect button")
    expect(page.locator("#inspected")).to_contain_text("a valid A2A 1.0 card")
    page.fill("#inspector-send [name=message]", "who am I?")
    page.click("#inspector-send button")
    expect(page.locator("[data-turn] .error")).to_contain_text(
        "it asks for basic (a user and password (HTTP Basic))"
    )

    page.select_option("#inspect [name=credential-kind]", "basic")
    page.fill("#inspect [name=credential-user]", "ada")
    page.fill("#inspect [name=credential-secret]", "pw")
    page.click("#inspect button")
    expect(page.locator("#inspected")).to_contain_text("a valid A2A 1.0 card")
    page.fill("#inspector-send [name=message]", "hello, it is ada")
    page.click("#inspector-send button")
    expect(page.locator("[data-turn]")).to_contain_text("hello, it is ada")
    expect(page.locator("[data-turn] [data-state]")).to_have_text("completed")


def test_unusable_ui_credentials_are_refused_in_words(stack: ExitStack) -> None:
    guarded = stack.enter_context(
        serve_app(create_app(guarded_echo(Security(ApiKey({UI_KEY: "team-a"})))))
    )
    ui = serve_ui(stack)
    for body, error in [
        ({"credentials": {"clientId": "a", "clientSecret": "b"}}, "the UI takes apiKey"),
        ({"credentials": {"basic": "no-colon"}}, 'give basic as "USER:PASSWORD"'),
        ({"credentials": "key"}, "give credentials as a JSON object"),
    ]:
        for path in ("/api/agents", "/api/inspect"):
            answer = ui_client(ui).post(path, json={"url": guarded, **body})
            assert answer.status_code == 400, answer.text
            assert error in answer.json()["error"]


@pytest.mark.skipif(
    importlib.util.find_spec("accord.host") is None,
    reason="accord.host (the multi-agent host) is not in this build",
)
def test_an_agent_added_with_a_key_is_registered_with_the_host_with_it(
    stack: ExitStack, page: Page, tmp_path: Path
) -> None:
    from accord.host import host_agent

    guarded = stack.enter_context(
        serve_app(create_app(guarded_echo(Security(ApiKey({UI_KEY: "team-a"})))))
    )
    host_url = stack.enter_context(
        serve_app(create_app(host_agent(tmp_path / "agents.json", [], token=HOST_TOKEN)))
    )
    ui = serve_ui(stack, host=host_url)
    page.goto(ui + "/agents")
    expect(page.locator("[data-agent] h2", has_text="Delegates to")).to_have_count(1)
    page.fill("#add-agent [name=url]", guarded)
    page.select_option("#add-agent [name=credential-kind]", "apiKey")
    page.fill("#add-agent [name=credential-secret]", UI_KEY)
    page.click("text=Add agent")
    expect(page.locator("#agent-message")).to_contain_text("Registered with Host")
    listed = httpx.get(host_url + "/host/agents").json()
    assert [(a["url"], a.get("credentials")) for a in listed] == [(guarded, ["apiKey"])]

    start_conversation(page, ui, "@guarded echo through the host")
    turn = turns(page).nth(0)
    expect(turn.locator("[data-state]")).to_have_text("completed")
    expect(turn).to_contain_text("Guarded: echo through the host")
