"""The downloads of the performance pages through the real app, chdb and SQLite: on every page the download
links carry the page's filters; the CSV of each table, the JSON and the page's HTML table agree value for
value (and with the JSON API where the API has the table); the PDF report comes from the dashboard and the
API; bad input answers 400 naming the field and another organization's project answers 404."""

from __future__ import annotations

import csv
import io
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from stacklens.json_values import plain
from stacklens.metrics.formatting import format_value
from stacklens.performance.exports.tables import VIEW_TABLES, csv_column, table
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.dashboards.html_tables import Cell, read_page
from tests.module_stores import app_client_fixture, store_fixtures
from tests.stacklens.performance.perf_seed import NOW, seed

WINDOW = {
    "since": "2026-11-06T12:00:00Z",
    "until": NOW.isoformat().replace("+00:00", "Z"),
    "environment": "production",
}
ENDPOINT = {"source": "client", "method": "GET", "path": "/api/items/{id}"}
# page, URL suffix, detail parameters, {table: HTML table id}, the API view (None: no API view)
CASES: list[tuple[str, str, dict[str, str], dict[str, str], str | None]] = [
    ("overview", "", {}, {"opportunities": "opportunities"}, "overview"),
    ("pages", "/pages", {}, {"pages": "pages-table"}, "pages"),
    ("page_detail", "/pages/detail", {"page": "/checkout"}, {"weeks": "weeks", "samples": "samples"}, None),
    (
        "resources",
        "/resources",
        {},
        {"types": "types", "blocking": "blocking", "largest": "largest"},
        "resources",
    ),
    ("endpoints", "/api", {"sort": "p95_ms"}, {"endpoints": "endpoints-table"}, "endpoints"),
    ("endpoint_detail", "/api/detail", ENDPOINT, {"days": "endpoint-days", "slowest": "slowest"}, None),
    ("trends", "/trends", {}, {"weekly": "weekly", "pages": "weekly-pages"}, "trends"),
    ("releases", "/releases", {}, {"releases": "releases-table"}, "releases"),
    (
        "recommendations",
        "/recommendations",
        {},
        {"recommendations": "recommendations-table"},
        "recommendations",
    ),
]
# (page, table) → the key of the API answer holding the same rows
API_KEYS = {
    ("overview", "vitals"): "rows",
    ("overview", "opportunities"): "opportunities",
    ("pages", "pages"): "rows",
    ("resources", "types"): "rows",
    ("endpoints", "endpoints"): "rows",
    ("trends", "weekly"): "rows",
    ("trends", "pages"): "pages",
    ("releases", "releases"): "rows",
    ("recommendations", "recommendations"): "rows",
}


# The tests only read: one app over stores of the module's own (tests/module_stores.py) and two seeded
# organizations, signed in as the first, not made again for each test.
stores, org_factory = store_fixtures("performance-exports")

client = app_client_fixture()


@pytest.fixture(scope="module")
def seeded(client, org_factory, stores):
    org = org_factory()
    other = org_factory("Other", project="Other App")
    seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=240, facts=False)
    seed(get_warehouse(stores), other["org_id"], other["project_id"], loads=40, seed=9)
    sign_in(client, org["email"])
    return org, other


def _base(org: dict[str, Any]) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/performance"


def _same(csv_cell: str, value: Any) -> bool:
    if value is None:
        return csv_cell == ""
    if isinstance(value, bool):
        return csv_cell == str(value).lower()
    if isinstance(value, int | float):
        return float(csv_cell) == float(value)
    if isinstance(value, list | dict):
        return json.loads(csv_cell) == value
    return csv_cell == value


def _html_agrees(table: str, cells: list[list[Cell]], rows: list[dict[str, Any]]) -> None:
    if not rows:  # the page shows one "nothing here" row
        assert all(len(r) == 1 for r in cells), table
        return
    assert len(cells) == len(rows), (table, len(cells), len(rows))
    for html_row, row in zip(cells, rows, strict=True):
        numbers = {float(v) for v in row.values() if isinstance(v, int | float) and not isinstance(v, bool)}
        shown = [n for cell in html_row for n in cell.numbers]
        assert shown or table == "recommendations-table", (table, html_row)
        assert set(shown) <= numbers, (table, shown, row)
        first = next(iter(row.values()))
        if isinstance(first, str) and "T" not in first:
            assert first in html_row[0].text or first in html_row[1].text, (table, first, html_row[0].text)


