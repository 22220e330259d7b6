"""One value, one string: a budget's value and current value read the same on the budgets page, on the alerts
page (the rule made by "Alert me when this fails": its condition and last value) and in `stacklens budgets
list` — the metric catalog's writing (binary prefixes, no scientific notation, the unit)."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from stacklens.cli.main import main
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertRule, AlertRuleState
from stacklens.metrics.formatting import format_value
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import csrf_of, sign_in
from tests.stacklens.performance.budget_seed import fold, page_loads


def _cells(row_html: str) -> list[tuple[str, str]]:
    """(data-value, text) of each value cell of a budgets-table row."""
    return [
        (v, html.unescape(t)) for v, t in re.findall(r'<span data-value="([^"]+)">([^<]*)</span>', row_html)
    ]


def test_a_byte_budget_reads_the_same_on_the_budgets_page_the_alerts_page_and_the_cli(
    client, org_factory, stores, capsys: pytest.CaptureFixture[str]
) -> None:
    org = org_factory()
    warehouse = get_warehouse(stores)
    at = datetime.now(UTC) - timedelta(hours=3)
    page_loads(warehouse, org["org_id"], org["project_id"], "/", at, [900.0] * 5, js_bytes=730_000)
    fold(warehouse, days=2)
    assert (
        main(["budgets", "set", "--project", org["project"], "--metric", "js_bytes", "--value", "500000"])
        == 0
    )
    made = capsys.readouterr().out
    assert "<= 488.3 KiB" in made and "e+0" not in made, made

    sign_in(client, org["email"])
    budgets = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/performance/budgets").text
    row = re.search(r'<tr class="budget-row".*?</tr>', budgets, re.S).group(0)
    (current_value, current), (budget_value, budget), _margin = _cells(row)
    assert float(budget_value) == 500_000 and budget == "488.3 KiB" == format_value("js_bytes", 500_000)
    assert current == format_value("js_bytes", float(current_value)) and current.endswith(" KiB")
    assert " KB" not in budgets and "e+0" not in row

    assert main(["budgets", "list", "--project", org["project"]]) == 0
    listed = capsys.readouterr().out
    assert f"<= {budget}  now {current}  " in listed, listed

    # "Alert me when this fails" (offered for the JavaScript budget) makes the rule; its page shows the
    # budget as the threshold and the measured value as the last value, written alike.
    link = html.unescape(re.search(r'href="([^"]*/alerts/new[^"]*)" class="alert-me"', row).group(1))
    form = client.get(link)
    assert form.status_code == 200 and 'value="js_bytes" selected' in form.text
    fields = dict(re.findall(r'<input name="([a-z_]+)" value="([^"]*)"', form.text))
    assert fields["threshold"] == "500000"  # a number a form takes back, not 5e+05
    created = client.post(
        f"/orgs/{org['org_slug']}/alerts/new",
        data={
            "csrf_token": csrf_of(form.text),
            "name": "JS budget",
            "type": "performance_budget",
            "project": org["project"],
            "metric": "js_bytes",
            "statistic": "avg",
            "scope": "*",
            "threshold": fields["threshold"],
            "window": "7d",
            "min_samples": "1",
        },
        follow_redirects=False,
    )
    assert created.status_code == 303, created.text[-1500:]
    with session_scope(stores) as session:
        rule = session.scalars(select(AlertRule).where(AlertRule.name == "JS budget")).one()
        session.add(
            AlertRuleState(rule_id=rule.id, scope_key="*", state="firing", value=float(current_value))
        )
    alerts = client.get(f"/orgs/{org['org_slug']}/alerts").text
    last = re.search(r'<td class="last-value">([^<]*)</td>', alerts).group(1)
    assert html.unescape(last) == current
    # The condition names the metric by its catalog label, never the key (js_bytes).
    assert f"JavaScript size per page view on all pages &gt; {budget} over 7d" in alerts
    one = client.get(f"/orgs/{org['org_slug']}/alerts/{rule.id}").text
    assert f"<td>JavaScript size per page view on all pages &gt; {budget} over 7d</td>" in one
