"""An anomaly rule's chart (the rule page and the New Rule form's backtest): each hour's value, the expected
value and the band around it (shaded), and the hours where the rule fired (or would have) marked in red.
A gap in the data or a learning hour is a gap in the line and the band, never 0 (docs/alerts.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import plotly.graph_objects as go
from sqlalchemy.orm import Session

from dashboards.figure_json import figure_json
from dashboards.marker_figures import mark_charts
from stacklens.alerts.anomaly_messages import amount, measured
from stacklens.anomalies.backtest import BacktestAnswer, backtest
from stacklens.anomalies.band_rows import recent
from stacklens.anomalies.live import rule_fields
from stacklens.anomalies.rule_fields import COUNTED, AnomalyFields
from stacklens.anomalies.series import hour_floor
from stacklens.control.models.alerts import AlertRule
from stacklens.metrics.catalog import find

BAND = "rgba(11, 92, 173, 0.15)"
LINE = "#0b5cad"
FIRE = "#b42318"


def unit_of(fields: AnomalyFields) -> str:
    """The y axis' unit: what is counted, or the catalog's unit symbol."""
    if fields.metric in COUNTED:
        return f"{fields.metric} per hour"
    metric = find(fields.metric)
    return f"{metric.short_label} ({metric.unit.symbol})" if metric and metric.unit.symbol else fields.metric


def anomaly_figure(fields: AnomalyFields, answer: BacktestAnswer, title: str) -> dict[str, Any]:
    points = answer["points"]
    x = [p["time"] for p in points]
    figure = go.Figure()
    # The band: its lower edge, then the upper edge filled down to it.
    figure.add_scatter(
        x=x,
        y=[p["lower"] for p in points],
        mode="lines",
        line={"width": 0},
        connectgaps=False,
        hoverinfo="skip",
        showlegend=False,
    )
    figure.add_scatter(
        x=x,
        y=[p["upper"] for p in points],
        mode="lines",
        line={"width": 0},
        fill="tonexty",
        fillcolor=BAND,
        connectgaps=False,
        name="band (normal range)",
        hoverinfo="skip",
    )
    figure.add_scatter(
        x=x,
        y=[p["expected"] for p in points],
        mode="lines",
        line={"color": LINE, "dash": "dot", "width": 1},
        connectgaps=False,
        name="expected",
        customdata=[[amount(fields, p["lower"]), amount(fields, p["upper"])] for p in points],
        hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>expected %{y:,.1f}<br>band %{customdata[0]} – "
        "%{customdata[1]}<extra></extra>",
    )
    figure.add_scatter(
        x=x,
        y=[p["value"] for p in points],
        mode="lines",
        line={"color": LINE, "width": 1.5},
        connectgaps=False,
        name=measured(fields),
        customdata=[
            [amount(fields, p["value"]), "—" if p["score"] is None else f"{p['score']:+.1f}"] for p in points
        ],
        hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{customdata[0]}<br>score %{customdata[1]}<extra></extra>",
    )
    fires = answer["fires"]
    figure.add_scatter(
        x=[f["time"] for f in fires],
        y=[f["value"] for f in fires],
        mode="markers",
        marker={"color": FIRE, "size": 11, "symbol": "x"},
        name="fired",
        customdata=[
            [
                amount(fields, f["value"]),
                amount(fields, f["expected"]),
                f"{f['score'] or 0:+.1f}",
                ", ".join(f["releases"]) or "none",
            ]
            for f in fires
        ],
        hovertemplate="fired %{x|%Y-%m-%d %H:%M} UTC<br>%{customdata[0]}, expected %{customdata[1]}"
        "<br>score %{customdata[2]} · releases nearby: %{customdata[3]}<extra></extra>",
    )
    if not any(p["value"] is not None for p in points):
        figure.add_annotation(
            text="no data in these days", xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False
        )
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=320,
        margin={"l": 64, "r": 10, "t": 34, "b": 60},
        legend={"orientation": "h", "y": -0.32},
        plot_bgcolor="#fff",
        xaxis={"type": "date", "title": {"text": "Time (UTC), hourly"}},
        yaxis={
            "title": {"text": unit_of(fields)},
            "rangemode": "tozero" if fields.metric in COUNTED else "normal",
        },
    )
    return figure_json(figure)


def anomaly_body(body: dict[str, Any]) -> dict[str, Any]:
    """The New Rule form's anomaly fields as the API names them: its own metric list, its minimum count;
    the window (the history it learns from) and the threshold rules' fields are left to their defaults."""
    dropped = ("window", "min_samples", "metric", "statistic", "days", "anomaly_metric")
    out = {k: v for k, v in body.items() if k not in dropped}
    if body.get("anomaly_metric"):
        out["metric"] = body["anomaly_metric"]
    return out


def anomaly_chart(
    client: Any, db: Session, org_id: int, org_slug: str, rule: AlertRule, days: int, what: str
) -> dict[str, Any]:
    """An anomaly rule's last ``days`` (saved or not): its backtest and the chart of its band with the
    firings marked, the releases and annotations of its project as markers."""
    fields, now = rule_fields(rule), datetime.now(UTC)
    answer = backtest(
        client, org_id, rule.project_id, fields, rule.environment, days, rule.window_seconds, now
    )
    fired = len(answer["fires"])
    title = (
        f"Backtest: {measured(fields)} over the last {days} days would have fired {fired} time(s)"
        if what == "Backtest"
        else f"{measured(fields)} over the last {days} days: fired {fired} time(s)"
    )
    figure = anomaly_figure(fields, answer, title)
    mark_charts([figure], client, db, org_id, org_slug, [rule.project_id], now - timedelta(days=days), now)
    rows = [
        {
            "time": f["time"].replace("T", " ").replace(":00:00Z", ":00"),
            "value": amount(fields, f["value"]),
            "expected": amount(fields, f["expected"]),
            "band": f"{amount(fields, f['lower'])} – {amount(fields, f['upper'])}",
            "score": f"{f['score'] or 0:+.1f}",
            "seasonality": f["seasonality"],
            "releases": ", ".join(f["releases"]) or "none",
        }
        for f in answer["fires"]
    ]
    return {
        "backtest": answer,
        "backtest_rows": rows,
        "backtest_figure": figure,
        "backtest_days": days,
        "anomaly_fields": fields,
    }


def band_table(client: Any, org_id: int, rule: AlertRule) -> list[dict[str, str]]:
    """The rule's last hours as the ``anomaly_bands`` asset judged them, newest first, written in the
    metric's unit (a gap says so, a learning hour too)."""
    fields = rule_fields(rule)
    return [
        {
            "hour": r.bucket.strftime("%Y-%m-%d %H:00"),
            "value": "gap" if r.value is None else amount(fields, r.value),
            "expected": "learning" if r.expected is None else amount(fields, r.expected),
            "band": "—" if r.lower is None else f"{amount(fields, r.lower)} – {amount(fields, r.upper)}",
            "score": "—" if r.score is None else f"{r.score:+.1f}",
            "seasonality": r.seasonality,
            "state": "firing" if r.firing else "ok",
        }
        for r in recent(client, org_id, rule.id, hour_floor(datetime.now(UTC)) - timedelta(hours=24))
    ]
