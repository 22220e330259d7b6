"""What the performance pages draw where there is no data, in a real browser (Debian's chromium through
Playwright) against a real uvicorn server, on demo traffic with two holes of two days: every daily chart
has a gap (``None``, no line across) on each UTC day without page loads and a value on every other; a
Firefox-filtered overview's INP chart says "no data for these filters" over the window's own dates (never
January 2000); sparklines break on the days without loads (never 0 ms); the distribution's log axis reads
100 ms, 200 ms, 1 s; the recommendations list each resource once, in human units, without old releases'
files unless asked for, and break no word. A screenshot of each page at 1024 px is saved
(tests/_artifacts/performance, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dashboards.performance_figures import NO_DATA
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, SHOTS, land_demo_traffic

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# Two days in a row without page loads hold at least one whole UTC day (the demo spreads a day's loads over 23
# h).
HOLES = frozenset({5, 6, 17, 18})
TICK = re.compile(r"^\d[\d,.]* (ms|s)$")
# Every word of the cells, by its line boxes: a word broken inside itself has two boxes (a break after a
# hyphen, "render-|blocking", is a break between words).
BROKEN_WORDS = """(selector) => {
    const broken = [];
    document.querySelectorAll(selector).forEach(cell => {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const re = /[^\\s-]+/g;
            let m;
            while ((m = re.exec(node.textContent)) !== null) {
                const range = document.createRange();
                range.setStart(node, m.index);
                range.setEnd(node, m.index + m[0].length);
                const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(m[0]);
            }
        }
    });
    return broken;
}"""


def _figure(page: Any, name: str) -> dict[str, Any]:
    return json.loads(page.locator(f"#fig-{name}").text_content())


def _ticks(page: Any, name: str, axis: str = "xtick") -> list[str]:
    return [t.strip() for t in page.locator(f"#plot-{name} .{axis} text").all_text_contents()]


def test_gaps_empty_filters_log_ticks_and_recommendations(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    times = land_demo_traffic(stores, org["org_id"], org["project_id"], skip=HOLES)
    loaded = {t.astimezone(UTC).date().isoformat() for t in times}
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 800})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    def visit(url: str, name: str, plots: bool = True) -> None:
        page.goto(url)
        if plots:
            page.wait_for_selector(".plot .main-svg")
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__csp") == [], name
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        page.screenshot(path=str(SHOTS / f"gaps-{name}.png"), full_page=True)
        assert overflow <= 0, (name, overflow)

    # Overview: a day without page loads is None (a gap), every day with loads a value; no line across.
    visit(f"{base}?range=30d", "overview")
    load = _figure(page, "trend-load")
    (trace,) = load["data"]
    assert trace["connectgaps"] is False
    empty_days = [x for x, y in zip(trace["x"], trace["y"], strict=True) if y is None]
    assert empty_days == [x for x in trace["x"] if x not in loaded], empty_days
    # The two holes, inside the data (today may be empty too, late in the UTC day: not a hole).
    assert 2 <= len([d for d in empty_days if min(loaded) < d < max(loaded)]) <= 4
    drawn = page.evaluate("document.getElementById('plot-trend-load').data[0].y")
    assert drawn == trace["y"] and 0 not in drawn

    # Filtered to Firefox: no INP at all (Firefox reports none): said so, over the window's dates.
    visit(f"{base}?range=30d&browser=Firefox", "overview-firefox")
    inp = _figure(page, "trend-inp")
    assert all(y is None for y in inp["data"][0]["y"])
    # The note, once; the rest are the releases' markers (stacklens/markers.py), drawn on an empty chart
    # too.
    texts = [a["text"] for a in inp["layout"]["annotations"]]
    assert texts[0] == NO_DATA and all("/releases/" in t or t.endswith(" releases") for t in texts[1:]), texts
    assert NO_DATA in page.locator("#plot-trend-inp").inner_text()
    ticks = _ticks(page, "trend-inp")
    assert ticks and not any("2000" in t for t in ticks), ticks
    assert _figure(page, "trend-lcp")["data"][0]["y"].count(None) < len(trace["x"])  # LCP is reported

    # Pages: the 7-day sparklines break on the days without loads, never dip to 0 ms.
    visit(f"{base}/pages?range=7d", "pages")
    sparks = page.locator("svg.spark-gaps")
    series = [json.loads(sparks.nth(i).get_attribute("data-series")) for i in range(sparks.count())]
    assert series and all(0 not in s and 0.0 not in s for s in series)
    until = datetime.now(UTC)
    week = [(until - timedelta(days=7) + timedelta(days=i)).date().isoformat() for i in range(8)]
    hole = [i for i, day in enumerate(week) if day not in loaded and i < len(week) - 1]
    assert hole, week  # the second hole lies in the last 7 days
    assert all(s[i] is None for s in series for i in hole if i < len(s))
    broken = [i for i in range(sparks.count()) if sparks.nth(i).locator("polyline").count() > 1]
    assert broken  # a line in pieces, not one line across the hole
    page.evaluate("document.querySelector('.scroll').scrollLeft = 10000")  # the sparklines' column
    page.screenshot(path=str(SHOTS / "gaps-pages-sparklines.png"))

    # One page: every daily chart over the window's days; the distribution's log axis in round times.
    page.click("#pages-table a[href*='/pages/detail']")
    page.wait_for_selector("#samples")
    visit(page.url.replace("range=7d", "range=30d"), "page-detail")
    day_load = _figure(page, "day-load_p75")["data"][0]
    assert len(day_load["x"]) >= 30 and day_load["connectgaps"] is False
    dist = _figure(page, "dist-load")["layout"]["xaxis"]
    assert dist["type"] == "log" and all(TICK.match(t) for t in dist["ticktext"]), dist["ticktext"]
    shown = [t for t in _ticks(page, "dist-load") if t]
    assert shown and all(TICK.match(t) for t in shown), shown

    # Endpoints: each bar says where it was measured.
    visit(f"{base}/api?range=30d", "endpoints")
    labels = _figure(page, "endpoints")["data"][0]["x"]
    assert all(label.endswith(("(client)", "(server)")) for label in labels), labels
    page.click("#endpoints-table a[href*='/api/detail']")
    page.wait_for_selector("#slowest")
    visit(page.url, "endpoint-detail")
    visit(f"{base}/trends?range=30d", "trends")

    # Recommendations: one row per resource, human units, today's releases only unless asked.
    visit(f"{base}/recommendations?range=30d", "recommendations", plots=False)
    rows = page.locator("#recommendations-table .rec-row")
    subjects = [rows.nth(i).get_attribute("data-subject") for i in range(rows.count())]
    assert subjects and len(subjects) == len(set(subjects)), subjects
    heroes = [s for s in subjects if re.search(r"/img/p\d-0\.png$", s or "")]
    assert len(heroes) == 8, heroes  # the 8 products' hero shots, once each
    text = page.locator("#recommendations-table").inner_text()
    assert not re.search(r"\de[+-]\d", text), text
    assert "MiB" in text and " ms" in text
    evidence = page.locator("#recommendations-table td.rec-evidence").first.inner_text()
    assert re.search(r"average size: [\d,.]+ (KiB|MiB|B)", evidence), evidence
    old = [s for s in subjects if re.search(r"\.1\.[0-3]\.0\.js$", s or "")]
    assert not old and page.locator("#old-hidden").count() == 1, old
    assert page.evaluate(BROKEN_WORDS, "#recommendations-table td.rec-text") == []
    page.click("#old-hidden a")
    page.wait_for_selector("#include-old:checked")
    assert page.locator("#recommendations-table .old-release").count() > 0
    visit(page.url, "recommendations-old", plots=False)
    assert page.evaluate(BROKEN_WORDS, "#recommendations-table td.rec-text") == []
    assert not errors, errors
