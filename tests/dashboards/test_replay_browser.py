"""Session replay end to end in Debian's chromium: a page with the real @sentry/browser and its Replay
integration (from npm) is used and then throws; the recording and the error go through the envelope
endpoint of a real StackLens server; the error's page shows View Replay, which opens rrweb-player on the
recorded page a few seconds before the error, under the dashboards' CSP (screenshots in
tests/_artifacts/replay, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PAGE_DIR = Path(__file__).parent / "replay_page"
SHOTS = shots_dir("replay")
CSP_PROBE = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # `format`: the base class's name
        return


@pytest.fixture
def shop(tmp_path: Path, sentry_browser_bundle: Path) -> Iterator[str]:
    """The recorded page, served from its own origin (as a customer's site is)."""
    root = tmp_path / "shop"
    shutil.copytree(PAGE_DIR, root)
    shutil.copy(sentry_browser_bundle, root / "sentry.bundle.js")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


def _wait(
    query: str, parameters: dict[str, Any], settings: Settings, at_least: int = 1
) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + 60
    rows: Any = []
    while time.monotonic() < deadline:
        rows = get_warehouse(settings).query(query, parameters=parameters).result_rows
        if len(rows) >= at_least:
            return rows
        time.sleep(0.5)
    raise AssertionError(f"nothing landed for {query!r}: {rows}")


@pytest.mark.parametrize("mode", ["session", "buffer"])
def test_view_replay_plays_the_recorded_page(chromium, server, shop, org_factory, stores, mode: str) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    host = server.split("://", 1)[1]
    dsn = f"http://{org['app_key']}@{host}/{org['project_id']}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    customer = chromium.new_page(viewport={"width": 1024, "height": 700})
    customer.goto(f"{shop}/index.html?mode={mode}&dsn={dsn}")
    customer.wait_for_function(
        "() => window.Sentry && Sentry.getReplay() && Sentry.getReplay().getReplayId()"
    )
    replay_id = customer.evaluate("() => Sentry.getReplay().getReplayId()")
    for _ in range(3):
        customer.click("#add")
        customer.wait_for_timeout(300)
    customer.fill("#holder", "Ada Lovelace")
    customer.wait_for_timeout(1500)
    customer.click("#pay")  # throws: the global handler captures it, tagged with the replay id
    customer.wait_for_timeout(500)
    customer.evaluate("() => Sentry.getReplay().flush()")
    customer.evaluate("() => Sentry.flush(30000)")

    # In buffer mode the error turns the buffered replay into a sent one; read its id again after the
    # flush, and take the error by its organization (then check its tag) so a late tag reads as such.
    replay_ids = {replay_id, customer.evaluate("() => Sentry.getReplay().getReplayId()")}
    errors = _wait(
        "SELECT issue_id, toString(event_id), tags['replayId'] FROM events WHERE org_id = {org:UInt64} "
        "AND title LIKE 'TypeError%'",
        {"org": org["org_id"]},
        stores,
    )
    issue_id, event_id, tagged = errors[0]
    assert tagged in replay_ids, f"the error carries tags.replayId: {tagged!r} not in {replay_ids}"
    replay_id = tagged
    _wait(
        "SELECT segment_id FROM replay_segments WHERE org_id = {org:UInt64} AND replay_id = {replay:UUID} "
        "AND has_full_snapshot = 1",
        {"org": org["org_id"], "replay": replay_id},
        stores,
    )
    customer.close()

    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(CSP_PROBE)
    console: list[str] = []
    watch_errors(page, console)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"

    page.goto(f"{base}/issues/{issue_id}?event={event_id.replace('-', '')}")
    view = page.locator("#view-replay")
    expect(view).to_have_text("View Replay")
    href = view.get_attribute("href") or ""
    assert f"/replays/{replay_id}?t=" in href
    offset = float(href.rsplit("=", 1)[1])
    page.screenshot(path=str(SHOTS / f"issue-view-replay-{mode}.png"), full_page=True)
    view.click()
    page.wait_for_url(f"**/replays/{replay_id}?t=*")
    page.wait_for_selector("#replay-player[data-ready='1']", timeout=45_000)  # a loaded shared machine
    # The player's iframe holds the recorded page: its heading, the cart and both buttons (text masked
    # by the SDK's defaults, so the structure is what shows, with asterisks for the words).
    frame = page.frame_locator(".replayer-wrapper iframe")
    expect(frame.locator("#shop-title")).to_have_count(1)
    expect(frame.locator("#pay")).to_have_count(1)
    masked = frame.locator("#shop-title").inner_text()
    assert masked and set(masked.replace(" ", "")) == {"*"}, f"text stays masked: {masked!r}"
    assert "Ada" not in page.content() and "Ada" not in frame.locator("body").inner_html()
    # Opened a few seconds before the error: the player's clock is not at the start.
    assert offset > 0 or page.locator(".replay-mark.mark-error").count() == 1
    expect(page.locator(".replay-mark.mark-error")).to_have_count(1)
    assert page.locator(".replay-mark.mark-click").count() >= 3
    expect(page.locator("#replay-error-list a")).to_contain_text("TypeError")
    expect(page.locator("#replay-breadcrumbs")).to_contain_text("click")
    page.wait_for_timeout(500)
    page.screenshot(path=str(SHOTS / f"replay-player-{mode}.png"), full_page=True)

    page.goto(f"{base}/replays")
    row = page.locator("tr.replay-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Chrome")
    expect(row.locator("td").nth(4)).to_have_text("1")
    page.screenshot(path=str(SHOTS / f"replay-list-{mode}.png"), full_page=True)
    page.goto(f"{base}/replays?browser=Firefox")
    expect(page.locator("tr.replay-row")).to_have_count(0)
    expect(page.locator("table.replays")).to_contain_text("No replays match")

    assert page.evaluate("window.__csp") == [], "no CSP violation on the replay pages"
    assert console == [], console
