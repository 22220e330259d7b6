"""The SQL editor and the SQL widget in Chromium (1024 px), in the shared snapshot and in the PDF (issue 70
point 2): the documented tables are listed with their columns; a statement run with Ctrl+Enter answers the
organization's rows only, with the time it took; an engine error says where the parser stopped and a refused
function names itself, never a traceback; a value that looks like markup is shown as text; "Save as widget"
puts the statement on a dashboard, where the page, the share and the PDF show the same figures; a viewer
reads the page without the editor. Screenshots in tests/_artifacts/dashboards."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from typing import Any

from stacklens.control.db import session_scope
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import report_pdf
from stacklens.explore.dashboards import get_dashboard, list_dashboards
from stacklens.explore.widgets import answer_widgets
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic

SHOTS = shots_dir("dashboards")
BY_RELEASE = "SELECT release, count() AS page_loads\nFROM pageload_facts\nGROUP BY release\nORDER BY release"


def _loads_by_release(stores: Any, org_id: int) -> dict[str, int]:
    rows = get_warehouse(stores).query(
        "SELECT release, count() FROM pageload_facts WHERE org_id = {o:UInt64} GROUP BY release",
        parameters={"o": org_id},
    )
    return {str(r): int(n) for r, n in rows.result_rows}


def _run(page: Any, sql: str, kind: str = "table") -> None:
    page.fill("#sql-text", sql)
    page.select_option("#sql-kind", kind)
    page.focus("#sql-text")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")


def test_the_sql_editor_and_its_widget_on_the_page_share_and_pdf(
    chromium, server, org_factory, stores
) -> None:
    org, other = org_factory(), org_factory("Other", "Web Other")
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    land_demo_traffic(stores, other["org_id"], other["project_id"], per_day=5)
    expected = _loads_by_release(stores, org["org_id"])
    assert expected and _loads_by_release(stores, other["org_id"])
    slug = org["org_slug"]
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    page.on("dialog", lambda d: errors.append(f"dialog: {d.message}"))
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{slug}")
    page.goto(f"{server}/orgs/{slug}/sql")
    tables = page.eval_on_selector_all(".sql-table-doc", "els => els.map(e => e.dataset.table)")
    assert "pageload_facts" in tables and "events" in tables and "issues" in tables, tables
    page.click('.sql-table-doc[data-table="pageload_facts"] summary')
    assert "load_ms" in page.inner_text('.sql-table-doc[data-table="pageload_facts"]')

    # A statement with Ctrl+Enter: the organization's rows only, the time it took shown.
    _run(page, BY_RELEASE)
    rows = page.eval_on_selector_all(
        "#sql-table tbody tr", "trs => trs.map(tr => Array.from(tr.cells).map(td => td.textContent))"
    )
    assert {r: int(n) for r, n in rows} == expected, (rows, expected)
    took = page.inner_text("#sql-took")
    assert took.startswith("Took ") and " ms · " in took and "rows read" in took, took
    assert page.eval_on_selector_all("#sql-table thead th", "ths => ths.map(t => t.textContent)") == [
        "release",
        "page_loads",
    ]
    page.screenshot(path=str(SHOTS / "sql-editor-table-1024.png"), full_page=True)

    # Markup in a value is text; an error names where the parser stopped; a refused function names itself.
    _run(page, "SELECT '<img src=x onerror=alert(1)>' AS html")
    assert page.inner_text("#sql-table tbody td") == "<img src=x onerror=alert(1)>"
    assert page.locator("#sql-table img").count() == 0
    _run(page, "SELECT count(\nFROM pageload_facts WHERE")
    error = page.inner_text("#sql-error")
    assert "Syntax error" in error and "At line 2, column" in error and "Traceback" not in error, error
    page.screenshot(path=str(SHOTS / "sql-editor-error-1024.png"), full_page=True)
    _run(page, "SELECT * FROM file('/etc/passwd', 'LineAsString')")
    assert "file() reads files, the network or other servers" in page.inner_text("#sql-error")
    _run(page, "SELECT count() FROM pageload_facts WHERE org_id != " + str(org["org_id"]))  # noqa: S608
    assert page.inner_text("#sql-table tbody td") == "0"

    # As a chart, then saved as a widget on a new dashboard; a table of the same statement beside it.
    _run(page, BY_RELEASE, "bar")
    page.wait_for_selector("#plot-sql-chart .main-svg")
    drawn = page.evaluate("() => document.getElementById('plot-sql-chart').data[0]")
    assert dict(zip(drawn["x"], drawn["y"], strict=True)) == expected, drawn
    page.screenshot(path=str(SHOTS / "sql-editor-chart-1024.png"), full_page=True)
    page.fill("#sql-save input[name=title]", "Page loads by release (SQL)")
    page.select_option("#sql-save select[name=dashboard_id]", "")
    page.fill("#sql-save input[name=new_name]", "SQL board")
    with page.expect_navigation():
        page.click("#sql-save button[type=submit]")
    board_url = page.url
    _run_again = f"{server}/orgs/{slug}/sql"
    page.goto(_run_again)
    _run(page, BY_RELEASE, "table")
    page.fill("#sql-save input[name=title]", "Page loads by release (table)")
    page.select_option("#sql-save select[name=dashboard_id]", label="SQL board")
    with page.expect_navigation():
        page.click("#sql-save button[type=submit]")
    assert page.url == board_url
    page.wait_for_selector("#plot-widget-0 .main-svg")
    bar = page.evaluate("() => document.getElementById('plot-widget-0').data[0]")
    assert dict(zip(bar["x"], bar["y"], strict=True)) == expected, bar
    cells = page.eval_on_selector_all(
        "#widget-1 tbody tr", "trs => trs.map(tr => Array.from(tr.cells).map(td => td.textContent))"
    )
    assert {r: int(n) for r, n in cells} == expected, cells
    assert " ms · " in page.inner_text("#widget-1 .widget-took")
    assert page.evaluate("() => window.__csp") == []
    page.screenshot(path=str(SHOTS / "sql-dashboard-1024.png"), full_page=True)

    # The share shows the same figures.
    with session_scope(stores) as session:
        board = next(b for b in list_dashboards(session, org["org_id"]) if b.name == "SQL board")
        assert [w["sql"] for w in board.widgets] == [BY_RELEASE, BY_RELEASE]
        _, token = shares.create_share(session, org["org_id"], board.id, 7)
    page.context.clear_cookies()
    page.goto(f"{server}{shares.PATH.format(token=token)}")
    page.wait_for_selector("#plot-widget-0 .main-svg")
    shared_bar = page.evaluate("() => document.getElementById('plot-widget-0').data[0]")
    assert dict(zip(shared_bar["x"], shared_bar["y"], strict=True)) == expected
    shared_rows = page.eval_on_selector_all(
        "#widget-1 tbody tr", "trs => trs.map(tr => Array.from(tr.cells).map(td => td.textContent.trim()))"
    )
    assert {r: int(n) for r, n in shared_rows} == expected, shared_rows
    page.screenshot(path=str(SHOTS / "sql-share-1024.png"), full_page=True)

    # A viewer reads the page without the editor.
    viewer = add_member(stores, org, "viewer")
    sign_in_page(page, server, viewer, PASSWORD, f"{server}/orgs/{slug}")
    page.goto(f"{server}/orgs/{slug}/sql")
    assert page.locator("#sql-form").count() == 0 and "Viewers read dashboards" in page.inner_text(
        "#sql-viewer"
    )
    page.close()
    # The two statements that did not run answered 400 (the browser notes it); nothing else went wrong.
    assert [e for e in errors if "/sql: Failed to load resource" not in e or "400" not in e] == [], errors

    # The PDF: both widgets with the same figures.
    now = datetime.now(UTC)
    with session_scope(stores) as session:
        board = get_dashboard(session, org["org_id"], board.id)
        answers = answer_widgets(
            get_warehouse(stores), session, org["org_id"], board.widgets, board.filters, now
        )
    pdf = report_pdf.dashboard_pdf(
        "SQL board", "30d", answers, "http://x", now, lambda a: [a.widget["title"]]
    )
    path = SHOTS / "sql-board.pdf"
    path.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-png", "-r", "70", str(path), str(SHOTS / "sql-board-pdf")], check=True)
    text = " ".join(
        subprocess.run(
            ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout.split()
    )
    assert "Page loads by release (SQL)" in text and "Page loads by release (table)" in text, text
    for release, loads in expected.items():
        assert f"{release} {loads}" in text, (release, loads, text)
    assert "rows read" in text
