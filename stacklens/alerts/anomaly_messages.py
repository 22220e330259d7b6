"""The words of an anomaly rule (docs/alerts.md, "Anomaly rules"): what it watches, its values in the
metric's unit, and the notification that explains itself — the value, what was expected, the band, the score,
the seasonality used and the releases first seen near the firing — for e-mail, Slack and webhooks alike."""

from __future__ import annotations

from html import escape
from typing import Any

from stacklens.anomalies.live import AnomalyReading, rule_fields
from stacklens.anomalies.rule_fields import COUNTED, AnomalyFields
from stacklens.control.models.alerts import AlertRule
from stacklens.metrics.catalog import find
from stacklens.metrics.formatting import format_value

KIND_WORDS = {"firing": "Firing", "resolved": "Resolved", "renotify": "Still firing"}
SIDE = {"up": "above", "down": "below", "both": "outside"}


def measured(fields: AnomalyFields) -> str:
    """What the rule watches in words: ``LCP p75 on /checkout``, ``events of issue 12``."""
    if fields.metric in COUNTED:
        return f"{fields.metric} of {'the project' if fields.scope == '*' else 'issue ' + fields.scope}"
    metric = find(fields.metric)
    label = metric.short_label if metric else fields.metric
    statistic = (
        "" if metric is None or metric.fixed_statistic or not fields.statistic else f" {fields.statistic}"
    )
    scope = "" if fields.scope == "*" else f" on {fields.scope}"
    return f"{label}{statistic}{scope}"


def amount(fields: AnomalyFields, value: float | None) -> str:
    """A value in the metric's unit, as the pages write it (``2,004.9 ms``, ``312 events``, ``99.95 %``)."""
    if value is None:
        return "no data"
    if fields.metric in COUNTED:
        return (
            f"{value:,.0f} {fields.metric}"
            if abs(value - round(value)) < 0.05
            else f"{value:,.1f} {fields.metric}"
        )
    if find(fields.metric) is not None:
        return format_value(fields.metric, value, fields.statistic or None)
    return f"{value:,.2f}"


def condition(rule: AlertRule) -> str:
    """The rule's condition for the alert list: ``events of the project outside its normal band (auto
    seasonality, medium sensitivity, at least 10 events)``."""
    fields = rule_fields(rule)
    unit = "samples" if fields.metric not in COUNTED else "events"
    return (
        f"{measured(fields)} {SIDE[fields.direction]} its normal band ({fields.seasonality} seasonality, "
        f"{fields.sensitivity} sensitivity, at least {fields.min_count:,} {unit} an hour)"
    )


def explanation(reading: AnomalyReading) -> list[tuple[str, str]]:
    """The lines that explain a firing (or the latest hour when nothing fired)."""
    fields, shown = reading.fields, reading.fired or reading.latest
    lines = [
        ("Value", f"{amount(fields, shown['value'])} in the hour from {shown['time']}"),
        ("Expected", amount(fields, shown["expected"])),
        ("Band", f"{amount(fields, shown['lower'])} – {amount(fields, shown['upper'])}"),
        ("Score", "—" if shown["score"] is None else f"{shown['score']:+.1f} (band edge ±{fields.k:g})"),
        (
            "Seasonality",
            f"{reading.seasonality} ({fields.seasonality} asked, {fields.sensitivity} sensitivity)",
        ),
        ("Releases nearby", ", ".join(reading.releases) or "none in the 6 hours before"),
    ]
    return lines


def compose_anomaly(
    rule: AlertRule, kind: str, reading: AnomalyReading, project_slug: str, link: str
) -> dict[str, Any]:
    """The outbox payload of an anomaly rule's firing or resolution."""
    fields, shown = reading.fields, reading.fired or reading.latest
    env = f" in {rule.environment}" if rule.environment else ""
    if kind == "resolved":
        latest = reading.latest
        headline = (
            f"{rule.name}: {measured(fields)} back inside its band "
            f"({amount(fields, latest['value'])}, expected {amount(fields, latest['expected'])})"
        )
    else:
        headline = (
            f"{rule.name}: {measured(fields)} {amount(fields, shown['value'])}, expected "
            f"{amount(fields, shown['expected'])} (band {amount(fields, shown['lower'])} – "
            f"{amount(fields, shown['upper'])}, score {shown['score'] or 0:+.1f})"
        )
    lines = [("What", f"{measured(fields)}{env} ({project_slug}), hourly"), *explanation(reading)]
    lines.append(("Rule", f"{rule.name} (Anomaly)"))
    subject = f"[{KIND_WORDS.get(kind, kind)}] {headline}"
    text = "\n".join(f"{k}: {v}" for k, v in lines) + f"\n\nOpen: {link}\n"
    rows = "".join(f"<tr><th align='left'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in lines)
    html = f'<h2>{escape(subject)}</h2><table>{rows}</table><p><a href="{escape(link)}">Open in StackLens</a></p>'
    data = {
        "rule_id": rule.id,
        "rule": rule.name,
        "rule_type": rule.type,
        "state": kind,
        "project": project_slug,
        "metric": fields.metric,
        "statistic": fields.statistic,
        "scope": fields.scope,
        "time": shown["time"],
        "value": shown["value"],
        "expected": shown["expected"],
        "lower": shown["lower"],
        "upper": shown["upper"],
        "score": shown["score"],
        "seasonality": reading.seasonality,
        "sensitivity": fields.sensitivity,
        "direction": fields.direction,
        "releases": list(reading.releases),
        "latest": dict(reading.latest),
    }
    return {"subject": subject[:250], "text": text, "html": html, "link": link, "data": data}
