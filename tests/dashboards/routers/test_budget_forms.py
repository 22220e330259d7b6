"""The budget forms (dashboards/routers/budget_forms.py) on a real app over real stores: the new form's
defaults, a preview that saves nothing, a refused value answered on the form with the saved budget unchanged,
an edit and a delete, another organization's budget not found, and an empty budget.json import refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import csrf_of, sign_in
from tests.stacklens.performance.budget_seed import fold, page_loads


@pytest.fixture
def org(client, org_factory, stores):
    made = org_factory()
    warehouse = get_warehouse(stores)
    now = datetime.now(UTC)
    for day in range(3):
        page_loads(
            warehouse,
            made["org_id"],
            made["project_id"],
            "/home",
            now - timedelta(days=day, hours=2),
            [1500.0] * 3,
        )
    fold(warehouse)
    sign_in(client, made["email"])
    return made


def _path(org: dict) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/performance/budgets"


def _budget_ids(client, org: dict) -> list[str]:
    return re.findall(r'data-budget="(\d+)"', client.get(_path(org)).text)


def _post(client, org: dict, path: str, **fields: str):
    token = csrf_of(client.get(_path(org)).text)
    return client.post(path, data={"csrf_token": token, **fields}, follow_redirects=False)


def _field(html: str, name: str) -> str:
    found = re.search(rf'<input name="{name}" value="([^"]*)"', html)
    assert found, name
    return found.group(1)


def test_new_preview_add_edit_and_delete(client, org) -> None:
    form = client.get(f"{_path(org)}/new")
    assert form.status_code == 200
    assert '<option value="lcp_ms" selected>' in form.text
    assert (_field(form.text, "window"), _field(form.text, "min_samples"), _field(form.text, "scope")) == (
        "7",
        "20",
        "*",
    )
    draft = {"metric": "load_time_ms", "statistic": "p75", "scope": "/home", "value": "1000", "window": "7"}
    preview = _post(client, org, _path(org), **draft, min_samples="1", preview="1")
    assert preview.status_code == 200 and 'id="budget-preview"' in preview.text
    assert _budget_ids(client, org) == []  # a preview saves nothing

    assert _post(client, org, _path(org), **draft, min_samples="1").status_code == 303
    [budget_id] = _budget_ids(client, org)
    edit_path = f"{_path(org)}/{budget_id}/edit"
    edit = client.get(edit_path)
    assert edit.status_code == 200 and _field(edit.text, "value") == "1000"

    refused = _post(client, org, edit_path, **{**draft, "value": "-5"}, min_samples="1")
    assert refused.status_code == 400 and "value: must be a finite number" in refused.text
    assert _field(client.get(edit_path).text, "value") == "1000"  # unchanged
    assert _post(client, org, edit_path, **{**draft, "value": "2000"}, min_samples="1").status_code == 303
    assert _field(client.get(edit_path).text, "value") == "2000"

    assert _post(client, org, f"{_path(org)}/{budget_id}/delete").status_code == 303
    assert _budget_ids(client, org) == []
    assert client.get(edit_path).status_code == 404


def test_another_organizations_budget_is_not_found_and_an_empty_import_is_refused(
    client, org, org_factory
) -> None:
    draft = {"metric": "lcp_ms", "statistic": "p75", "scope": "*", "value": "2500", "window": "7"}
    assert _post(client, org, _path(org), **draft, min_samples="1").status_code == 303
    [budget_id] = _budget_ids(client, org)
    imported = _post(client, org, f"{_path(org)}/import", budget_json="  ")
    assert imported.status_code == 400 and "budget.json: is empty" in imported.text
    assert _budget_ids(client, org) == [budget_id]

    other = org_factory("Other")
    sign_in(client, other["email"])
    theirs = f"/orgs/{other['org_slug']}/projects/{other['project']}/performance/budgets/{budget_id}/edit"
    assert client.get(theirs).status_code == 404
    token = csrf_of(client.get(_path(other)).text)
    deleted = client.post(
        theirs.replace("/edit", "/delete"), data={"csrf_token": token}, follow_redirects=False
    )
    assert deleted.status_code == 404
