"""The budgets page through the real app, chdb and SQLite: add / edit / delete with CSRF and field-named
errors, the three statuses with value, margin, samples, failing-since and a chart, the 30-day preview, the
CSV / JSON downloads (the page's rows), Lighthouse budget.json import and export, "Alert me when this
fails", and another organization's budgets answering 404."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import csrf_of, sign_in
from tests.stacklens.performance.budget_seed import bucketed, fold, page_loads


@pytest.fixture
def world(client, org_factory, stores):
    org = org_factory()
    warehouse = get_warehouse(stores)
    now = datetime.now(UTC)
    for day in range(10):
        at = now - timedelta(days=day, hours=3)
        page_loads(warehouse, org["org_id"], org["project_id"], "/slow", at, [3000.0] * 3, js_bytes=400_000)
        page_loads(warehouse, org["org_id"], org["project_id"], "/fast", at, [800.0] * 3, js_bytes=100_000)
    page_loads(warehouse, org["org_id"], org["project_id"], "/rare", now - timedelta(hours=2), [900.0])
    fold(warehouse)
    sign_in(client, org["email"])
    return org


def _path(org: dict) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/performance/budgets"


def _add(client, org: dict, **fields: str):
    page = client.get(_path(org))
    data = {"csrf_token": csrf_of(page.text), "statistic": "p75", "window": "7", "min_samples": "5", **fields}
    return client.post(_path(org), data=data, follow_redirects=False)


def _rows(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-budget="(\d+)" data-status="([a-z_]+)"', html))


def test_add_edit_delete_with_statuses_charts_and_previews(client, world) -> None:
    org = world
    empty = client.get(_path(org))
    assert (
        empty.status_code == 200 and 'id="no-budgets"' in empty.text and 'href="' + _path(org) in empty.text
    )

    # Each bad field is named on the form and nothing is saved.
    for fields, message in (
        ({"metric": "speed", "value": "1"}, "metric: unknown metric"),
        ({"metric": "lcp_ms", "value": "-1"}, "value: must be a finite number &gt;= 0"),
        ({"metric": "lcp_ms", "value": "1", "window": "0"}, "window: must be a whole number from 1 to 30"),
        (
            {"metric": "lcp_ms", "value": "1", "scope": "/nowhere/*"},
            "scope: &#39;/nowhere/*&#39; matches no page",
        ),
    ):
        answer = _add(client, org, **fields)
        assert answer.status_code == 400 and message in answer.text, (fields, answer.text[-2000:])
        assert 'class="invalid"' in answer.text
    assert 'id="no-budgets"' in client.get(_path(org)).text
    bad_csrf = client.post(_path(org), data={"csrf_token": "x", "metric": "lcp_ms", "value": "1"})
    assert bad_csrf.status_code in (400, 403)

    for scope in ("/slow", "/fast", "/rare"):
        made = _add(client, org, metric="load_time_ms", scope=scope, value="2000")
        assert made.status_code == 303, made.text[-1500:]
    page = client.get(_path(org))
    assert page.status_code == 200
    statuses = _rows(page.text)
    assert sorted(statuses.values()) == ["fail", "insufficient_data", "pass"]
    slow_id = next(i for i, s in statuses.items() if s == "fail")
    assert page.text.count('data-figure="fig-budget-') == 3
    row = re.search(rf'data-budget="{slow_id}".*?</tr>', page.text, re.S).group(0)
    assert f'data-value="{bucketed(3000)}"' in row and "−" in row and "21 <span" in row
    assert "insufficient" not in row
    # Each chart ends on the evaluation its status is: the last point is the status's value.
    for budget_id in statuses:
        value = re.search(
            rf'data-budget="{budget_id}".*?class="num current"><span data-value="([^"]+)"', page.text, re.S
        )
        chart = json.loads(
            re.search(rf'id="fig-budget-{budget_id}">(.*?)</script>', page.text, re.S).group(1)
        )
        (line,) = [t for t in chart["data"] if t.get("mode") == "lines+markers"]
        if statuses[budget_id] == "insufficient_data":
            assert line["y"][-1] is None  # too few samples: a gap, never a point at 0
        else:
            assert line["y"][-1] == float(value.group(1)), budget_id
    assert re.search(r"\d{4}-\d\d-\d\d", row.split('class="failing-since')[1])  # failing since a date
    alert = re.search(rf'data-budget="{slow_id}".*?class="alert-me"', page.text, re.S).group(0)
    link = re.findall(r'href="([^"]*alerts/new[^"]*)"', alert)[0].replace("&amp;", "&")
    rule_form = client.get(link)
    assert rule_form.status_code == 200
    for shown in (
        'name="threshold" value="2000"',
        'value="7d"',
        'name="min_samples" value="5"',
        ">load_time_ms —",
    ):
        assert shown in rule_form.text.replace(" selected>", ">"), shown
    assert 'value="/slow"' in rule_form.text

    # Editing shows how often the draft would have failed over 30 days; saving keeps the new definition.
    edit = client.get(f"{_path(org)}/{slow_id}/edit")
    assert (
        edit.status_code == 200 and "Would have failed on" in edit.text and "fig-budget-preview" in edit.text
    )
    assert re.search(r'id="fig-budget-preview">\{"data": ?\[\{', edit.text)  # the chart holds a trace
    failed, judged = map(int, re.search(r"failed on (\d+) of (\d+)", edit.text).groups())
    assert failed == judged and failed >= 7
    # Issue #47: "32 of 32 daily evaluations over the last 30 days" counted 32 in 30; the preview says which.
    first = (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%d")
    assert (
        "of 32 evaluations in all: one at each midnight (UTC) from " + first + " to today's, and one now"
    ) in edit.text, re.search(r"Would have failed[^.]*\.", edit.text).group(0)
    assert "daily evaluations" not in edit.text
    fields = {
        "metric": "load_time_ms",
        "statistic": "p75",
        "scope": "/slow",
        "window": "7",
        "min_samples": "5",
    }
    token = csrf_of(edit.text)
    draft = client.post(
        f"{_path(org)}/{slow_id}/edit", data={"csrf_token": token, **fields, "value": "5000", "preview": "1"}
    )
    assert draft.status_code == 200 and re.search(r"failed on 0 of \d+", draft.text)
    assert "token" not in str(draft.url.query)  # the preview posts: the CSRF token never lands in a URL
    assert _rows(client.get(_path(org)).text)[slow_id] == "fail"  # a preview saves nothing
    bad_draft = client.post(
        f"{_path(org)}/{slow_id}/edit",
        data={"csrf_token": token, **fields, "value": "5000", "window": "0", "preview": "1"},
    )
    assert bad_draft.status_code == 400 and "window: must be" in bad_draft.text
    linked = client.get(f"{_path(org)}/{slow_id}/edit", params={"value": "5000"})  # a shared draft link
    assert re.search(r"failed on 0 of \d+", linked.text)
    saved = client.post(
        f"{_path(org)}/{slow_id}/edit",
        data={
            "csrf_token": csrf_of(edit.text),
            "metric": "load_time_ms",
            "statistic": "p50",
            "scope": "/slow",
            "value": "5000",
            "window": "14",
            "min_samples": "5",
        },
        follow_redirects=False,
    )
    assert saved.status_code == 303
    assert _rows(client.get(_path(org)).text)[slow_id] == "pass"
    deleted = client.post(
        f"{_path(org)}/{slow_id}/delete", data={"csrf_token": csrf_of(edit.text)}, follow_redirects=False
    )
    assert deleted.status_code == 303 and slow_id not in _rows(client.get(_path(org)).text)


def test_downloads_are_the_rows_of_the_page_and_lighthouse_round_trips(client, world, org_factory) -> None:
    org = world
    for scope in ("/slow", "/fast"):
        assert _add(client, org, metric="lcp_ms", scope=scope, value="2500").status_code == 303
    page = client.get(_path(org)).text
    as_json = client.get(f"{_path(org)}/export.json")
    assert as_json.status_code == 200 and "attachment" in as_json.headers["content-disposition"]
    listed = as_json.json()["budgets"]
    as_csv = list(csv.DictReader(io.StringIO(client.get(f"{_path(org)}/export.csv").text)))
    assert [r["id"] for r in as_csv] == [str(r["id"]) for r in listed] and len(listed) == 2
    for row, line in zip(listed, as_csv, strict=True):
        assert f'data-budget="{row["id"]}" data-status="{row["status"]}"' in page
        assert (
            f'data-value="{row["current_value"]}"' in page
            and float(line["current_value"]) == row["current_value"]
        )
        assert line["status"] == row["status"] and int(line["samples"]) == row["samples"]
    api = client.get(
        f"/api/projects/{org['project']}/budgets",
        params={"format": "json"},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    ).json()["budgets"]
    assert [(r["id"], r["status"], r["current_value"]) for r in api] == [
        (r["id"], r["status"], r["current_value"]) for r in listed
    ]

    exported = client.get(f"{_path(org)}/budget.json").json()
    assert exported == [
        {"path": "/fast$", "timings": [{"metric": "largest-contentful-paint", "budget": 2500.0}]},
        {"path": "/slow$", "timings": [{"metric": "largest-contentful-paint", "budget": 2500.0}]},
    ]
    other = org_factory("Other")
    token = csrf_of(page)
    # A bad file imports nothing and names the field.
    bad = client.post(f"{_path(org)}/import", data={"csrf_token": token, "budget_json": "{not json"})
    assert (
        bad.status_code == 400
        and "budget.json: is not JSON" in bad.text
        and "nothing was imported" in bad.text
    )
    half = [
        {
            "path": "/*",
            "timings": [
                {"metric": "first-contentful-paint", "budget": 1800},
                {"metric": "largest-contentful-paint", "budget": -5},
            ],
        }
    ]
    refused = client.post(f"{_path(org)}/import", data={"csrf_token": token, "budget_json": json.dumps(half)})
    assert (
        refused.status_code == 400
        and "budget.json[0].timings[1]: value: must be a finite number" in refused.text
    )
    assert len(_rows(client.get(_path(org)).text)) == 2
    lighthouse = [
        *exported,
        {
            "path": "/*",
            "timings": [
                {"metric": "first-contentful-paint", "budget": 1800},
                {"metric": "interactive", "budget": 5000},
            ],
            "resourceSizes": [
                {"resourceType": "script", "budget": 300},
                {"resourceType": "image", "budget": 500},
            ],
            "resourceCounts": [{"resourceType": "third-party", "budget": 10}],
        },
    ]
    done = client.post(
        f"{_path(org)}/import",
        files={"file": ("budget.json", json.dumps(lighthouse).encode(), "application/json")},
        data={"csrf_token": token},
    )
    assert done.status_code == 200 and "Imported 4 budgets from budget.json (2 new, 2 changed)" in done.text
    for unmapped in ("timing interactive", "resource size image", "resource count third-party"):
        assert unmapped in done.text
    again = client.get(f"{_path(org)}/budget.json").json()
    assert {e["path"] for e in again} == {"/*", "/fast$", "/slow$"}
    whole = next(e for e in again if e["path"] == "/*")
    assert whole["timings"] == [{"metric": "first-contentful-paint", "budget": 1800.0}]
    assert whole["resourceSizes"] == [{"resourceType": "script", "budget": 300.0}]

    # Another organization's member sees none of it.
    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(_path(org)).status_code == 404
    assert client.get(f"{_path(org)}/export.csv").status_code == 404
    own = f"/orgs/{other['org_slug']}/projects/{other['project']}/performance/budgets"
    budget_id = next(iter(_rows(page)))
    assert client.get(f"{own}/{budget_id}/edit").status_code == 404
