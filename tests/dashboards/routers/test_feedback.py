"""User feedback and attachments in chromium (docs/feedback.md), with @sentry/browser from npm on a page of
another origin: an error sent with an attachment, feedback through the SDK's feedback widget (its form filled
and sent), and Sentry.showReportDialog() against StackLens's crash-report dialog. Then the feedback page, the
issue page (its feedback and the event's attachments) and a download, looked at by a signed-in member at
1024 and 1440 px (screenshots in tests/_artifacts/feedback/)."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.conftest import make_settings

pytestmark = [pytest.mark.browser]

HOST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>shop</title><link rel="icon" href="data:,">
<script src="/sentry.bundle.js"></script></head><body><h1>The shop</h1>
<script>
window.__feedback = Sentry.feedbackIntegration({ autoInject: false, showBranding: false });
Sentry.init({ dsn: %(dsn)s, release: "web@3.1.0", integrations: [window.__feedback] });
Sentry.getCurrentScope().addAttachment({ filename: "cart.json", data: '{"items": 3}', contentType: "application/json" });
function pay() { throw new TypeError("card is undefined"); }
try { pay(); } catch (err) { window.__eventId = Sentry.captureException(err); }
Sentry.getCurrentScope().clearAttachments();
Sentry.flush(30000).then(function (ok) { window.__flushed = ok; });
</script></body></html>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[tuple[str, Settings]]:
    data = tmp_path_factory.mktemp("feedback-browser") / "data"
    data.mkdir()
    store = make_settings(data, warehouse_url)
    migrate_control_store(store)
    apply_migrations(store)
    with serve(store) as url:
        yield url, store


@pytest.fixture(scope="module")
def host_site(
    sentry_browser_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("host")
    shutil.copy(sentry_browser_bundle, root / "sentry.bundle.js")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}", root
    finally:
        site.shutdown()
        site.server_close()


def _feedback(url: str, api_key: str, project: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        rows = httpx.get(
            f"{url}/api/projects/{project}/feedback",
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=30,
        ).json()["rows"]
        linked = [r for r in rows if r["event_id"]]  # the dialog's report names its event
        if (
            len(rows) >= count and linked and all(r["issue_id"] for r in linked)
        ) or time.monotonic() > deadline:
            return rows
        time.sleep(0.3)


def test_feedback_widget_dialog_and_pages_in_chromium(server, host_site, chromium) -> None:
    from playwright.sync_api import expect

    url, store = server
    site, root = host_site
    with session_scope(store) as session:
        email = f"owner-{uuid.uuid4().hex[:8]}@example.test"
        org, api_key = accounts.create_organization(
            session, f"Shop {uuid.uuid4().hex[:6]}", email, "password-123"
        )
        project, app_key = create_project(session, org.id, "Web")
        slug, org_slug, project_id = project.slug, org.slug, project.id
    dsn = url.replace("http://", f"http://{app_key}@") + f"/{project_id}"
    (root / "index.html").write_text(HOST_PAGE % {"dsn": json.dumps(dsn)})
    shots = shots_dir("feedback")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []

    shop = chromium.new_page(viewport={"width": 1024, "height": 800})
    watch_errors(shop, errors, with_url=True)
    shop.goto(f"{site}/index.html")
    shop.wait_for_function("() => window.__flushed !== undefined", timeout=45000)
    event_id = shop.evaluate("window.__eventId")
    # The feedback widget: its form opened, filled and sent as a person would.
    shop.evaluate("window.__feedback.createForm().then(function (form) { form.appendToDom(); form.open(); })")
    shop.fill("input[name=name]", "Ada Lovelace")
    shop.fill("input[name=email]", "ada@example.test")
    shop.fill("textarea[name=message]", "Paying failed: the card form was empty.")
    shop.screenshot(path=str(shots / "widget_1024.png"))
    shop.click("button[type=submit]")
    expect(shop.locator("input[name=name]")).to_have_count(0, timeout=30000)
    # Sentry's crash-report dialog, served by StackLens.
    shop.evaluate(
        "eventId => Sentry.showReportDialog({ eventId: eventId, user: { name: 'Grace' } })", event_id
    )
    expect(shop.locator("#sentry-dialog-comments")).to_be_visible(timeout=30000)
    expect(shop.locator("#sentry-dialog-name")).to_have_value("Grace")
    shop.fill("#sentry-dialog-email", "grace@example.test")
    shop.fill("#sentry-dialog-comments", "It crashed when I pressed <b>Pay</b>.")
    shop.screenshot(path=str(shots / "report_dialog_1024.png"))
    shop.click(".sentry-error-embed button[type=submit]")
    expect(shop.locator(".sentry-dialog-success")).to_be_visible(timeout=30000)

    rows = _feedback(url, api_key, slug, 2)
    sources = {r["source"]: r for r in rows}
    assert set(sources) == {"feedback", "dialog"}, rows
    assert sources["feedback"]["event_id"] is None or sources["feedback"]["event_id"] == event_id
    assert sources["feedback"]["name"] == "Ada Lovelace" and sources["feedback"]["url"].startswith(site)
    assert sources["dialog"]["event_id"] == event_id and sources["dialog"]["issue_id"]
    issue_id = sources["dialog"]["issue_id"]

    member = chromium.new_context(viewport={"width": 1024, "height": 900}, accept_downloads=True).new_page()
    watch_errors(member, errors, with_url=True)
    sign_in_page(member, url, email, "password-123")
    for width in (1024, 1440):
        member.set_viewport_size({"width": width, "height": 900})
        member.goto(f"{url}/orgs/{org_slug}/projects/{slug}/feedback")
        expect(member.locator(".feedback-item")).to_have_count(2)
        expect(member.locator("#feedback")).to_contain_text(
            "It crashed when I pressed <b>Pay</b>."
        )  # as text
        expect(member.locator(f"a.feedback-issue[href*='/issues/{issue_id}']")).to_have_count(1)
        member.screenshot(path=str(shots / f"feedback_list_{width}.png"), full_page=True)
        member.goto(f"{url}/orgs/{org_slug}/projects/{slug}/issues/{issue_id}?event={event_id}")
        expect(member.locator("#issue-feedback .feedback-item")).to_have_count(1)
        expect(member.locator("#attachments .attachment-row")).to_have_count(1)
        expect(member.locator("#attachments")).to_contain_text("cart.json")
        expect(member.locator("#attachments")).to_contain_text("12 B")
        member.locator("#attachments").scroll_into_view_if_needed()
        member.screenshot(path=str(shots / f"issue_feedback_{width}.png"), full_page=True)
    with member.expect_download() as download:
        member.click("a.attachment-link")
    saved = download.value.path()
    assert download.value.suggested_filename == "cart.json" and Path(saved).read_text() == '{"items": 3}'
    # Always a file, never shown inline; another organization's member, through their own organization and
    # project, finds no such attachment.
    href = member.locator("a.attachment-link").get_attribute("href") or ""
    got = member.request.get(url + href)
    assert got.status == 200 and got.headers["content-disposition"].startswith("attachment;")
    assert got.headers["content-type"] == "application/octet-stream"
    with session_scope(store) as session:
        outsider_email = f"other-{uuid.uuid4().hex[:8]}@example.test"
        other, _ = accounts.create_organization(
            session, f"Other {uuid.uuid4().hex[:6]}", outsider_email, "password-123"
        )
        other_project, _ = create_project(session, other.id, "Web")
        theirs = f"/orgs/{other.slug}/projects/{other_project.slug}" + href.split(f"/projects/{slug}", 1)[1]
    outsider = chromium.new_page()
    sign_in_page(outsider, url, outsider_email, "password-123")
    assert outsider.request.get(url + theirs).status == 404
    assert outsider.request.get(url + href).status in (403, 404)  # not their organization's address
    outsider.close()
    member.goto(f"{url}/orgs/{org_slug}/projects/{slug}/feedback?issue=abc")
    expect(member.locator("p.error")).to_contain_text("Issue: give an issue id")
    ours = [e for e in errors if not e.startswith(site) and "status of 400" not in e]
    assert not ours, ours
