"""An anomaly rule's words (docs/alerts.md): the notification names the value, the expected value, the band,
the score, the seasonality and the releases nearby, in its unit; event data (the rule's name) is escaped in
the HTML; the condition reads in words."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.alerts.anomaly_messages import amount, compose_anomaly, condition, measured
from stacklens.anomalies.backtest import BandPoint
from stacklens.anomalies.live import AnomalyReading
from stacklens.anomalies.rule_fields import anomaly_fields
from stacklens.control.models.alerts import AlertRule

AT = datetime(2026, 11, 24, 10, tzinfo=UTC)
POINT: BandPoint = {
    "time": "2026-11-24T10:00:00Z",
    "value": 4210.0,
    "expected": 2050.0,
    "lower": 1600.0,
    "upper": 2500.0,
    "score": 24.0,
}


def _rule(**kw) -> AlertRule:
    base = {
        "id": 4,
        "name": "<b>LCP</b>",
        "type": "anomaly",
        "metric": "lcp_ms",
        "statistic": "p75",
        "scope": "/checkout",
        "filters": {"seasonality": "auto"},
        "min_samples": 20,
        "environment": "production",
    }
    return AlertRule(**{**base, **kw})


def test_a_firing_explains_itself_in_the_metrics_unit() -> None:
    fields = anomaly_fields({"metric": "lcp_ms", "scope": "/checkout"})
    reading = AnomalyReading(fields, AT, POINT, 80, True, False, "weekly", POINT, AT, ("shop@1.4.1",), 600)
    payload = compose_anomaly(_rule(), "firing", reading, "shop", "http://sl.test/orgs/acme/alerts/4")
    text = payload["text"]
    assert payload["subject"].startswith(
        "[Firing] <b>LCP</b>: LCP p75 on /checkout 4,210.0 ms, expected 2,050.0 ms"
    )
    for line in (
        "Value: 4,210.0 ms in the hour from 2026-11-24T10:00:00Z",
        "Expected: 2,050.0 ms",
        "Band: 1,600.0 ms – 2,500.0 ms",
        "Score: +24.0 (band edge ±5)",
        "Seasonality: weekly (auto asked, medium sensitivity)",
        "Releases nearby: shop@1.4.1",
    ):
        assert line in text, text
    assert "&lt;b&gt;LCP&lt;/b&gt;" in payload["html"] and "<b>LCP</b>" not in payload["html"]
    data = payload["data"]
    assert (data["expected"], data["lower"], data["upper"], data["score"]) == (2050.0, 1600.0, 2500.0, 24.0)
    assert data["seasonality"] == "weekly" and data["releases"] == ["shop@1.4.1"]
    resolved = compose_anomaly(_rule(), "resolved", reading, "shop", "http://x")
    assert resolved["subject"].startswith("[Resolved] <b>LCP</b>: LCP p75 on /checkout back inside its band")


def test_amounts_and_conditions_in_words() -> None:
    events = anomaly_fields({"metric": "events", "scope": "12"})
    assert amount(events, 312.0) == "312 events" and amount(events, None) == "no data"
    assert measured(events) == "events of issue 12"
    assert amount(anomaly_fields({"metric": "crash_free_sessions"}), 99.5).endswith("%")
    rule = _rule(metric="events", statistic="", scope="*", filters={}, min_samples=10)
    assert condition(rule) == (
        "events of the project above its normal band (auto seasonality, medium sensitivity, at least 10 events "
        "an hour)"
    )
