"""Validation of a rule's body (stacklens/alerts/rule_validation.py): each rule type's fields, the bad one
named."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.alerts import rule_validation, rules
from stacklens.alerts.errors import AlertInputError
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project


def test_release_rule_types_validate_their_fields_and_name_the_bad_one(settings: Settings) -> None:
    """A crash-free rate needs a threshold in %, watches crash-free sessions (the default) or users, warns
    above its threshold and resolves at or above it; a release regression needs no threshold. Both watch
    the newest release: no release, level or tag filter."""
    org_id, _, slug = org_with_project(settings)
    crash = {"name": "c", "type": "crash_free_rate", "project": slug, "threshold": 99}
    with session_scope(settings) as session:
        cleaned = rule_validation.clean(session, org_id, crash)
        assert (cleaned["metric"], cleaned["threshold"], cleaned["min_samples"]) == (
            "crash_free_sessions",
            99,
            100,
        )
        assert cleaned["window_seconds"] == 86400 and cleaned["statistic"] == "" and cleaned["scope"] == "*"
        users = rule_validation.clean(
            session, org_id, {**crash, "metric": "crash_free_users", "warning_threshold": "99.5"}
        )
        assert (users["metric"], users["warning_threshold"]) == ("crash_free_users", 99.5)
        regression = rule_validation.clean(
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
                rule_validation.clean(session, org_id, {**crash, **change})
            assert str(caught.value).startswith(message), (change, str(caught.value))
        with pytest.raises(
            AlertInputError, match="tag: a release regression rule watches the newest release"
        ):
            rule_validation.clean(
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
