"""A SQL widget in the dashboard's PDF: a table with every column and the time it took, a bar chart of the
plot the page draws, a number as its first cell (read back with pdftotext); and in the CSV report, its rows
beside the other widgets', every text cell neutralised against spreadsheet formulas."""

from __future__ import annotations

import csv
import io
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.report_pdf import dashboard_pdf
from stacklens.explore.reports import CSV_COLUMNS, build_report
from stacklens.explore.run import Result
from stacklens.explore.subscriptions import create_subscription
from stacklens.explore.widgets import WidgetAnswer
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed


def _answer(title: str, kind: str, columns: list[str], rows: list[list[Any]]) -> WidgetAnswer:
    result = Result(columns, [dict(zip(columns, r, strict=True)) for r in rows], [], 4_321, 12.5)
    return WidgetAnswer(0, {"title": title, "kind": kind, "sql": "SELECT …"}, result=result)


def test_sql_widgets_in_the_pdf(tmp_path: Path) -> None:
    rows = [["shop@1.0.0", 180], ["shop@1.1.0", 144]]
    answers = [
        _answer("Loads table", "table", ["release", "page_loads"], rows),
        _answer("Loads bars", "bar", ["release", "page_loads"], rows),
        _answer("Total loads", "number", ["page_loads"], [[324]]),
    ]
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    pdf = dashboard_pdf("SQL board", "30d", answers, "http://x", now, lambda a: [a.widget["title"]])
    path = tmp_path / "sql.pdf"
    path.write_bytes(pdf)
    text = " ".join(
        subprocess.run(
            ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout.split()
    )
    assert "Loads table" in text and "release page_loads" in text and "shop@1.0.0 180" in text, text
    assert "SQL - 12.5 ms - 4,321 rows read" in text, text
    assert "Loads bars" in text and "shop@1.1.0" in text, text
    assert "Total loads: 324" in text, text


def test_the_csv_report_holds_sql_widgets_with_neutralised_cells(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    org = int(acme["org_id"])
    client = migrated(settings)
    seed(client, org, int(acme["project_id"]), loads=60)
    widgets = [
        {
            "title": "Loads",
            "kind": "number",
            "sql": "SELECT count() AS loads FROM pageload_facts"
            " WHERE ts >= {since:DateTime} AND ts < {until:DateTime}",
        },
        {
            "title": "=Loads by release",
            "kind": "table",
            "sql": "SELECT release, '=1+1' AS note, count() AS loads, round(avg(lcp)) AS lcp_avg"
            " FROM pageload_facts WHERE ts >= {since:DateTime} AND ts < {until:DateTime}"
            " GROUP BY release ORDER BY release",
        },
        {"title": "Link", "kind": "table", "sql": "SELECT '=HYPERLINK(\"https://evil.example\")' AS link"},
        {
            "title": "LCP p75",
            "kind": "number",
            "query": {"dataset": "pageloads", "aggregates": [{"fn": "count"}]},
        },
    ]
    with session_scope(settings) as session:
        board = create_dashboard(
            session, org, {"name": "SQL", "filters": {"range": "30d"}, "widgets": widgets}
        )
        channel, _ = create_channel(session, org, settings, type="email", name="team", to=["team@acme.test"])
        body = {
            "target": {"dashboard_id": board.id},
            "schedule": {"every": "day", "at": "08:00", "timezone": "UTC"},
            "format": "csv",
            "channel_id": channel.id,
        }
        row = create_subscription(session, org, body, now=NOW)
        report = build_report(client, session, row, "http://sl.test", NOW)
    lines = list(csv.DictReader(io.StringIO(report["text"])))
    assert tuple(lines[0]) == CSV_COLUMNS
    loads = [r for r in lines if r["widget"] == "Loads"]
    assert [(r["group"], r["column"], r["value"], r["previous"]) for r in loads] == [("", "loads", "60", "")]
    table = [r for r in lines if r["widget"] == "'=Loads by release"]
    assert {r["column"] for r in table} == {"loads", "lcp_avg"} and sum(
        int(r["value"]) for r in table if r["column"] == "loads"
    ) == 60
    assert all(r["group"].startswith("release=") for r in table), table
    assert all(", note==1+1" in r["group"] for r in table), table
    link = [(r["column"], r["value"]) for r in lines if r["widget"] == "Link"]
    assert link == [("link", '\'=HYPERLINK("https://evil.example")')], link
    assert [r["value"] for r in lines if r["widget"] == "LCP p75"] == ["60"]  # the other widgets still there
