"""Budget evaluation, one budget at a time: a budget that cannot be evaluated (a statistic its metric does not
keep, as a row written by hand or by another version could hold) gets the status ``error`` with the reason,
and the others — of its own and of another organization — are judged as usual: by the evaluation, by the
``budget_status`` run (which records the error on the budget, retries it after the outbox's backoff and still
succeeds), and on the budgets page and API (which show the error)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from pipelines.embedded import materialize_now
from stacklens.control.budgets import list_budgets, set_budget
from stacklens.control.db import session_scope
from stacklens.control.models import Budget
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_eval import ERROR, BudgetSpec, evaluate
from stacklens.performance.budget_status import with_status
from stacklens.settings import Settings
from tests.pipelines.pipeline_seed import defs, instance
from tests.stacklens.performance.budget_seed import fold, page_loads

__all__ = ["defs", "instance"]  # the pipeline fixtures this module uses

NOW = datetime.now(UTC)
BROKEN = "p42"  # no metric keeps it: measuring raises


def test_one_budget_that_raises_is_its_own_error(client) -> None:
    page_loads(client, 1, 41, "/", NOW - timedelta(hours=2), [1000.0, 2000.0, 3000.0])
    fold(client)
    healthy = BudgetSpec(1, 41, "load_time_ms", "p75", "*", 5000, 7, 1)
    broken = BudgetSpec(2, 41, "load_time_ms", BROKEN, "*", 5000, 7, 1)
    other = BudgetSpec(3, 41, "load_time_ms", "p75", "*", 100, 7, 1)
    got = evaluate(client, [healthy, broken, other], NOW)
    assert [g.status for g in got] == ["pass", ERROR, "fail"]
    # The p75 of 1, 2 and 3 s, as the states keep it (1 % buckets).
    assert got[0].value == got[2].value and 2000 < (got[0].value or 0) < 3000
    assert got[2].failing_since is not None
    assert got[1].value is None and got[1].margin is None
    assert "load_time_ms" in got[1].error and f"'{BROKEN}'" in got[1].error


def _verdicts(client) -> dict[int, str]:
    rows = client.query("SELECT budget_id, status FROM budget_status FINAL").result_rows
    return {int(b): str(s) for b, s in rows}


def _last_evaluated(client, budget_id: int) -> datetime:
    query = "SELECT max(evaluated_at) FROM budget_status WHERE budget_id = {id:UInt64}"
    return client.query(query, parameters={"id": budget_id}).result_rows[0][0]


def test_the_budget_run_isolates_a_broken_budget(
    client, instance, defs, settings: Settings, make_org
) -> None:
    broken_org, healthy_org = make_org("Initech"), make_org("Globex")
    for org in (broken_org, healthy_org):
        page_loads(client, org["org_id"], org["project_id"], "/", NOW - timedelta(hours=2), [1000.0, 3000.0])
    fold(client)
    with session_scope(settings) as session:
        mine = project_by_slug(session, broken_org["project"])
        theirs = project_by_slug(session, healthy_org["project"])
        broken, _ = set_budget(session, mine, "load_time_ms", "*", 5000, min_samples=1)
        sibling, _ = set_budget(session, mine, "load_time_ms", "/", 5000, min_samples=1)
        healthy, _ = set_budget(session, theirs, "load_time_ms", "*", 5000, min_samples=1)
        row = session.get(Budget, broken.id)
        assert row is not None
        row.statistic = BROKEN

    outcome = materialize_now(defs, instance, ["budget_status"])[0]

    assert outcome.success  # the run is not the broken budget's failure
    assert _verdicts(client) == {broken.id: ERROR, sibling.id: "pass", healthy.id: "pass"}
    with session_scope(settings) as session:
        recorded = session.get(Budget, broken.id)
        assert recorded is not None
        assert f"'{BROKEN}'" in recorded.last_error and recorded.failures == 1 and recorded.retry_at
        untouched = session.scalars(select(Budget).where(Budget.id != broken.id)).all()
        assert [(b.last_error, b.failures, b.retry_at) for b in untouched] == [("", 0, None)] * 2
        # What the budgets page, its downloads and GET /api/projects/{slug}/budgets show.
        shown = {r["id"]: r for r in with_status(client, list_budgets(session, mine))}
    assert shown[broken.id]["status"] == ERROR and f"'{BROKEN}'" in shown[broken.id]["error"]
    assert shown[sibling.id]["status"] == "pass" and shown[sibling.id]["error"] == ""

    # Within its backoff the broken budget is not evaluated again; the others are.
    first = _last_evaluated(client, broken.id)
    materialize_now(defs, instance, ["budget_status"])
    assert _last_evaluated(client, broken.id) == first
    assert _last_evaluated(client, healthy.id) > first
