"""The download links of the performance pages in a real browser (Debian's chromium through Playwright)
against a real uvicorn server under the strict CSP: each page shows its CSV, JSON and PDF links with the
page's filters, clicking them downloads files whose content matches the page, nothing violates the CSP, and
the CSV arrives as a chunked stream. Screenshots of the pages with their download bar and of the PDF's
pages rendered by poppler are saved (tests/_artifacts/performance_exports, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from pypdf import PdfReader

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("performance_exports")
PAGES = ["", "/pages", "/resources", "/api", "/trends", "/releases", "/recommendations"]


def test_download_links_work_in_a_real_browser(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    context = chromium.new_context(viewport={"width": 1360, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True, page_errors=False)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for suffix in PAGES:
        page.goto(f"{base}{suffix}?range=30d&environment=production")
        bar = page.locator("nav.downloads")
        labels = bar.locator("a").all_inner_texts()
        assert any(t.startswith("CSV") for t in labels) and "JSON" in labels and "PDF report" in labels
        for href in bar.locator("a").evaluate_all("links => links.map(a => a.href)"):
            assert "range=30d" in href and "environment=production" in href, href
        name = suffix.strip("/") or "overview"
        bar.screenshot(path=str(SHOTS / f"{name}-downloads.png"))
        if suffix == "/pages":
            page.screenshot(path=str(SHOTS / "pages.png"), full_page=False)
            shown = page.locator("#pages-table tbody tr").count()
            with page.expect_download() as csv_download:
                bar.locator("a.download-csv").first.click()
            rows = list(csv.DictReader(io.StringIO(Path(csv_download.value.path()).read_text())))
            assert len(rows) == shown and csv_download.value.suggested_filename.endswith("-pages.csv")
            with page.expect_download() as json_download:
                bar.locator("a.download-json").click()
            document = json.loads(Path(json_download.value.path()).read_text())
            assert len(document["tables"]["pages"]) == shown
            with page.expect_download() as pdf_download:
                bar.locator("a.download-pdf").click()
            pdf = Path(pdf_download.value.path()).read_bytes()
        assert page.evaluate("window.__csp") == [], name
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    assert not errors, errors
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Performance report" in text and "environment production" in text
    (SHOTS / "report.pdf").write_bytes(pdf)
    if shutil.which("pdftoppm"):
        subprocess.run(
            ["pdftoppm", "-r", "80", "-png", str(SHOTS / "report.pdf"), str(SHOTS / "report")],
            check=True,
            timeout=60,
        )
        assert list(SHOTS.glob("report-*.png"))
    # the CSV is sent as a stream (chunked), not as one body with a length
    with httpx.stream(
        "GET", f"{base}/export/resources.csv?range=30d&table=largest", cookies=cookies
    ) as answer:
        assert answer.status_code == 200 and answer.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in answer.headers
        assert answer.read().startswith(b"resource,resource_type,render_blocking")
