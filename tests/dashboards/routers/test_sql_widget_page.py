"""A dashboard's SQL widgets as pages show them (issue 70): a ``$name`` variable in the statement follows the
variable chosen in the URL (``var-<name>=``), a SQL table's numbers are right-aligned as other tables'
numbers, and the shared snapshot's SQL number says nothing about a previous period (a statement has none).
The SQL editor states the budgets its statements run under (the ones the guard applies) and says the time
a statement took once, not again in its chart's caption."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from stacklens.control.db import session_scope
from stacklens.explore import dashboard_shares as shares
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.sql_panel import budget_words
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import csrf_of, sign_in
from tests.stacklens.performance.perf_seed import seed

LOADS = (
    "SELECT count() AS loads FROM pageload_facts"
    " WHERE ts >= {since:DateTime} AND ts < {until:DateTime} AND ($rel = '' OR release = $rel)"
)
BY_RELEASE = (
    "SELECT release, count() AS loads FROM pageload_facts"
    " WHERE ts >= {since:DateTime} AND ts < {until:DateTime} AND ($rel = '' OR release = $rel)"
    " GROUP BY release ORDER BY release"
)


def _section(html: str, index: int) -> str:
    found = re.search(rf'<section[^>]*id="widget-{index}".*?</section>', html, re.S)
    assert found, html
    return found.group(0)


def _number(html: str) -> str:
    found = re.search(r'class="widget-number"[^>]*>([^<]*)<', _section(html, 0))
    assert found, _section(html, 0)
    return found.group(1).strip()


def test_a_sql_widget_follows_the_variable_in_the_url(
    app_client: TestClient, org_factory, stores: Settings
) -> None:
    org = org_factory()
    warehouse = get_warehouse(stores)
    seed(warehouse, org["org_id"], org["project_id"], loads=60)
    per_release = dict(
        warehouse.query(
            "SELECT release, count() FROM pageload_facts WHERE org_id = {o:UInt64} GROUP BY release",
            parameters={"o": org["org_id"]},
        ).result_rows
    )
    assert len(per_release) >= 2 and sum(per_release.values()) == 60, per_release
    releases = sorted(per_release)
    body: dict[str, Any] = {
        "name": "SQL and variables",
        "filters": {"range": "90d", "environment": "", "release": "", "project": ""},
        "variables": [{"name": "rel", "values": releases, "default": ""}],
        "widgets": [
            {"title": "Loads (SQL)", "kind": "number", "sql": LOADS, "layout": {"x": 0, "y": 0, "w": 4, "h": 1}},
            {"title": "By release (SQL)", "kind": "table", "sql": BY_RELEASE, "layout": {"x": 4, "y": 0, "w": 8, "h": 2}},
        ],
    }  # fmt: skip
    with session_scope(stores) as session:
        board = create_dashboard(session, org["org_id"], body)
        _, token = shares.create_share(session, org["org_id"], board.id, 7)
    sign_in(app_client, org["email"])
    path = f"/orgs/{org['org_slug']}/dashboards/{board.id}"

    # Every release, then each one chosen in the URL: the number and the table follow it.
    page = app_client.get(path)
    assert page.status_code == 200, page.text
    assert _number(page.text) == "60"
    for release in releases:
        chosen = app_client.get(path, params={"var-rel": release})
        assert chosen.status_code == 200
        assert _number(chosen.text) == str(per_release[release]), release
        cells = re.findall(r'data-column="release">([^<]*)<', _section(chosen.text, 1))
        assert cells == [release], cells

    # Each panel downloads its answer as the page shows it, under the URL's variable, named after it and the
    # window; a widget that is not a SQL panel, or another organization's dashboard, answers none.
    first_chosen = app_client.get(path, params={"var-rel": releases[0]}).text
    link = re.search(r'href="([^"]*/widgets/1/download\.csv[^"]*)"', _section(first_chosen, 1))
    assert link is not None, _section(first_chosen, 1)
    csv_file = app_client.get(link.group(1).replace("&amp;", "&"))
    assert csv_file.status_code == 200, csv_file.text
    assert csv_file.headers["content-disposition"] == 'attachment; filename="by-release-sql-90d.csv"'
    assert csv_file.text.splitlines() == ["release,loads", f"{releases[0]},{per_release[releases[0]]}"]
    every = app_client.get(f"{path}/widgets/1/download.csv").text.splitlines()
    assert every[1:] == [f"{r},{per_release[r]}" for r in releases], every
    assert app_client.get(f"{path}/widgets/5/download.csv").status_code == 400
    other = org_factory("Other")
    theirs = f"/orgs/{other['org_slug']}/dashboards/{board.id}/widgets/1/download.csv"
    assert app_client.get(theirs).status_code in (403, 404)

    # The table's numbers are right-aligned like other tables' numbers; its labels are not.
    table = _section(page.text, 1)
    assert '<th class="">release</th>' in table and '<th class="num">loads</th>' in table, table
    assert re.findall(r'<td class="([^"]*)" data-column="loads">', table) == ["num"] * len(releases)
    assert 'class="" data-column="release"' in table

    # The share: the same number, and nothing said about a previous period.
    app_client.cookies.clear()
    shared = app_client.get(shares.PATH.format(token=token))
    assert shared.status_code == 200, shared.text
    assert _number(shared.text) == "60"
    number = _section(shared.text, 0)
    assert "compare" not in number and "previous" not in number and "widget-change" not in number, number
    assert re.findall(r'<td class="num">(\d+)</td>', _section(shared.text, 1)) == [
        str(per_release[r]) for r in releases
    ]


def test_the_sql_editor_states_its_budgets_and_says_the_time_once(
    app_client: TestClient, org_factory, stores: Settings
) -> None:
    org = org_factory()
    seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=20)
    sign_in(app_client, org["email"])
    path = f"/orgs/{org['org_slug']}/sql"
    editor = app_client.get(path)
    assert editor.status_code == 200
    budgets = re.search(r'<span id="sql-budgets">([^<]*)</span>', editor.text)
    assert budgets and budgets.group(1) == budget_words(), editor.text
    assert "rows read per statement, 10,000 rows answered" in budgets.group(1)
    form = {
        "csrf_token": csrf_of(editor.text),
        "sql": "SELECT release, count() AS loads FROM pageload_facts GROUP BY release ORDER BY release",
        "kind": "bar",
        "range": "30d",
    }
    ran = app_client.post(path, data=form)
    assert ran.status_code == 200, ran.text
    assert 'id="plot-sql-chart"' in ran.text or "sql-chart" in ran.text
    assert ran.text.count("rows read") == 1 + ran.text.count("rows read per statement"), ran.text
    took = re.search(r'<p class="muted small" id="sql-took">([^<]*)</p>', ran.text)
    assert took and " ms · " in took.group(1) and "rows read" in took.group(1)


REFUSED = {
    "Drop (SQL)": ("DROP TABLE pageload_facts", "only read-only statements run here"),
    "Passwords (SQL)": ("SELECT * FROM file('/etc/passwd', 'LineAsString')", "file()"),
    "Network (SQL)": ("SELECT * FROM url('http://127.0.0.1:9/x', 'CSV')", "url()"),
    "Internals (SQL)": ("SELECT count() FROM system.tables", "is not a table this SQL reads"),
}


def test_a_refused_sql_panel_says_why_and_its_neighbours_answer(
    app_client: TestClient, org_factory, stores: Settings
) -> None:
    """A SQL widget that writes, reads a file or the network or an undocumented table is kept as text (it is
    judged whenever it runs) and refused before it runs: the page and the share say why on the widget, never a
    500; the warehouse is untouched and the widget beside it answers."""
    org = org_factory()
    seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=30)
    widgets = [{"title": "Loads (SQL)", "kind": "number", "sql": LOADS, "layout": {"w": 4, "h": 1}}]
    widgets += [
        {"title": t, "kind": "table", "sql": s, "layout": {"w": 6, "h": 1}} for t, (s, _) in REFUSED.items()
    ]
    body = {"name": "Refused", "filters": {"range": "90d"}, "variables": [{"name": "rel", "values": ["x"]}]}
    with session_scope(stores) as session:
        board = create_dashboard(session, org["org_id"], {**body, "widgets": widgets})
        _, token = shares.create_share(session, org["org_id"], board.id, 7)
    sign_in(app_client, org["email"])
    page = app_client.get(f"/orgs/{org['org_slug']}/dashboards/{board.id}")
    app_client.cookies.clear()
    shared = app_client.get(shares.PATH.format(token=token))
    for face in (page, shared):
        assert face.status_code == 200, face.text
        assert _number(face.text) == "30"  # the statement beside them answers
        for index, (title, (_, reason)) in enumerate(REFUSED.items(), 1):
            section = _section(face.text, index)
            assert title in section and reason.replace("'", "&#39;") in section, (title, section)
            assert "Traceback" not in section and "<td" not in section, section
    count = get_warehouse(stores).query(
        "SELECT count() FROM pageload_facts WHERE org_id = {o:UInt64}", parameters={"o": org["org_id"]}
    )
    assert count.result_rows == [(30,)]
