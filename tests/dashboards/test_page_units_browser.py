"""Every main page writes its numbers in the metrics catalog's units, in Chromium (issue 71 point 5):
sizes in binary units (B below 1 KiB, then KiB / MiB / GiB; never KB, MB or a count of bytes past 1,023), a
count of one in the singular ("1 event", never "1 events"), a size no request reported written "–" like every
missing figure (never "0 B" beside "–" in one row), every waterfall row's Status filled or saying why it is
empty, and the release-impact size axis ticked at round values of its unit. Screenshots at 1280 and 1024
px."""

from __future__ import annotations

import json
import re

import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.test_performance_browser import land_demo_traffic

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("page_units")
# A count of one followed by a plural noun: "1 events", "1 users", "1 page loads" …
ONE_PLURAL = re.compile(
    r"(?<![\d.,])1 (events|users|issues|page loads|loads|samples|requests|items|sessions|replays|errors|calls"
    r"|views|spans|rules|releases|interactions|alerts|members)\b"
)
SI_SIZE = re.compile(r"\d\s?(KB|MB|GB|kB|Kb)\b")
RAW_BYTES = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d{4,}) (?:B|bytes)\b")
# A number cell of the performance tables: a number with one of the catalog's units, or unitless (a score).
NUMBER_CELL = re.compile(r"[+\-]?[\d,]+(\.\d+)?( (ms|s|B|KiB|MiB|GiB|%|×|per 1,000))?")
SIZE_TICK = re.compile(r"0|\d+(\.\d+)? (KiB|MiB|GiB)")


def _boom() -> None:
    raise LookupError("sku 7 gone")


def _timeout() -> None:
    raise TimeoutError("payment gateway timed out")


def _units_hold(name: str, text: str) -> None:
    assert not ONE_PLURAL.findall(text), (name, ONE_PLURAL.findall(text))
    assert not SI_SIZE.findall(text), (name, SI_SIZE.findall(text))
    big = [m for m in RAW_BYTES.findall(text) if int(m.replace(",", "")) >= 1024]
    assert not big, (name, big)


def test_every_main_page_writes_its_numbers_in_the_catalogs_units(
    chromium, server, org_factory, stores
) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    # An issue of one event and one user (the singular), another of three.
    (one,) = land(org["org_id"], org["project_id"], [sdk_event(_boom, user={"id": "u1"})])
    land(org["org_id"], org["project_id"], [sdk_event(_timeout, user={"id": f"u{i}"}) for i in range(3)])
    project = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"
    perf = f"{project}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    def visit(url: str, name: str) -> str:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        _units_hold(name, text)
        cells = [c.strip() for c in page.locator("span[data-value]").all_inner_texts()]
        assert all(NUMBER_CELL.fullmatch(c) for c in cells), (
            name,
            [c for c in cells if not NUMBER_CELL.fullmatch(c)],
        )
        return text

    visit(f"{project}/issues?range=30d", "issues")
    visit(f"{project}/issues/{one['issue_id']}?range=30d", "issue_one_event")
    visit(f"{perf}?range=30d", "performance")
    visit(f"{perf}/pages?range=30d", "pages")
    visit(f"{perf}/api?range=30d", "endpoints")
    visit(f"{perf}/trends?range=30d", "trends")
    visit(f"{perf}/recommendations?range=30d", "recommendations")
    visit(f"{project}/releases?range=30d", "releases")

    # Resources: a type's sizes are all there or all "–" (no "0 B" total beside a missing average).
    visit(f"{perf}/resources?range=30d", "resources")
    for row in page.locator("#types tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        sizes = [cells[i].strip() for i in (3, 5, 6)]  # Total, Avg encoded, Avg decoded
        assert all(s == "–" for s in sizes) or not any(s == "–" for s in sizes), cells

    # The waterfall: every row's Status is an HTTP status or says why there is none.
    page.goto(f"{perf}/pages?range=30d")
    page.click("#pages-table a[href*='/pages/detail']")
    page.wait_for_selector("#samples")
    page.click("a.waterfall-link")
    page.wait_for_selector("#spans")
    visit(page.url, "waterfall")
    statuses = [s.strip() for s in page.locator("#spans td.status").all_inner_texts()]
    assert statuses and all(statuses), statuses
    assert all(re.fullmatch(r"\d{3}|cached|not reported|[a-z ]+", s) for s in statuses), statuses
    assert "not reported" in statuses or "cached" in statuses
    why = page.locator("#spans td.status span[title]").first.get_attribute("title") or ""
    assert "no HTTP status" in why or "browser cache" in why, why

    # Release impact: its JavaScript axis ticks sit on round values of one binary unit.
    for width in (1280, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        visit(f"{perf}/releases?range=30d", f"release_impact_{width}")
    figure = json.loads(page.locator("script#fig-releases").inner_text())
    axis = figure["layout"]["yaxis2"]
    assert all(SIZE_TICK.fullmatch(t) for t in axis["ticktext"]), axis["ticktext"]
    steps = {round(b - a, 6) for a, b in zip(axis["tickvals"], axis["tickvals"][1:], strict=False)}
    assert len(steps) == 1, axis["tickvals"]
    (step,) = steps
    unit = 1024.0 if axis["ticktext"][-1].endswith("MiB") else 1.0
    assert re.fullmatch(r"[125]0*|0\.0*[125]", f"{step / unit:g}"), step
    assert not errors, errors