def test_every_page_csv_json_html_and_api_agree(client, seeded) -> None:
    org, _ = seeded
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    for page, suffix, detail, html_ids, api_view in CASES:
        response = client.get(_base(org) + suffix, params={**WINDOW, **detail})
        assert response.status_code == 200, (page, response.text[:300])
        tables, links = read_page(response.text)
        kinds = [link["class"].split()[-1] for link in links]
        assert kinds.count("download-csv") >= 1 and "download-json" in kinds and "download-pdf" in kinds, page
        for link in links:  # every link keeps the page's filters and detail parameters
            query = {k: v[0] for k, v in parse_qs(urlsplit(link["href"]).query).items()}
            assert {k: query.get(k) for k in WINDOW} == WINDOW, link
            if "pdf" not in link["class"]:
                assert {k: query.get(k) for k in detail} == detail, link
        json_link = next(link["href"] for link in links if "download-json" in link["class"])
        document = client.get(json_link)
        assert document.status_code == 200 and "attachment" in document.headers["content-disposition"]
        body = document.json()
        assert body["filters"]["environment"] == "production" and body["page"] == page
        api = None
        if api_view:
            api = client.get(
                f"/api/projects/{org['project']}/performance/{api_view}",
                params={**WINDOW, **detail},
                headers=headers,
            ).json()
        for link in (link for link in links if "download-csv" in link["class"]):
            name = parse_qs(urlsplit(link["href"]).query)["table"][0]
            answer = client.get(link["href"])
            assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
            parsed = list(csv.DictReader(io.StringIO(answer.text)))
            rows = body["tables"][name]
            assert rows or name == "blocking", (page, name)
            assert len(parsed) == len(rows), (page, name)
            for csv_row, row in zip(parsed, rows, strict=True):
                assert list(csv_row) == [csv_column(key) for key in row], (page, name)
                for key, value in row.items():
                    cell = csv_row[csv_column(key)]
                    assert _same(cell, value), (page, name, key, cell, value)
            if name in html_ids:
                _html_agrees(html_ids[name], tables[html_ids[name]], rows)
            if api is not None and (page, name) in API_KEYS:
                api_rows = api[API_KEYS[(page, name)]]
                assert [{k: r.get(k) for k in row} for r in api_rows] == rows, (page, name)
            if api is not None and name in ("largest", "blocking"):
                by_resource = {r["resource"]: r for r in api["resources"]}
                assert all(row == {k: by_resource[row["resource"]][k] for k in row} for row in rows)
    overview = client.get(_base(org), params=WINDOW).text
    vitals = client.get(_base(org) + "/export/overview.json", params=WINDOW).json()["tables"]["vitals"]
    for row in vitals:
        assert f'data-value="{row["value"]}"' in overview and f'data-samples="{row["samples"]}"' in overview


def test_one_csv_per_view_the_page_download_and_the_api_are_the_same_bytes(client, seeded) -> None:
    org, _ = seeded
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    api = f"/api/projects/{org['project']}/performance"
    for view, (page, name) in VIEW_TABLES.items():
        for extra in ({}, {"include_old_releases": "1"}) if view == "recommendations" else ({},):
            from_api = client.get(
                f"{api}/{view}", params={**WINDOW, **extra, "format": "csv"}, headers=headers
            )
            from_page = client.get(
                f"{_base(org)}/export/{page}.csv", params={**WINDOW, **extra, "table": name}
            )
            assert from_api.status_code == from_page.status_code == 200, view
            assert from_api.content == from_page.content, view  # the same columns, values and bytes
            document = client.get(f"{api}/{view}", params={**WINDOW, **extra}, headers=headers).json()
            spec = table(page, name)
            parsed = list(csv.DictReader(io.StringIO(from_api.text)))
            assert from_api.text.splitlines()[0].split(",") == [csv_column(c) for c in spec.columns], view
            assert len(parsed) == len(document["rows"]) > 0, view
            for csv_row, row in zip(parsed, document["rows"], strict=True):
                for column in spec.columns:
                    cell, value = csv_row[csv_column(column)], plain(row.get(column))
                    assert _same(cell, value), (view, column, cell, value)
    # Metric columns carry the catalog's unit; those that said it already keep their names.
    header = client.get(f"{api}/pages", params={**WINDOW, "format": "csv"}, headers=headers).text.split("\n")[
        0
    ]
    assert {"load_p75_ms", "lcp_p75_ms", "ttfb_avg_ms", "cls_p75", "views"} <= set(header.split(","))
    releases = client.get(f"{api}/releases", params={**WINDOW, "format": "csv"}, headers=headers).text
    assert {"load_p75_ms", "js_per_view_bytes", "api_p95_ms", "api_error_pct"} <= set(
        releases.split("\n")[0].split(",")
    )
    bad = client.get(f"{api}/recommendations", params={"include_old_releases": "maybe"}, headers=headers)
    assert bad.status_code in (400, 422) and "include_old_releases" in bad.text


