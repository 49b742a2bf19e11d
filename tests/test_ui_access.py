"""Who may use the UI's API, and what the UI may be made to fetch and show, over plain HTTP."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from accord import create_app
from accord.client import card_urls
from accord.samples import echo
from accord.ui import create_ui_app
from accord.ui.access import UiAccess
from accord.web.allowed_hosts import AllowedHosts
from accord.web.same_origin import foreign_origin
from accord.web.webhook_guard import WebhookGuard
from card_servers import huge_card_server, internal_service
from live_server import serve_app
from served_process import accord_command, free_port
from ui_pages import ui_client


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with serve_app(create_app(echo.agent)) as url:
        yield url


@pytest.fixture
def ui() -> Iterator[str]:
    with serve_app(create_ui_app()) as url:
        yield url


def test_the_api_answers_only_requests_with_the_pages_session_token(ui: str, echo_url: str) -> None:
    body = {"agent": echo_url, "text": "forged"}
    assert httpx.post(ui + "/api/send", json=body).status_code == 403
    assert httpx.get(ui + "/api/state").status_code == 403
    assert httpx.get(ui + "/ui/events").status_code == 403
    forged = httpx.post(
        ui + "/api/agents", json={"url": echo_url}, headers={"X-Accord-Session": "x"}
    )
    assert forged.status_code == 403
    with ui_client(ui) as api:
        assert api.get("/api/state").json()["conversations"] == []
        assert api.headers["X-Accord-Session"] in httpx.get(ui + "/").text  # the page holds it


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
    ],
)
def test_a_change_that_is_not_json_or_comes_from_another_origin_is_refused(
    ui: str, echo_url: str, headers: dict[str, str], status: int
) -> None:
    with ui_client(ui) as api:
        body = f'{{"agent": "{echo_url}", "text": "forged"}}'
        assert api.post("/api/send", content=body, headers=headers).status_code == status
        assert api.get("/api/session", headers=headers).status_code in (200, 403)
        assert api.get("/api/state").json()["conversations"] == []


@pytest.mark.parametrize("host", ["rebound.example:80", "evil.test", "127.0.0.1.nip.io", ""])
def test_a_host_name_the_ui_was_not_started_for_gets_400(ui: str, host: str) -> None:
    with ui_client(ui) as api:
        for path in ("/", "/api/state", "/static/app.js"):
            assert api.get(path, headers={"Host": host}).status_code == 400


def test_allowed_host_names_are_answered() -> None:
    access = UiAccess(AllowedHosts.loopback(None, "ui.example.com"))
    with serve_app(create_ui_app(access=access)) as ui:
        assert httpx.get(ui + "/", headers={"Host": "ui.example.com"}).status_code == 200
        assert httpx.get(ui + "/", headers={"Host": "other.example.com"}).status_code == 400


def test_with_a_login_token_nothing_answers_without_it() -> None:
    with serve_app(create_ui_app(access=UiAccess(login_token="let-me-in"))) as ui:
        assert httpx.get(ui + "/").status_code == 401
        assert httpx.get(ui + "/api/session").status_code == 401
        assert httpx.get(ui + "/?token=wrong").status_code == 401
        logged_in = httpx.get(ui + "/tasks?token=let-me-in")
        assert logged_in.status_code == 303 and logged_in.headers["location"] == "/tasks"
        cookie = logged_in.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        with httpx.Client(base_url=ui, cookies=logged_in.cookies) as browser:
            assert browser.get("/tasks").status_code == 200
        bearer = {"Authorization": "Bearer let-me-in"}
        assert httpx.get(ui + "/api/session", headers=bearer).status_code == 200


def test_every_answer_forbids_inline_script_and_framing(ui: str) -> None:
    for response in (httpx.get(ui + "/"), httpx.get(ui + "/static/app.js"), httpx.get(ui + "/x")):
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
        assert response.headers["X-Frame-Options"] == "DENY"


def test_the_page_has_no_inline_script_or_handler(ui: str) -> None:
    page = httpx.get(ui + "/").text
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts and all(re.fullmatch(r'<script src="/static/\w+\.js">', s) for s in scripts)
    assert not re.search(r"\son[a-z]+\s*=", page), "no handler attribute"


@pytest.mark.parametrize("path", ["/api/inspect", "/api/agents"])
def test_only_what_parses_as_a_card_is_shown(ui: str, path: str) -> None:
    with serve_app(internal_service()) as internal, ui_client(ui) as api:
        for url in (internal, internal + "/#", internal + "/?"):
            refused = api.post(path, json={"url": url})
            assert refused.status_code == 400
            assert "no agent card" in refused.json()["error"]
            assert "internal-service-data" not in refused.text


def test_a_card_larger_than_a_mebibyte_is_refused(ui: str) -> None:
    with serve_app(huge_card_server(declared=False)) as huge, ui_client(ui) as api:
        refused = api.post("/api/inspect", json={"url": huge})
        assert refused.status_code == 400 and "larger than 1 MiB" in refused.json()["error"]


def test_a_guarded_ui_fetches_no_loopback_private_or_metadata_address(echo_url: str) -> None:
    with serve_app(create_ui_app(fetch_guard=WebhookGuard())) as ui, ui_client(ui) as api:
        for url, why in [
            (echo_url, "a loopback address"),
            ("http://localhost:1/", "a loopback address"),
            ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
            ("http://192.168.1.1/", "a private address"),
        ]:
            for path in ("/api/inspect", "/api/agents"):
                refused = api.post(path, json={"url": url})
                assert refused.status_code == 400, refused.text
                assert why in refused.json()["error"]
        sent = api.post("/api/send", json={"agent": echo_url, "text": "hi"})
        assert sent.status_code == 202
        turn = wait_for_turn(api)
        assert "a loopback address" in turn["error"]


def test_the_allowlist_lets_a_guarded_ui_reach_development_agents(echo_url: str) -> None:
    guard = WebhookGuard(["127.0.0.0/8"])
    with serve_app(create_ui_app(fetch_guard=guard)) as ui, ui_client(ui) as api:
        assert api.post("/api/agents", json={"url": echo_url}).status_code == 201
        api.post("/api/send", json={"agent": echo_url, "text": "hi"})
        assert wait_for_turn(api)["error"] is None


def wait_for_turn(api: httpx.Client) -> dict[str, object]:
    """The first conversation's last turn, once it is done."""
    for _ in range(200):
        [conversation] = api.get("/api/state").json()["conversations"]
        turn: dict[str, object] = conversation["items"][-1]
        if turn["done"]:
            return turn
        time.sleep(0.05)
    raise AssertionError("the turn did not end")


