"""The rule vocabulary (stacklens/alerts/rule_types.py): rule metrics and budget metrics are one set, the
metric catalog's; keys that name another metric and statistic are stored as those."""

from __future__ import annotations

import pytest

from stacklens.alerts import rule_types, rule_validation
from stacklens.alerts.errors import AlertInputError
from stacklens.control.db import session_scope
from stacklens.metrics.catalog import budget_metrics
from stacklens.performance.budget_rules import METRICS as BUDGET_METRICS
from stacklens.performance.budget_rules import validate_budget
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project


def test_every_budget_metric_is_a_rule_metric_and_the_other_way_round(settings: Settings) -> None:
    org_id, _, slug = org_with_project(settings)
    assert set(rule_types.METRICS) == set(BUDGET_METRICS) == set(budget_metrics())
    base = {"name": "r", "type": "performance_budget", "project": slug, "threshold": 1}
    with session_scope(settings) as session:
        for metric, statistics in rule_types.METRICS.items():
            for statistic in statistics:
                cleaned = rule_validation.clean(
                    session, org_id, {**base, "metric": metric, "statistic": statistic}
                )
                expected = budget_metrics()[metric].same_as or (metric, statistic)
                assert (cleaned["metric"], cleaned["statistic"]) == expected, metric
                assert validate_budget(metric, "*", 1, statistic).statistic == statistic
        # A statistic that is part of the metric is the metric's own, as for budgets.
        assert (
            rule_validation.clean(session, org_id, {**base, "metric": "js_bytes", "statistic": "p75"})[
                "statistic"
            ]
            == "avg"
        )
        assert rule_validation.clean(session, org_id, {**base, "metric": "api_p95_ms"})["metric"] == "api_ms"
        with pytest.raises(AlertInputError, match="statistic: lcp_ms keeps p75"):
            rule_validation.clean(session, org_id, {**base, "metric": "lcp_ms", "statistic": "p95"})
        with pytest.raises(AlertInputError, match="metric: unknown metric 'lcp'"):
            rule_validation.clean(
                session, org_id, {**base, "metric": "lcp"}
            )  # a view's alias is not a rule key
        with pytest.raises(AlertInputError, match="metric: unknown metric"):
            rule_validation.clean(session, org_id, {**base, "metric": ["lcp_ms"]})
