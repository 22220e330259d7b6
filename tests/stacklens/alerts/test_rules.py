"""Alert-rule metrics and budget metrics are one set (the metric catalog's): every budget metric can be
alerted on — "alert me when this budget fails" makes a valid rule for each — and every rule metric can be
budgeted; keys that name another metric and statistic are stored as those; the alert tick evaluates a rule on
each of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from stacklens.alerts import rule_types, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.alerts.messages import value_text
from stacklens.control.budgets import set_budget
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.alerts import AlertRule, AlertRuleState
from stacklens.metrics.catalog import CATALOG, budget_metrics
from stacklens.metrics.units import PERCENT
from stacklens.performance.budget_rules import METRICS as BUDGET_METRICS
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.performance.budget_seed import fold, page_loads, server_calls


def _is_percentage(metric: str) -> bool:
    return CATALOG[metric].unit.key == PERCENT.key


def _valid_value(metric: str) -> float:
    """A budget value the metric takes: a percentage is at most 100."""
    return 50 if _is_percentage(metric) else 1000


def test_alert_me_makes_a_valid_rule_for_a_budget_on_every_metric(settings: Settings) -> None:
    org_id, project_id, _ = org_with_project(settings)
    with session_scope(settings) as session:
        project = session.get(Project, project_id)
        assert project is not None
        for metric, spec in BUDGET_METRICS.items():
            value = _valid_value(metric)
            row, _ = set_budget(session, project, metric, "*", value, spec.statistics[-1])
            body = rules.body_from_budget(session, org_id, row.id, [])
            rule = rules.create_rule(session, org_id, body)
            same_as = budget_metrics()[metric].same_as
            assert (rule.metric, rule.statistic) == (same_as or (metric, row.statistic)), metric
            assert rule.threshold == value and rule.budget_id == row.id and rule.window_seconds == 7 * 86400


def test_the_alert_tick_evaluates_a_rule_on_every_metric(settings: Settings, client) -> None:
    # One rule per rule metric over page loads with a 250 KiB script each and five API calls: every rule is
    # evaluated (no rule error), and those whose data is there have a value, written as the catalog writes it.
    org_id, project_id, slug = org_with_project(settings)
    now = datetime.now(UTC)
    page_loads(client, org_id, project_id, "/", now - timedelta(hours=2), [2000.0] * 5, js_bytes=256_000)
    server_calls(client, org_id, project_id, "/api/items", now - timedelta(hours=2), [200, 404, 500, 0, 200])
    fold(client, days=1)
    with session_scope(settings) as session:
        for metric in rule_types.METRICS:
            rules.create_rule(
                session,
                org_id,
                {
                    "name": metric,
                    "type": "performance_budget",
                    "project": slug,
                    "metric": metric,
                    "threshold": 100 if _is_percentage(metric) else 1e12,
                    "window": "1d",
                    "min_samples": 1,
                },
            )
    summary = evaluate(settings, client, "http://sl.test", now)
    assert summary.rules == len(rule_types.METRICS) and summary.failed == 0 and summary.errors == [], summary
    with session_scope(settings) as session:
        found = {r.name: r for r in session.scalars(select(AlertRule))}
        values = {
            found_rule.name: state.value
            for found_rule in found.values()
            for state in session.scalars(
                select(AlertRuleState).where(AlertRuleState.rule_id == found_rule.id)
            )
        }
        assert set(values) == set(rule_types.METRICS)
        for name in (
            "load_time_ms",
            "lcp_ms",
            "fcp_ms",
            "cls",
            "js_bytes",
            "transfer_bytes",
            "api_ms",
            "error_pct",
        ):
            assert values[name] is not None, (name, values)
        assert value_text(found["error_pct"], values["error_pct"]) == "40.0 %"  # a 404 and a 500 of 5 calls
        assert value_text(found["js_bytes"], values["js_bytes"]) == "250.0 KiB"
        assert value_text(found["lcp_ms"], values["lcp_ms"]).endswith(" ms")
