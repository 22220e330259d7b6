"""The words of a notification: what fired, the value against the threshold, since when, the release it
started in, and a link back to the issue, the budget or the performance page. Event data is escaped in
HTML."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import quote

from stacklens.alerts.anomaly_messages import amount
from stacklens.alerts.measures import Measurement
from stacklens.alerts.rule_types import TYPE_LABELS, fires_below, format_window
from stacklens.alerts.state import fmt
from stacklens.anomalies.live import rule_fields
from stacklens.control.models.alerts import AlertRule
from stacklens.metrics.catalog import CATALOG, find
from stacklens.metrics.formatting import format_value

FAILED_TRANSACTIONS = "failed_transactions_pct"  # what an error_rate rule measures
KIND_WORDS = {"firing": "Firing", "resolved": "Resolved", "renotify": "Still firing", "test": "Test"}


@dataclass(frozen=True)
class Context:
    base_url: str
    org_slug: str
    project_slug: str


def what(rule: AlertRule) -> tuple[str, str]:
    """(what is measured, unit) in plain words: the metric catalog's label and unit for a performance rule."""
    if rule.type == "performance_budget":
        metric = find(rule.metric)
        label, unit = (metric.label, metric.unit.symbol) if metric else (rule.metric, "")
        statistic = "" if metric is None or metric.fixed_statistic else f" {rule.statistic}"
        scope = "all pages" if rule.scope == "*" else rule.scope
        return f"{label}{statistic} on {scope}", unit
    if rule.type == "error_rate":  # the catalog's failed_transactions_pct ("Failed transactions")
        metric = CATALOG[FAILED_TRANSACTIONS]
        return metric.label, metric.unit.symbol
    if rule.type == "event_frequency":
        return f"{rule.count_kind} per issue", rule.count_kind
    if rule.type == "crash_free_rate":  # the catalog's label: "Crash-free sessions", "Crash-free users"
        metric = find(rule.metric)
        return f"{metric.label if metric else rule.metric} of the newest release", "%"
    return TYPE_LABELS[rule.type].lower(), ""


def metric_words(rule: AlertRule) -> str:
    """A performance rule's metric as a condition names it, from the catalog: its short label and statistic
    (``LCP p75``, ``Load time avg``), or its label when the statistic is part of it (``JavaScript size per
    page view``, ``Error rate``); an unknown key as it is."""
    metric = find(rule.metric)
    if metric is None:
        return f"{rule.metric} {rule.statistic}".strip()
    if metric.fixed_statistic:
        return metric.label
    return f"{metric.short_label} {rule.statistic or metric.default_statistic}"


def value_text(rule: AlertRule, value: float | None) -> str:
    """A measured value or threshold of the rule as every page writes it (a performance metric through the
    catalog: ``2,004.9 ms``, ``250.0 KiB``; a share of failed transactions ``3.4 %``; a count ``12 events``,
    ``1 new issue``): a value never goes without its unit."""
    if rule.type == "anomaly":  # in the watched metric's unit (stacklens.alerts.anomaly_messages)
        return amount(rule_fields(rule), value)
    if value is not None and rule.type == "performance_budget" and find(rule.metric) is not None:
        return format_value(rule.metric, value, rule.statistic)
    if value is not None and rule.type == "crash_free_rate" and find(rule.metric) is not None:
        return format_value(rule.metric, value)  # two decimals: 99.95 %
    if rule.type == "release_regression":  # what a release's verdict was
        return fmt(value, "") if value is None else ("regression" if value else "no regression")
    if rule.type in ("new_issue", "regression"):  # what fired: a count of new or regressed issues
        if value is None:
            return fmt(value, "")
        noun = "new issue" if rule.type == "new_issue" else "regression"
        count = format_value("error_events", value, "count")
        return f"{count} {noun}" if count == "1" else f"{count} {noun}s"
    return fmt(value, what(rule)[1])


def link(rule: AlertRule, ctx: Context, m: Measurement | None) -> str:
    project = f"{ctx.base_url}/orgs/{ctx.org_slug}/projects/{ctx.project_slug}"
    if m is not None and m.issue_id is not None:
        return f"{project}/issues/{m.issue_id}"
    if rule.type in ("crash_free_rate", "release_regression") and m is not None and m.release:
        return f"{project}/releases/{quote(m.release, safe='')}"  # the release page: its charts and verdict
    if rule.type == "performance_budget":
        if rule.budget_id is not None:
            return f"{project}/performance/budgets"
        if rule.scope != "*" and "*" not in rule.scope:
            return f"{project}/performance/pages/detail?page={quote(rule.scope, safe='')}"
        return f"{project}/performance"
    return f"{ctx.base_url}/orgs/{ctx.org_slug}/alerts/{rule.id}"


