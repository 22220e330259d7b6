"""In chromium against a real uvicorn server built like `stacklens serve`: /docs works offline under the
strict CSP, no `Server` header, and the invitation and sign-in pages (members page with the link, the
invited person's page, creating the account, a throttled sign-in) render and work without console errors.
Screenshots go to tests/_artifacts/security/."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from stacklens.cli.serve import uvicorn_config
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "security"


@pytest.fixture
def server(stores) -> Iterator[str]:
    import socket

    from stacklens.cli.app import build_app
    from stacklens.public_url import serving

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = stores.model_copy(update={"login_throttle_after": 3, "login_throttle_base_seconds": 60.0})
    # As `stacklens serve` builds it: invitation links carry this port.
    config = uvicorn_config(build_app(serving(settings, "127.0.0.1", port)), "127.0.0.1", port)
    config.log_level = "warning"
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started, "server did not start"
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


def test_docs_offline_under_csp_and_no_server_header(chromium, server) -> None:
    from playwright.sync_api import expect

    answer = httpx.get(f"{server}/docs")
    assert answer.status_code == 200 and "server" not in answer.headers
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert "<script>" not in answer.text and "cdn" not in answer.text.lower()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    outside: list[str] = []
    page = chromium.new_page()
    watch_errors(page, errors)
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)
    page.goto(f"{server}/docs")
    # Every tag is listed, collapsed (api/static/docs.js); opening one draws its operations.
    expect(page.locator("#operations-tag-keys")).to_be_visible(timeout=20_000)
    assert page.locator(".opblock-tag").count() >= 30
    page.locator("#operations-tag-keys").click()
    expect(page.locator(".opblock-summary-path", has_text="/api/keys/api/next")).to_have_count(
        1, timeout=20_000
    )
    page.screenshot(path=str(ARTIFACTS / "docs.png"), full_page=False)
    assert errors == [] and [u for u in outside if not u.startswith("data:")] == []


def test_invitation_and_sign_in_pages(chromium, server, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    owner = chromium.new_page(viewport={"width": 1200, "height": 900})
    watch_errors(owner, errors, page_errors=False)
    sign_in_page(owner, server, org["email"], PASSWORD)
    owner.goto(f"{server}/orgs/{org['org_slug']}/settings/members")
    owner.fill("#invite-member input[name=email]", "new.person@example.test")
    owner.click("#invite-member button[type=submit]")
    link = owner.locator("#invite-link").input_value()
    assert re.fullmatch(rf"{re.escape(server)}/invitations/[\w.-]+", link)
    owner.screenshot(path=str(ARTIFACTS / "members_invited.png"), full_page=True)

    invited = chromium.new_context().new_page()
    watch_errors(invited, errors, page_errors=False)
    invited.goto(link)
    expect(invited.locator("#invitation")).to_contain_text("new.person@example.test")
    invited.screenshot(path=str(ARTIFACTS / "invitation.png"), full_page=True)
    invited.fill("#create-account input[name=password]", "password")
    invited.fill("#create-account input[name=confirm]", "password")
    invited.click("#create-account button[type=submit]")
    expect(invited.locator(".error")).to_contain_text("most common")
    invited.screenshot(path=str(ARTIFACTS / "invitation_weak_password.png"), full_page=True)
    invited.fill("#create-account input[name=password]", "a long pass phrase")
    invited.fill("#create-account input[name=confirm]", "a long pass phrase")
    with invited.expect_navigation():
        invited.click("#create-account button[type=submit]")
    invited.wait_for_url(f"{server}/orgs/{org['org_slug']}")

    stranger = chromium.new_context().new_page()
    watch_errors(stranger, errors, page_errors=False)
    for attempt in range(3):
        stranger.goto(f"{server}/login")
        stranger.fill("input[name=email]", org["email"])
        stranger.fill("input[name=password]", f"guess-number-{attempt}")
        stranger.click("button[type=submit].primary")
    expect(stranger.locator(".error")).to_contain_text("Too many failed sign-ins")
    stranger.screenshot(path=str(ARTIFACTS / "sign_in_throttled.png"), full_page=True)
    # The 401 and 429 answers of the form are logged by chromium as failed resources; nothing else may be.
    assert [
        e
        for e in errors
        if "status of 401" not in e and "status of 429" not in e and "status of 400" not in e
    ] == []
