"""One dashboard, three faces, the same drawing (issue 70 point 1): the page (Chromium), its shared snapshot
(Chromium, signed out) and its scheduled PDF (built as a subscription builds it) draw a line widget of two
aggregates in two units — every aggregate, on two axes, over the whole window — with the same series names and
values; a crash-free change reads in points, toned by the metric's good direction, in the PDF's words too; a
compared table keeps Previous and Change in the PDF; a line cut at its top N draws the rest as "others"; an
area (filled to zero in the PDF as on the page, counted in the rendered page's pixels), a stacked bar, a
scatter, a gauge against its budget and a heat map draw the same values everywhere; a table taller than its
card scrolls inside it on the page and in the share; each widget downloads as a file named after it and the
window (point 7). Screenshots at 1440 and 1024 px, the PDF's pages as PNG in tests/_artifacts/dashboards."""

from __future__ import annotations

import base64
import subprocess
from datetime import UTC, datetime
from typing import Any

from PIL import Image

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import report_kind_layout, report_kinds, report_pdf
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.report_charts import plot_chart
from stacklens.explore.reports import build_report
from stacklens.explore.subscriptions import create_subscription
from stacklens.explore.widget_kinds import GaugeBudget
from stacklens.explore.widget_plot import WidgetPlot
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
    {
        "title": "Page loads (area)",
        "kind": "area",
        "query": {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "interval": "1d"},
        "layout": {"x": 0, "y": 6, "w": 6, "h": 2},
    },
    {
        "title": "Page loads by browser (stacked)",
        "kind": "stacked_bar",
        "query": {
            "dataset": "pageloads",
            "group_by": ["browser"],
            "aggregates": [{"fn": "count"}],
            "interval": "1d",
        },
        "layout": {"x": 6, "y": 6, "w": 6, "h": 2},
    },
    {
        "title": "Pages: traffic against LCP",
        "kind": "scatter",
        "query": {
            "dataset": "pageloads",
            "group_by": ["page"],
            "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "lcp_ms"}],
        },
        "layout": {"x": 0, "y": 8, "w": 6, "h": 2},
    },
    {
        "title": "LCP against its budget",
        "kind": "gauge",
        "view": "performance.lcp",
        "layout": {"x": 6, "y": 8, "w": 6, "h": 2},
    },
    {
        "title": "LCP distribution",
        "kind": "heatmap",
        "query": {
            "dataset": "pageloads",
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
            "interval": "1d",
        },
        "layout": {"x": 0, "y": 10, "w": 12, "h": 2},
    },
]
COMPARED = {
    "title": "Crash-free sessions against the previous 30 days",
    "kind": "line",
    "query": {
        "dataset": "sessions",
        "aggregates": [{"fn": "avg", "metric": "crash_free_sessions"}],
        "interval": "1d",
        "compare": {"previous_period": True},
    },
    "layout": {"x": 0, "y": 12, "w": 12, "h": 2},
}
WIDGETS.append(COMPARED)
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
  kinds: [4, 5, 6, 7, 8].map(i => document.getElementById('plot-widget-' + i).data.map(t => ({
    type: t.type, name: t.name, x: t.x, y: t.y, z: t.z, text: t.text, fill: t.fill, value: t.value,
    threshold: t.gauge && t.gauge.threshold.value}))),
  barmode: document.getElementById('plot-widget-5').layout.barmode,
  compared: document.getElementById('plot-widget-9').data.map(t => ({name: t.name, y: t.y, x: t.x,
    dash: t.line && t.line.dash})),
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
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own), CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
        page.goto(f"{server}/orgs/{org['org_slug']}/dashboards/{board.id}")
        page.wait_for_selector("#plot-widget-8 .main-svg")
        faces[f"page-{width}"] = page.evaluate(READ)
        page.screenshot(path=str(SHOTS / f"faces-page-{width}.png"), full_page=True)
        if width == 1440:
            with page.expect_download() as download:
                page.click("#widget-2 .widget-download")
            assert download.value.suggested_filename == "lcp-p75-and-page-loads-by-release-30d.csv"
            assert "release" in download.value.path().read_text().splitlines()[0]
        page.context.clear_cookies()
        page.goto(f"{server}{shares.PATH.format(token=token)}")
        page.wait_for_selector("#plot-widget-8 .main-svg")
        faces[f"share-{width}"] = page.evaluate(READ)
        page.screenshot(path=str(SHOTS / f"faces-share-{width}.png"), full_page=True)
    page.close()
    assert errors == []
    # The scheduled PDF, as a subscription builds it; every plot it draws kept to compare with the page's.
    drawn: list[WidgetPlot] = []
    monkeypatch.setattr(
        report_pdf,
        "plot_chart",
        lambda pdf, x, y, w, h, title, plot, bars, draw=plot_chart: (
            drawn.append(plot),
            draw(pdf, x, y, w, h, title, plot, bars),
        ),
    )
    kinds: dict[str, WidgetPlot] = {}
    for kind, draw in list(report_kind_layout.DRAW.items()):
        monkeypatch.setitem(
            report_kind_layout.DRAW,
            kind,
            lambda pdf, x, y, w, h, title, plot, kind=kind, draw=draw: (
                kinds.__setitem__(kind, plot),
                draw(pdf, x, y, w, h, title, plot),
            ),
        )
    gauges: list[tuple[float, GaugeBudget]] = []
    monkeypatch.setattr(
        report_kind_layout,
        "gauge_chart",
        lambda pdf, x, y, w, h, title, value, text, budget, draw=report_kinds.gauge_chart: (
            gauges.append((value, budget)),
            draw(pdf, x, y, w, h, title, value, text, budget),
        ),
    )
    now = datetime.now(UTC)
    with session_scope(stores) as session:
        channel, _ = create_channel(
            session, org["org_id"], stores, type="email", name="team", to=["t@x.test"]
        )
        schedule = {"every": "day", "at": "08:00", "timezone": "UTC"}
        body = {"target": {"dashboard_id": board.id}, "schedule": schedule, "format": "pdf"}
        row = create_subscription(session, org["org_id"], {**body, "channel_id": channel.id}, now=now)
        report = build_report(get_warehouse(stores), session, row, "http://x", now)
    pdf = base64.b64decode(report["attachments"][0]["base64"])
    path = SHOTS / "faces.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    for old in SHOTS.glob("faces-pdf-*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "70", str(path), str(SHOTS / "faces-pdf")], check=True)
    plot, top, compared = drawn
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
    # The kinds beyond lines: the same lines, stacks, points, cells and value on every face and in the PDF.
    area, stacked, scatter, heat = (kinds[k] for k in ("area", "stacked_bar", "scatter", "heatmap"))
    (value, budget), *more = gauges
    assert not more and budget.value == 2500, gauges
    for name, face in faces.items():
        traces = face["kinds"]
        for trace, line in zip(traces[0], area.lines, strict=True):  # areas filled to zero
            assert (trace["name"], trace["fill"]) == (line.name, "tozeroy"), (name, trace)
            assert _inner(trace["y"]) == _inner(line.values), (name, line.name)
        assert face["barmode"] == "stack" and len(stacked.lines) >= 2, (name, stacked.lines)
        for trace, line in zip(traces[1], stacked.lines, strict=True):
            assert trace["name"] == line.name and _inner(trace["y"]) == _inner(line.values), (name, line)
        assert traces[2][0]["text"] == scatter.x and len(scatter.x) >= 2, (name, scatter.x)
        assert traces[2][0]["x"] == scatter.lines[0].values, name  # across: Count
        assert traces[2][0]["y"] == scatter.lines[1].values, name  # up: LCP p75
        assert traces[3][0]["type"] == "indicator" and traces[3][0]["value"] == value, (name, value)
        assert traces[3][0]["threshold"] == budget.value, name
        assert traces[4][0]["y"] == [line.name for line in heat.lines], name
        for row, line in zip(traces[4][0]["z"], heat.lines, strict=True):
            assert _inner(row) == _inner(line.values), (name, line.name)
    words = " ".join(text.split())
    assert "across: Count | up: LCP p75 (ms)" in words and "within budget" in words, words
    # The area is filled in the PDF too: its line's colour at half opacity over white, over many pixels
    # (a line alone, anti-aliased, makes a few hundred at most).
    filled = 0
    for png in SHOTS.glob("faces-pdf-*.png"):
        with Image.open(png) as image:
            data = image.convert("RGB").tobytes()
            pixels = zip(data[0::3], data[1::3], data[2::3], strict=True)
            filled += sum(1 for r, g, b in pixels if abs(r - 177) <= 8 and abs(g - 182) <= 8 and b >= 244)
    assert filled > 5_000, filled
    # A number's change in the PDF's words is the page's: points of a percentage, not per cent.
    change = faces["page-1440"]["change"].split()[1]
    assert f"{change} pp" in words, (change, words)
    # A line with "compare" overlays its previous window, dotted, shifted onto this one: on every face and
    # in the PDF, the same values in the same buckets.
    assert [line.name for line in compared.previous] == ["Crash-free sessions (%) (previous period)"]
    assert sum(v is not None for v in compared.previous[0].values) >= 10, compared.previous
    for name, face in faces.items():
        now_line, before = face["compared"]
        assert before["name"] == compared.previous[0].name and before["dash"] == "dot", (name, before)
        assert now_line["dash"] != "dot" and _inner(now_line["y"]) == _inner(compared.lines[0].values), name
        assert [x.replace("Z", "") for x in before["x"]] == [x.replace("Z", "") for x in compared.x], name
        assert _inner(before["y"]) == _inner(compared.previous[0].values), name
    assert "Crash-free sessions (%) (previous period)" in words, words
