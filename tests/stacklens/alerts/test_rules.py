"""Alert-rule metrics and budget metrics are one set (the metric catalog's): every budget metric can be
alerted on — "alert me when this budget fails" makes a valid rule for each — and every rule metric can be
budgeted; keys that name another metric and statistic are stored as those; the alert tick evaluates a rule on
each of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from stacklens.alerts import rules
from stacklens.alerts.errors import AlertInputError
from stacklens.alerts.evaluation import evaluate
from stacklens.alerts.messages import value_text
from stacklens.control.budgets import set_budget
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.alerts import AlertRule, AlertRuleState
from stacklens.metrics.catalog import budget_metrics
from stacklens.performance.budget_rules import METRICS as BUDGET_METRICS
from stacklens.performance.budget_rules import validate_budget
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.performance.budget_seed import fold, page_loads, server_calls


def test_every_budget_metric_is_a_rule_metric_and_the_other_way_round(settings: Settings) -> None:
    org_id, _, slug = org_with_project(settings)
    assert set(rules.METRICS) == set(BUDGET_METRICS) == set(budget_metrics())
    base = {"name": "r", "type": "performance_budget", "project": slug, "threshold": 1}
    with session_scope(settings) as session:
        for metric, statistics in rules.METRICS.items():
            for statistic in statistics:
                cleaned = rules.clean(session, org_id, {**base, "metric": metric, "statistic": statistic})
                expected = budget_metrics()[metric].same_as or (metric, statistic)
                assert (cleaned["metric"], cleaned["statistic"]) == expected, metric
                assert validate_budget(metric, "*", 1, statistic).statistic == statistic
        # A statistic that is part of the metric is the metric's own, as for budgets.
        assert (
            rules.clean(session, org_id, {**base, "metric": "js_bytes", "statistic": "p75"})["statistic"]
            == "avg"
        )
        assert rules.clean(session, org_id, {**base, "metric": "api_p95_ms"})["metric"] == "api_ms"
        with pytest.raises(AlertInputError, match="statistic: lcp_ms keeps p75"):
            rules.clean(session, org_id, {**base, "metric": "lcp_ms", "statistic": "p95"})
        with pytest.raises(AlertInputError, match="metric: unknown metric 'lcp'"):
            rules.clean(session, org_id, {**base, "metric": "lcp"})  # a view's alias is not a rule key
        with pytest.raises(AlertInputError, match="metric: unknown metric"):
            rules.clean(session, org_id, {**base, "metric": ["lcp_ms"]})


def test_alert_me_makes_a_valid_rule_for_a_budget_on_every_metric(settings: Settings) -> None:
    org_id, project_id, _ = org_with_project(settings)
    with session_scope(settings) as session:
        project = session.get(Project, project_id)
        assert project is not None
        for metric, spec in BUDGET_METRICS.items():
            row, _ = set_budget(session, project, metric, "*", 1000, spec.statistics[-1])
            body = rules.body_from_budget(session, org_id, row.id, [])
            rule = rules.create_rule(session, org_id, body)
            same_as = budget_metrics()[metric].same_as
            assert (rule.metric, rule.statistic) == (same_as or (metric, row.statistic)), metric
            assert rule.threshold == 1000 and rule.budget_id == row.id and rule.window_seconds == 7 * 86400


def test_the_alert_tick_evaluates_a_rule_on_every_metric(settings: Settings, client) -> None:
    # One rule per rule metric over page loads with a 250 KiB script each and five API calls: every rule is
    # evaluated (no rule error), and those whose data is there have a value, written as the catalog writes it.
    org_id, project_id, slug = org_with_project(settings)
    now = datetime.now(UTC)
    page_loads(client, org_id, project_id, "/", now - timedelta(hours=2), [2000.0] * 5, js_bytes=256_000)
    server_calls(client, org_id, project_id, "/api/items", now - timedelta(hours=2), [200, 404, 500, 0, 200])
    fold(client, days=1)
    with session_scope(settings) as session:
        for metric in rules.METRICS:
            rules.create_rule(
                session,
                org_id,
                {
                    "name": metric,
                    "type": "performance_budget",
                    "project": slug,
                    "metric": metric,
                    "threshold": 1e12,
                    "window": "1d",
                    "min_samples": 1,
                },
            )
    summary = evaluate(settings, client, "http://sl.test", now)
    assert summary.rules == len(rules.METRICS) and summary.failed == 0 and summary.errors == [], summary
    with session_scope(settings) as session:
        found = {r.name: r for r in session.scalars(select(AlertRule))}
        values = {
            found_rule.name: state.value
            for found_rule in found.values()
            for state in session.scalars(
                select(AlertRuleState).where(AlertRuleState.rule_id == found_rule.id)
            )
        }
        assert set(values) == set(rules.METRICS)
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


def test_release_rule_types_validate_their_fields_and_name_the_bad_one(settings: Settings) -> None:
    """A crash-free rate needs a threshold in %, watches crash-free sessions (the default) or users, warns above
    its threshold and resolves at or above it; a release regression needs no threshold. Both watch the newest
    release: no release, level or tag filter."""
    org_id, _, slug = org_with_project(settings)
    crash = {"name": "c", "type": "crash_free_rate", "project": slug, "threshold": 99}
    with session_scope(settings) as session:
        cleaned = rules.clean(session, org_id, crash)
        assert (cleaned["metric"], cleaned["threshold"], cleaned["min_samples"]) == (
            "crash_free_sessions",
            99,
            100,
        )
        assert cleaned["window_seconds"] == 86400 and cleaned["statistic"] == "" and cleaned["scope"] == "*"
        users = rules.clean(
            session, org_id, {**crash, "metric": "crash_free_users", "warning_threshold": "99.5"}
        )
        assert (users["metric"], users["warning_threshold"]) == ("crash_free_users", 99.5)
        regression = rules.clean(
            session, org_id, {"name": "r", "type": "release_regression", "project": slug}
        )
        assert regression["threshold"] is None and regression["window_seconds"] == 30 * 86400
        cases: list[tuple[dict[str, Any], str]] = [
            ({"threshold": None}, "threshold: is required for this rule type"),
            ({"threshold": "high"}, "threshold: must be a number (got 'high')"),
            ({"threshold": 101}, "threshold: must be at most 100"),
            (
                {"metric": "lcp_ms"},
                "metric: a crash-free rate rule watches crash_free_sessions or crash_free_users",
            ),
            ({"metric": "crash_free"}, "metric: a crash-free rate rule watches crash_free_sessions or"),
            (
                {"warning_threshold": 98},
                "warning_threshold: must be above the threshold (this rule fires below it)",
            ),
            ({"resolve_threshold": 98.9}, "resolve_threshold: must be at least the threshold"),
            ({"min_samples": 0}, "min_samples: must be between 1 and 1000000"),
            ({"window": "45d"}, "window: must be between 1m and 30d"),
            (
                {"release": "shop@1.0.0"},
                "release: a crash-free rate rule watches the newest release's sessions",
            ),
            ({"level": "error"}, "level: a crash-free rate rule watches the newest release's sessions"),
        ]
        for change, message in cases:
            with pytest.raises(AlertInputError) as caught:
                rules.clean(session, org_id, {**crash, **change})
            assert str(caught.value).startswith(message), (change, str(caught.value))
        with pytest.raises(
            AlertInputError, match="tag: a release regression rule watches the newest release"
        ):
            rules.clean(
                session, org_id, {"name": "r", "type": "release_regression", "project": slug, "tag": "a:b"}
            )
        # The rule as the API answers it: the request's field names.
        rule = rules.create_rule(
            session, org_id, {**crash, "metric": "crash_free_users", "resolve_threshold": 99.2}
        )
        out = rules.rule_out(rule, slug)
        assert (out["type"], out["metric"], out["threshold"], out["resolve_threshold"], out["window"]) == (
            "crash_free_rate",
            "crash_free_users",
            99,
            99.2,
            "1d",
        )