def test_pdf_report_from_the_dashboard_and_the_api(client, seeded) -> None:
    org, other = seeded
    page = client.get(_base(org), params=WINDOW)
    _, links = read_page(page.text)
    pdf_link = next(link["href"] for link in links if "download-pdf" in link["class"])
    from_page = client.get(pdf_link)
    assert from_page.status_code == 200 and from_page.headers["content-type"] == "application/pdf"
    assert from_page.content.startswith(b"%PDF-")
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    from_api = client.get(
        f"/api/projects/{org['project']}/performance/report.pdf", params=WINDOW, headers=headers
    )
    assert from_api.status_code == 200 and from_api.content.startswith(b"%PDF-")
    from pypdf import PdfReader

    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(from_api.content)).pages)
    pages = client.get(
        f"/api/projects/{org['project']}/performance/pages", params=WINDOW, headers=headers
    ).json()["rows"]
    for row in pages:  # numbers as the catalog writes them, with their units
        avg, p75 = (
            format_value("load_time_ms", row["load_avg"]),
            format_value("load_time_ms", row["load_p75"]),
        )
        assert f"{row['page']} {row['views']:,} {avg} {p75}" in text
    assert "environment production" in text
    # another organization's project: 404 from both, like a missing one; no key: 401
    assert (
        client.get(f"/api/projects/{other['project']}/performance/report.pdf", headers=headers).status_code
        == 404
    )
    assert client.get(f"/api/projects/{org['project']}/performance/report.pdf").status_code == 401


def test_bad_input_and_isolation(client, seeded) -> None:
    org, other = seeded
    base = _base(org)
    cases = [
        (base + "/export/pages.xml", {}, 400, "format"),
        (base + "/export/pages.csv", {"range": "1y"}, 400, "range"),
        (base + "/export/pages.csv", {"table": "nope"}, 400, "table"),
        (base + "/export/endpoints.json", {"sort": "nope"}, 400, "sort"),
        (base + "/export/page_detail.json", {}, 400, "page"),
        (base + "/report.pdf", {"since": "yesterday"}, 400, "since"),
        (base + "/export/nothing.csv", {}, 404, "no performance page"),
    ]
    for url, params, status, word in cases:
        answer = client.get(url, params=params)
        assert answer.status_code == status and word in answer.text, (
            url,
            answer.status_code,
            answer.text[:300],
        )
        assert "Traceback" not in answer.text
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    bad = client.get(
        f"/api/projects/{org['project']}/performance/report.pdf", params={"range": "1y"}, headers=headers
    )
    assert bad.status_code == 400 and "range" in bad.json()["detail"]
    foreign = f"/orgs/{other['org_slug']}/projects/{other['project']}/performance"
    for url in (foreign + "/export/pages.csv", foreign + "/report.pdf"):
        assert client.get(url).status_code == 404
    # the signed-in user's own org slug with another org's project slug
    assert (
        client.get(f"/orgs/{org['org_slug']}/projects/{other['project']}/performance/report.pdf").status_code
        == 404
    )


def test_event_data_is_escaped_in_download_links(client, seeded) -> None:
    org, _ = seeded
    route = '/x"><script>alert(1)</script>'
    html = client.get(_base(org) + "/pages/detail", params={**WINDOW, "page": route}).text
    assert "<script>alert(1)</script>" not in html
    _, links = read_page(html)
    assert links and all(parse_qs(urlsplit(link["href"]).query).get("page") == [route] for link in links[:-1])


def test_waterfall_spans_as_csv_and_the_page_load_as_json(client, seeded, stores) -> None:
    org, other = seeded
    ((event_id,),) = (
        get_warehouse(stores)
        .query(
            "SELECT toString(event_id) FROM transactions WHERE org_id = {o:UInt64} AND project_id = {p:UInt64}"
            " AND op = 'pageload' ORDER BY timestamp DESC LIMIT 1",
            parameters={"o": org["org_id"], "p": org["project_id"]},
        )
        .result_rows
    )
    page = client.get(f"{_base(org)}/waterfall/{event_id}")
    assert page.status_code == 200
    tables, links = read_page(page.text)
    hrefs = {link["class"].split()[-1]: link["href"] for link in links}
    assert set(hrefs) == {"download-csv", "download-json"}
    api = client.get(
        f"/api/projects/{org['project']}/performance/waterfall/{event_id}",
        headers={"Authorization": f"Bearer {org['api_key']}"},
    ).json()
    assert api["spans"]
    spans = client.get(hrefs["download-csv"])
    assert spans.status_code == 200 and spans.headers["content-type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(spans.text)))
    assert [r["description"] for r in parsed] == [s["description"] for s in api["spans"]]
    assert [float(r["duration_ms"]) for r in parsed] == [s["duration_ms"] for s in api["spans"]]
    assert [r["render_blocking"] for r in parsed] == [s["render_blocking"] for s in api["spans"]]
    shown = tables["spans"]
    assert len(shown) == len(parsed)
    assert all(row[2].text == csv_row["description"] for row, csv_row in zip(shown, parsed, strict=True))
    document = client.get(hrefs["download-json"])
    assert "attachment" in document.headers["content-disposition"] and document.json() == api
    assert client.get(f"{_base(org)}/waterfall/{event_id}/export.xml").status_code == 400
    assert (
        client.get(f"{_base(org)}/waterfall/00000000-0000-0000-0000-000000000000/export.csv").status_code
        == 404
    )
    assert client.get(f"{_base(other)}/waterfall/{event_id}/export.json").status_code == 404
