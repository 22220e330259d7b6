"""Source maps end to end in Debian's chromium: a real @sentry/browser error thrown from an esbuild-minified
bundle (debug ids injected by the real sentry-cli) lands through the DSN; the issue page first says why its
frames are minified, then, after `sentry-cli sourcemaps upload` (the map arrives after the error), shows the
original function, file, line and source lines, and the same error sent again is grouped by its original
frames; the project's source maps page lists the bundle and deletes
it. Screenshots go to tests/_artifacts/sourcemaps."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from stacklens.ingest.front_door import settle_front_doors
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.stacklens.sourcemaps.app_bundle import THROW_LINE, build_app, sentry_cli

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = (
    Path(os.environ.get("STACKLENS_SHOTS_DIR") or Path(__file__).resolve().parents[2] / "_artifacts")
    / "sourcemaps"
)
RELEASE = "shop@4.0.0"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>shop</title><link rel="icon" href="data:,">
<script src="/sentry.bundle.js"></script><script src="/static/app.min.js"></script></head><body><h1>shop</h1>
<script>
Sentry.init({ dsn: %(dsn)s, release: %(release)s, integrations: [] });
try { window.checkoutButtonClicked(); } catch (err) { window.__eventId = Sentry.captureException(err); }
Sentry.flush(30000).then(function (ok) { window.__flushed = ok; });
</script></body></html>"""


def _site(root: Path) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    return site


def test_browser_error_is_shown_at_its_original_lines(
    chromium,
    server: str,
    stores: Settings,
    org_factory,
    sentry_browser_bundle: Path,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    dist = build_app(tmp_path / "build", inject=True)
    root = tmp_path / "site"
    (root / "static").mkdir(parents=True)
    shutil.copy(dist / "app.min.js", root / "static" / "app.min.js")  # the map itself is not served
    shutil.copy(sentry_browser_bundle, root / "sentry.bundle.js")
    dsn = server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    (root / "index.html").write_text(PAGE % {"dsn": json.dumps(dsn), "release": json.dumps(RELEASE)})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    site = _site(root)
    errors: list[str] = []
    project_path = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"
    try:
        shop = chromium.new_page()
        shop.goto(f"http://127.0.0.1:{site.server_address[1]}/index.html")
        # A loaded machine (two test workers on two cores) may take seconds to answer the envelope.
        shop.wait_for_function("() => window.__flushed !== undefined", timeout=45000)
        assert shop.evaluate("window.__flushed") is True

        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        watch_errors(page, errors, page_errors=False)
        sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
        page.goto(f"{project_path}/issues")
        page.click("a.issue-title")
        top = page.locator("li.frame.top")
        expect(top.locator(".sourcemap-note")).to_contain_text("not source-mapped: debug id")
        expect(top.locator(".sourcemap-note")).to_contain_text("unknown: no uploaded map has it")
        page.screenshot(path=str(ARTIFACTS / "issue_before_upload.png"), full_page=True)
        issue_url = page.url

        env = {**os.environ, "SENTRY_URL": server, "SENTRY_AUTH_TOKEN": str(org["api_key"])}
        upload = subprocess.run(
            [str(sentry_cli()), "sourcemaps", "upload", "--org", org["org_slug"], "--project",
             org["project"], "--release", RELEASE, "--url-prefix", "~/static", str(dist)],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert upload.returncode == 0, upload.stderr + upload.stdout

        page.goto(issue_url)
        expect(top.locator("code.fn")).to_have_text("computeTotal")
        expect(top.locator("code.path")).to_contain_text("src/cart.js")
        expect(top.locator(".lineno")).to_have_text(str(THROW_LINE))
        expect(top.locator("pre.source .ctx.current")).to_contain_text(
            'throw new RangeError("quantity must be positive")'
        )
        expect(top.locator("pre.source .ctx")).to_have_count(11)
        expect(top.locator(".sourcemap-via")).to_contain_text("Source map applied (debug id")
        caller = page.locator("li.frame").nth(1)
        expect(caller.locator("code.fn")).to_have_text("checkoutButtonClicked")
        # The page's inline script (the outermost frame) has no map, and says so.
        expect(page.locator(".sourcemap-note")).to_have_count(1)
        expect(page.locator("li.frame").nth(2).locator(".sourcemap-note")).to_contain_text(
            "no map for http://127.0.0.1"
        )
        page.screenshot(path=str(ARTIFACTS / "issue_after_upload.png"), full_page=True)

        # The same error again, now that its map is uploaded: grouped by its original frames (v3), in
        # a new issue named after the original function; the first event keeps its issue.
        shop.reload()
        # A loaded machine (two test workers on two cores) may take seconds to answer the envelope.
        shop.wait_for_function("() => window.__flushed !== undefined", timeout=45000)
        assert shop.evaluate("window.__flushed") is True
        # The SDK's 200 means stored in the front door's spool; this test reads the warehouse itself,
        # so it waits for the drain as the service's own readers do.
        assert settle_front_doors(timeout=30)
        answer = get_warehouse(stores).query(
            "SELECT grouping_version, in_app_frames, issue_id FROM events WHERE org_id = {org:UInt64} "
            "ORDER BY received_at",
            parameters={"org": org["org_id"]},
        )
        grouped = answer.result_rows
        assert [row[0] for row in grouped] == ["v2", "v3"]
        assert grouped[1][1][:2] == ["cart.js:computeTotal", "main.js:checkoutButtonClicked"]
        assert grouped[0][2] != grouped[1][2] and grouped[0][1][0].startswith("app.min.js:")

        page.goto(f"{project_path}/sourcemaps")
        row = page.locator("tr.bundle-row")
        expect(row).to_have_count(1)
        expect(row.locator(".release")).to_have_text(RELEASE)
        expect(row.locator("ul.bundle-files li")).to_have_count(2)
        expect(row).to_contain_text("~/static/app.min.js.map")
        page.screenshot(path=str(ARTIFACTS / "sourcemaps_page.png"), full_page=True)
        row.locator("button.danger").click()
        expect(page.locator("p.notice")).to_contain_text("Bundle deleted")
        expect(page.locator("p.empty")).to_contain_text("No source maps uploaded yet")
        page.screenshot(path=str(ARTIFACTS / "sourcemaps_empty.png"), full_page=True)
        page.goto(issue_url)
        expect(top.locator(".sourcemap-note")).to_contain_text("not source-mapped")
    finally:
        site.shutdown()
        site.server_close()
    assert not errors, errors