def compose(
    rule: AlertRule, kind: str, m: Measurement, since: datetime, release: str, ctx: Context
) -> dict[str, Any]:
    """The outbox payload: subject, text, html, link and the webhook's structured data."""
    measured = what(rule)[0]
    env = f" in {rule.environment}" if rule.environment else ""
    target = link(rule, ctx, m)
    lines: list[tuple[str, str]] = []
    if rule.type in ("new_issue", "regression"):
        headline = f"{TYPE_LABELS[rule.type]}: {m.title or 'issue ' + str(m.issue_id)}"
        lines.append(("What", f"{TYPE_LABELS[rule.type]} in {ctx.project_slug}{env}: {m.title}"))
    elif rule.type == "release_regression":  # the verdict's reasons: metric, both values, both sample sizes
        headline = f"{TYPE_LABELS[rule.type]}: {m.title}"
        lines.append(
            ("What", f"{m.title} in {ctx.project_slug}{env}, over {format_window(rule.window_seconds)}")
        )
        lines.extend(("Why", reason) for reason in m.reasons)
    else:
        subject_of = f"issue {m.title!r}: " if m.issue_id is not None else ""
        value, threshold = value_text(rule, m.value), value_text(rule, rule.threshold)
        relation = ">" if kind != "resolved" else "<="
        if fires_below(rule.type, rule.metric):  # a crash-free rate, uptime: fires below its threshold
            relation = "<" if kind != "resolved" else ">="
        against = (
            threshold
            if kind != "resolved" or rule.resolve_threshold is None
            else value_text(rule, rule.resolve_threshold)
        )
        headline = f"{rule.name}: {subject_of}{measured} {value} {relation} {against}"
        lines.append(
            ("What", f"{measured}{env} over {format_window(rule.window_seconds)} ({ctx.project_slug})")
        )
        counted = f"{m.samples:,} sessions" if rule.type == "crash_free_rate" else f"{m.samples} samples"
        lines.append(("Value", f"{value} against threshold {threshold} ({counted})"))
    lines.append(("Since", since.strftime("%Y-%m-%d %H:%M UTC")))
    lines.append(("Release", release or "unknown"))
    lines.append(("Rule", f"{rule.name} ({TYPE_LABELS[rule.type]})"))
    subject = f"[{KIND_WORDS.get(kind, kind)}] {headline}"
    text = "\n".join(f"{k}: {v}" for k, v in lines) + f"\n\nOpen: {target}\n"
    rows = "".join(f"<tr><th align='left'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in lines)
    html = (
        f"<h2>{escape(subject)}</h2><table>{rows}</table>"
        f'<p><a href="{escape(target)}">Open in StackLens</a></p>'
    )
    data = {
        "rule_id": rule.id,
        "rule": rule.name,
        "rule_type": rule.type,
        "state": kind,
        "project": ctx.project_slug,
        "scope": m.scope_key,
        "value": m.value,
        "threshold": rule.threshold,
        "samples": m.samples,
        "since": since.isoformat().replace("+00:00", "Z"),
        "release": release,
        "issue_id": m.issue_id,
        "window_start": m.window_start.isoformat().replace("+00:00", "Z"),
        "window_end": m.window_end.isoformat().replace("+00:00", "Z"),
    }
    if m.reasons:  # a release regression's verdict, as the release pages and API state it
        data["reasons"] = list(m.reasons)
    return {"subject": subject[:250], "text": text, "html": html, "link": target, "data": data}


def channel_test_payload(channel_name: str, base_url: str, org_slug: str) -> dict[str, Any]:
    target = f"{base_url}/orgs/{org_slug}/settings/channels"
    text = (
        f"This is a test notification to the channel {channel_name!r}, sent through the same outbox as real "
        f"alerts.\n\nOpen: {target}\n"
    )
    return {
        "subject": f"[Test] StackLens channel {channel_name}",
        "text": text,
        "html": f"<p>This is a test notification to the channel <b>{escape(channel_name)}</b>.</p>"
        f'<p><a href="{escape(target)}">Open in StackLens</a></p>',
        "link": target,
        "data": {"test": True, "channel": channel_name},
    }
