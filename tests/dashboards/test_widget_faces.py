"""One dashboard, three faces, the same drawing (issue 70 point 1): the page (Chromium), its shared snapshot
(Chromium, signed out) and its scheduled PDF draw a line widget of two aggregates in two units — every
aggregate, on two axes, over the whole window — with the same series names and values; a crash-free change
reads in points, toned by the metric's good direction; a compared table keeps Previous and Change in the
PDF; a table taller than its card scrolls inside it on the page and in the share; each widget downloads as
a file named after it and the window (point 7). Screenshots at 1440 and 1024 px in
tests/_artifacts/dashboards."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from typing import Any

from stacklens.control.db import session_scope
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import report_pdf
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.report_charts import plot_chart
from stacklens.explore.widget_cache import widget_cache_for
from stacklens.explore.widget_plot import WidgetPlot
from stacklens.explore.widgets import answer_widgets
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic
from tests.demo import demo_sessions

SHOTS = shots_dir("dashboards")
LINE = "LCP p75 and page loads by release"
WIDGETS: list[dict[str, Any]] = [
    {
        "title": "Crash-free sessions",
        "kind": "number",
        "view": "releases.crash_free_sessions",
        "layout": {"x": 0, "y": 0, "w": 4, "h": 1},
    },
    {
        "title": "Pages against the previous window",
        "kind": "table",
        "query": {
            "dataset": "pageloads",
            "group_by": ["page", "browser"],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
            "compare": {"previous_period": True},
        },
        "layout": {"x": 4, "y": 0, "w": 8, "h": 1},
    },
    {
        "title": LINE,
        "kind": "line",
        "query": {
            "dataset": "pageloads",
            "group_by": ["release"],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count"}],
            "interval": "1d",
        },
        "layout": {"x": 0, "y": 1, "w": 12, "h": 3},
    },
    {
        "title": "Page loads of the top 2 releases",
        "kind": "line",
        "query": {
            "dataset": "pageloads",
            "group_by": ["release"],
            "aggregates": [{"fn": "count"}],
            "interval": "1d",
            "order_by": "-count",
            "limit": 2,
        },
        "layout": {"x": 0, "y": 4, "w": 12, "h": 2},
    },
]
READ = """() => ({
  traces: document.getElementById('plot-widget-2').data.map(t => ({name: t.name, y: t.y, axis: t.yaxis})),
  axes: [document.getElementById('plot-widget-2').layout.yaxis.title.text,
         document.getElementById('plot-widget-2').layout.yaxis2.title.text],
  x: document.getElementById('plot-widget-2').data[0].x,
  change: document.querySelector('#widget-0 .widget-change .change')?.textContent.trim(),
  tone: document.querySelector('#widget-0 .widget-change .change')?.dataset.tone,
  table: (() => { const s = document.querySelector('#widget-1 .scroll');
    return {scrolls: s.scrollHeight > s.clientHeight, style: getComputedStyle(s).overflowY,
            inside: s.getBoundingClientRect().bottom <= document.getElementById('widget-1').getBoundingClientRect().bottom + 1}; })(),
  headers: Array.from(document.querySelectorAll('#widget-1 th')).map(h => h.textContent),
  top: document.getElementById('plot-widget-3').data.map(t => ({name: t.name, y: t.y})),
  csp: window.__csp,
})"""


def _inner(values: list[Any]) -> list[Any]:
    # The first and last day are partial: a minute between two faces may move a page load in or out.
    return values[1:-1]


def test_page_share_and_pdf_draw_the_same_widget(chromium, server, org_factory, stores, monkeypatch) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    demo_sessions.land(get_warehouse(stores), org["org_id"], org["project_id"], days=45)  # and the 30d before
    with session_scope(stores) as session:
        board = create_dashboard(
            session, org["org_id"], {"name": "Faces", "filters": {"range": "30d"}, "widgets": WIDGETS}
        )
        _, token = shares.create_share(session, org["org_id"], board.id, 7)
    errors: list[str] = []
    faces: dict[str, dict[str, Any]] = {}
    for width in (1440, 1024):
        page = chromium.new_page(viewport={"width": width, "height": 900})
        page.add_init_script(CSP_PROBE)
        watch_errors(page, errors, with_url=True)
        sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
        page.goto(f"{server}/orgs/{org['org_slug']}/dashboards/{board.id}")
        page.wait_for_selector("#plot-widget-2 .main-svg")
        faces[f"page-{width}"] = page.evaluate(READ)
        page.screenshot(path=str(SHOTS / f"faces-page-{width}.png"), full_page=True)
        if width == 1440:
            with page.expect_download() as download:
                page.click("#widget-2 .widget-download")
            assert download.value.suggested_filename == "lcp-p75-and-page-loads-by-release-30d.csv"
            assert "release" in download.value.path().read_text().splitlines()[0]
        page.context.clear_cookies()
        page.goto(f"{server}{shares.PATH.format(token=token)}")
        page.wait_for_selector("#plot-widget-2 .main-svg")
        faces[f"share-{width}"] = page.evaluate(READ)
        page.screenshot(path=str(SHOTS / f"faces-share-{width}.png"), full_page=True)
        page.close()
    assert errors == []
    drawn: list[WidgetPlot] = []
    monkeypatch.setattr(
        report_pdf,
        "plot_chart",
        lambda pdf, x, y, w, h, title, plot, bars, draw=plot_chart: (
            drawn.append(plot),
            draw(pdf, x, y, w, h, title, plot, bars),
        ),
    )
    now = datetime.now(UTC)
    with session_scope(stores) as session:
        answers = answer_widgets(
            get_warehouse(stores),
            session,
            org["org_id"],
            WIDGETS,
            {"range": "30d"},
            now,
            widget_cache_for(stores),
        )
    pdf = report_pdf.dashboard_pdf("Faces", "30d", answers, "http://x", now, lambda a: [a.widget["title"]])
    path = SHOTS / "faces.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    subprocess.run(["pdftoppm", "-png", "-r", "70", str(path), str(SHOTS / "faces-pdf")], check=True)
    plot, top = drawn
    page = faces["page-1440"]
    names = [t["name"] for t in page["traces"]]
    # Every aggregate, per release: LCP on the left axis, the count on the right.
    assert len(names) >= 4 and {n.split(" · ")[0] for n in names} == {"LCP p75 (ms)", "Count"}, names
    assert {t["axis"] for t in page["traces"]} == {"y", "y2"} and page["axes"] == ["LCP p75 (ms)", "Count"]
    assert 30 <= len(page["x"]) <= 31, page["x"]  # the whole 30 days, though the traffic spans 21
    for name, face in faces.items():
        assert face["csp"] == [], name
        assert [t["name"] for t in face["traces"]] == names, name
        for trace, mine in zip(face["traces"], page["traces"], strict=True):
            assert _inner(trace["y"]) == _inner(mine["y"]), (name, trace["name"])
        assert face["table"] == {"scrolls": True, "style": "auto", "inside": True}, (name, face["table"])
        # A crash-free share changes by points, coloured by its direction (higher is better).
        assert face["change"] and " pp" in face["change"] and "%" not in face["change"], (
            name,
            face["change"],
        )
        sign = face["change"].split()[1][0]
        assert face["tone"] == {"+": "good", "-": "bad"}.get(sign, "neutral"), (name, face["change"])
    assert page["headers"] == ["page", "browser", "LCP p75 (ms)", "Previous", "Change", "Samples"]
    # The PDF draws the same lines over the same days, named alike in its legend.
    assert [line.name for line in plot.lines] == names
    assert [x.replace("Z", "") for x in plot.x] == [x.replace("Z", "") for x in page["x"]]
    for line, mine in zip(plot.lines, page["traces"], strict=True):
        assert _inner(line.values) == _inner(mine["y"]), line.name
        assert line.name in text, (line.name, text)
    assert "Previous" in text and "Change" in text, text  # the compared table keeps its columns
    # A line cut at its top 2 releases draws the rest as one line, "others", on every face.
    names = [t["name"] for t in page["top"]]
    assert len(names) == 3 and names[-1] == "others", names
    assert [line.name for line in top.lines] == names
    for name, face in faces.items():
        assert [t["name"] for t in face["top"]] == names, name
        assert _inner(face["top"][-1]["y"]) == _inner(top.lines[-1].values), name
    assert any(v for v in top.lines[-1].values), top.lines[-1]
    assert "named 'others'" in " ".join(text.split()), text