@pytest.mark.processes
def test_accord_ui_beyond_loopback_requires_the_token_it_prints(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        accord_command("ui", "--host", "0.0.0.0", "--port", str(port)),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"serving the web UI at http://0\.0\.0\.0:\d+/\?token=(\S+)", line)
        assert found, line
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                first = httpx.get(url + "/")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert first.status_code == 401
        assert httpx.get(url + f"/?token={found[1]}").status_code == 303
        assert "listening beyond loopback" in process.stderr.readline()
    finally:
        process.terminate()
        process.communicate(timeout=10)


HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=60)


@given(
    path=st.sampled_from(["/", "/api/send", "/api/session", "/ui/events", "/static/app.js"]),
    method=st.sampled_from(["GET", "POST", "DELETE", "PUT"]),
    query=st.text(max_size=60),
    headers=st.dictionaries(
        st.sampled_from(["host", "origin", "sec-fetch-site", "content-type", "cookie",
                         "authorization", "x-accord-session"]),
        HEADER_TEXT,
    ),
    login=st.one_of(st.none(), st.just("a-token")),
)  # fmt: skip
def test_any_request_is_let_through_or_refused_with_a_4xx(
    path: str, method: str, query: str, headers: dict[str, str], login: str | None
) -> None:
    access = UiAccess(login_token=login, session="the-session")
    scope = {
        "type": "http",
        "path": path,
        "method": method,
        "query_string": query.encode("utf-8", "surrogateescape"),
        "headers": [(k.encode(), v.encode("latin-1")) for k, v in headers.items()],
    }
    refusal = access.refusal(scope)
    assert refusal is None or 400 <= refusal.status_code < 500 or refusal.status_code == 303
    if refusal is None and path.startswith("/api/") and path != "/api/session":
        assert headers.get("x-accord-session") == "the-session"


@given(st.text(max_size=80))
def test_card_urls_take_any_text(url: str) -> None:
    urls = card_urls(url)
    assert urls and all("#" not in u for u in urls)


@given(st.text(max_size=40), st.text(max_size=40))
@example("http://[x", "[x")
@example("http://127.0.0.1:8080", "127.0.0.1:8080")
def test_any_origin_is_told_apart_without_failing(origin: str, host: str) -> None:
    why = foreign_origin({"origin": origin, "host": host})
    assert why is None or why.startswith("refused: sent from another origin")


def test_the_pages_own_origin_and_scripts_pass() -> None:
    own = {"origin": "http://127.0.0.1:8080", "host": "127.0.0.1:8080"}
    assert foreign_origin(own) is None
    assert foreign_origin({**own, "sec-fetch-site": "same-origin"}) is None
    assert foreign_origin({"host": "127.0.0.1:8080"}) is None  # a script: neither header
    assert foreign_origin({**own, "host": "127.0.0.1:8081"}) is not None
