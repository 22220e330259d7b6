"""Budgets set through the store are evaluated by `budget_status`: one row per budget with its verdict, and
one aggregate check that fails only when a budget could not be evaluated: over budget is a verdict (issue
#47). The code location does not change with the budgets."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from pipelines.assets.budgets import AGGREGATE_CHECK
from pipelines.definitions import definitions_for
from pipelines.embedded import materialize_now
from stacklens.control.budgets import delete_budget, set_budget
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from tests.pipelines.pipeline_seed import TX_COLS
from tests.stacklens.performance.budget_seed import bucketed, fold

CHECK = f"budget_status:{AGGREGATE_CHECK}"


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


def _check_keys(defs: dg.Definitions) -> set[str]:
    """The asset checks of `budget_status`."""
    keys = defs.resolve_asset_graph().asset_check_keys
    return {key.to_user_string() for key in keys if key.asset_key == dg.AssetKey("budget_status")}


def _verdicts(client) -> dict[int, tuple[float | None, str]]:
    rows = client.query("SELECT budget_id, current_value, status FROM budget_status FINAL").result_rows
    return {int(b): (v, str(s)) for b, v, s in rows}


def test_each_budget_is_a_row_and_over_budget_is_a_verdict_not_a_failed_check(
    client, instance, settings, defs, make_org
) -> None:
    org = make_org("Budgeted")
    at = datetime.now(UTC) - timedelta(hours=2)
    rows = [load(org["project_id"], org["org_id"], "/", ms, at) for ms in (1000, 2000, 3000, 4000)]
    rows += [load(org["project_id"], org["org_id"], "/about", 500, at)]
    client.insert("transactions", rows, column_names=TX_COLS)
    fold(client)  # what the performance steps do before the budgets run
    before = _check_keys(defs)
    with session_scope(settings) as session:
        project = project_by_slug(session, org["project"])
        ok, _ = set_budget(session, project, "load_time_ms", "/", 3300, min_samples=1)  # p75 of / = 3250 ms
        over, _ = set_budget(
            session, project, "load_time_ms", "*", 2500, min_samples=1
        )  # p75 of all 5 = 3000
        empty, _ = set_budget(session, project, "lcp_ms", "*", 100, min_samples=1)  # no LCP: no verdict
        few, _ = set_budget(session, project, "load_time_ms", "/about", 1000)  # 1 sample of the 20 needed
    # Import-pure definitions: adding budgets changes neither the checks nor the definitions object.
    assert definitions_for(settings) is defs and _check_keys(defs) == before == {CHECK}

    outcomes = materialize_now(defs, instance, ["budget_status"])
    assert [o.job for o in outcomes] == ["budgets_job"] and outcomes[0].success
    assert outcomes[0].checks == {CHECK: True}  # one budget is over: a finding, the data is fine
    # Percentiles of the page-load states' 1 % log histograms: within 0.5 % of the exact ones.
    verdicts = _verdicts(client)
    assert verdicts == {
        ok.id: (pytest.approx(3250, rel=0.005), "pass"),
        over.id: (pytest.approx(3000, rel=0.005), "fail"),
        empty.id: (None, "insufficient_data"),  # no data is never a pass
        few.id: (bucketed(500), "insufficient_data"),
    }
    event = instance.get_latest_asset_check_evaluation_record(
        dg.AssetCheckKey(dg.AssetKey("budget_status"), AGGREGATE_CHECK)
    )
    metadata = event.event.asset_check_evaluation.metadata
    assert metadata["over_budget"].value == 1 and metadata["budgets"].value == 4
    assert metadata["insufficient_data"].value == 2 and metadata["not_evaluated"].value == 0
    assert metadata[f"budget {over.id} load_time_ms *"].value.startswith(f"fail: {verdicts[over.id][0]}")

    # Raising the failing budget over its value: the row says pass.
    with session_scope(settings) as session:
        set_budget(session, project_by_slug(session, org["project"]), "load_time_ms", "*", 3100)
    again = materialize_now(definitions_for(settings), instance, ["budget_status"])[0]
    assert again.checks == {CHECK: True} and _verdicts(client)[over.id] == (verdicts[over.id][0], "pass")

    # A deleted budget leaves the mart on the next run.
    with session_scope(settings) as session:
        delete_budget(session, project_by_slug(session, org["project"]), "lcp_ms", "*")
    materialize_now(defs, instance, ["budget_status"])
    assert set(_verdicts(client)) == {ok.id, over.id, few.id}
