"""An anomaly rule's chart (docs/alerts.md): the band as a shaded range between its edges, the expected
value, the values (gaps stay gaps), the firings as red marks; the axis names what is counted or the unit;
the form's anomaly fields map to the API's names."""

from __future__ import annotations

from dashboards.anomaly_figures import FIRE, anomaly_body, anomaly_figure, unit_of
from stacklens.anomalies.backtest import BandPoint, Firing
from stacklens.anomalies.rule_fields import anomaly_fields

POINTS: list[BandPoint] = [
    {
        "time": "2026-11-24T09:00:00Z",
        "value": 20.0,
        "expected": 21.0,
        "lower": 10.0,
        "upper": 32.0,
        "score": -0.2,
    },
    {
        "time": "2026-11-24T10:00:00Z",
        "value": None,
        "expected": None,
        "lower": None,
        "upper": None,
        "score": None,
    },
    {
        "time": "2026-11-24T11:00:00Z",
        "value": 90.0,
        "expected": 22.0,
        "lower": 11.0,
        "upper": 33.0,
        "score": 9.1,
    },
]


def test_the_band_the_gap_and_the_firing() -> None:
    fields = anomaly_fields({"metric": "events"})
    fire: Firing = {**POINTS[2], "releases": ["1.1"], "seasonality": "daily"}
    figure = anomaly_figure(fields, {"points": POINTS, "fires": [fire]}, "title")
    traces = {t.get("name", ""): t for t in figure["data"]}
    assert traces["band (normal range)"]["fill"] == "tonexty"
    assert traces["events of the project"]["y"] == [20.0, None, 90.0]  # a gap, not 0
    assert traces["events of the project"]["connectgaps"] is False
    assert traces["fired"]["x"] == ["2026-11-24T11:00:00Z"] and traces["fired"]["marker"]["color"] == FIRE
    assert figure["layout"]["yaxis"]["title"]["text"] == "events per hour"
    assert unit_of(anomaly_fields({"metric": "lcp_ms"})) == "LCP (ms)"


def test_the_forms_anomaly_fields() -> None:
    body = {
        "type": "anomaly",
        "anomaly_metric": "users",
        "metric": "lcp_ms",
        "window": "7d",
        "min_samples": "20",
    }
    assert anomaly_body(body) == {"type": "anomaly", "metric": "users"}
