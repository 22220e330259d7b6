"""An anomaly rule's fields (docs/alerts.md): defaults per metric, scopes per kind of metric, every refusal
naming the field and what is allowed; the backtest's days and the history window."""

from __future__ import annotations

import pytest

from stacklens.alerts.errors import AlertInputError
from stacklens.anomalies.rule_fields import METRICS, anomaly_fields, backtest_days, history_seconds


def test_defaults_follow_the_metric() -> None:
    events = anomaly_fields({"metric": "error_events"})
    assert (events.metric, events.scope, events.seasonality, events.sensitivity, events.direction) == (
        "events",
        "*",
        "auto",
        "medium",
        "up",
    )
    assert events.min_count == 10 and events.counts and events.k == 5.0
    crash = anomaly_fields({"metric": "crash_free_sessions"})
    assert crash.direction == "down" and crash.min_count == 100 and not crash.counts
    lcp = anomaly_fields({"metric": "lcp_ms", "scope": "/checkout"})
    assert (lcp.statistic, lcp.scope, lcp.min_count) == ("p75", "/checkout", 20)
    api = anomaly_fields({"metric": "api_p95_ms", "scope": "/api/cart"})
    assert (api.metric, api.statistic) == ("api_ms", "p95")  # another name for api_ms p95
    issue = anomaly_fields({"metric": "users", "scope": "issue:42", "min_count": "0"})
    assert issue.scope == "42" and issue.min_count == 0
    assert {"events", "users", "crash_free_sessions", "uptime_pct", "lcp_ms", "inp_ms", "ttfb_ms"} <= set(
        METRICS
    )


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"metric": "cpu"}, "metric", "use one of events, users"),
        ({"metric": "lcp_ms", "statistic": "p99"}, "statistic", "lcp_ms keeps p75"),
        ({"metric": "events", "scope": "/x"}, "scope", "per project (*) or per issue"),
        ({"metric": "crash_free_sessions", "scope": "/x"}, "scope", "use *"),
        ({"metric": "lcp_ms", "scope": "checkout"}, "scope", "a route (/checkout)"),
        ({"metric": "events", "seasonality": "hourly"}, "seasonality", "auto, daily, weekly, none"),
        ({"metric": "events", "sensitivity": 3}, "sensitivity", "low, medium, high"),
        ({"metric": "events", "direction": "left"}, "direction", "up, down, both"),
        ({"metric": "events", "min_count": 1.5}, "min_count", "whole number from 0 to 1000000"),
    ],
)
def test_bad_fields_are_named(body: dict, field: str, words: str) -> None:
    with pytest.raises(AlertInputError) as caught:
        anomaly_fields(body)
    assert caught.value.field == field and words in str(caught.value)


def test_days_and_history_are_at_least_two_seasons() -> None:
    assert backtest_days(None, "weekly") == 14 and backtest_days("7", "daily") == 7
    with pytest.raises(AlertInputError, match="days: 13 days is shorter than two seasons of weekly"):
        backtest_days(13, "weekly")
    with pytest.raises(AlertInputError, match="from 7 to 28"):
        backtest_days(30, "daily")
    assert history_seconds(None, "weekly") == 28 * 86400
    with pytest.raises(AlertInputError, match="window: an anomaly rule with weekly seasonality"):
        history_seconds("7d", "weekly")
