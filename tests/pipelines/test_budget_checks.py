"""Budgets set through the store are evaluated by `budget_status`, and each gets its own asset check."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from pipeline_seed import TX_COLS

from pipelines.definitions import current_definitions, defs
from pipelines.embedded import materialize_now
from stacklens.control.accounts import project_by_slug
from stacklens.control.budgets import set_budget
from stacklens.control.db import session_scope


def load(project_id: int, org_id: int, page: str, ms: float, at: datetime) -> list[object]:
    row = {
        "org_id": org_id,
        "project_id": project_id,
        "event_id": uuid.uuid4(),
        "timestamp": at,
        "end_timestamp": at + timedelta(milliseconds=ms),
        "received_at": datetime.now(UTC),
        "release": "1.0.0",
        "op": "pageload",
        "duration_ms": ms,
        "page": page,
        "http_method": "",
        "http_status": 0,
        "measurements": {"ttfb": ms / 10},
        "transaction": page,
    }
    return [row[c] for c in TX_COLS]


def test_each_budget_has_a_check_that_fails_when_over(client, instance, settings, make_org) -> None:
    org = make_org("Budgeted")
    at = datetime.now(UTC) - timedelta(hours=2)
    rows = [load(org["project_id"], org["org_id"], "/", ms, at) for ms in (1000, 2000, 3000, 4000)]
    rows += [load(org["project_id"], org["org_id"], "/about", 500, at)]
    client.insert("transactions", rows, column_names=TX_COLS)
    with session_scope(settings) as session:
        project = project_by_slug(session, org["project"])
        ok, _ = set_budget(session, project, "load_time_ms", "/", 3300)  # p75 of / = 3250 ms
        over, _ = set_budget(session, project, "load_time_ms", "*", 2500)  # p75 over all 5 = 3000 ms
        empty, _ = set_budget(session, project, "lcp_ms", "*", 100)  # no LCP measured: nothing is over
    current = current_definitions()
    assert current is not defs and current_definitions() is current  # rebuilt once, then cached
    checks = {key.name for key in current.resolve_asset_graph().asset_check_keys}
    assert {f"budget_{ok.id}", f"budget_{over.id}", f"budget_{empty.id}", "budgets_within_limits"} <= checks

    outcomes = materialize_now(current, instance, ["budget_status"])
    assert [o.job for o in outcomes] == ["budgets_job"] and outcomes[0].success
    results = outcomes[0].checks
    assert results[f"budget_status:budget_{ok.id}"] is True
    assert results[f"budget_status:budget_{over.id}"] is False
    assert results[f"budget_status:budget_{empty.id}"] is True
    assert results["budget_status:budgets_within_limits"] is False
    values = dict(client.query("SELECT budget_id, current_value FROM budget_status FINAL").result_rows)
    assert values[ok.id] == 3250 and values[over.id] == 3000 and values[empty.id] is None

    # Raising the failing budget over its value: a changed budget set rebuilds the definitions and passes.
    with session_scope(settings) as session:
        set_budget(session, project_by_slug(session, org["project"]), "load_time_ms", "*", 3000)
    again = materialize_now(current_definitions(), instance, ["budget_status"])[0].checks
    assert again[f"budget_status:budget_{over.id}"] is True and again["budget_status:budgets_within_limits"]
