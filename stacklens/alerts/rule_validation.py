"""Validation of an alert rule's request body (docs/reference.md field names): :func:`clean` reads a body of
any
shape into the rule's column values, or raises :class:`AlertInputError` naming the field."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts.errors import AlertInputError
from stacklens.alerts.rule_types import (
    CRASH_FREE_METRICS,
    DEFAULT_WINDOWS,
    LEVELS,
    METRICS,
    MONITOR_STATUSES,
    RELEASE_TYPES,
    RULE_TYPES,
    STATISTICS,
    THRESHOLD_TYPES,
    TYPE_LABELS,
    RuleBody,
    RuleValues,
    fires_below,
    parse_window,
)
from stacklens.anomalies.rule_fields import anomaly_fields, history_seconds
from stacklens.control.models import Project
from stacklens.control.models.alerts import AlertChannel
from stacklens.metrics.catalog import CATALOG, budget_metrics


def _number(
    value: object, field: str, *, required: bool, minimum: float = 0.0, maximum: float | None = None
) -> float | None:
    if value is None or value == "":
        if required:
            raise AlertInputError(field, "is required for this rule type")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise AlertInputError(field, f"must be a number (got {type(value).__name__})")
    try:
        number = float(value)
    except ValueError as exc:
        raise AlertInputError(field, f"must be a number (got {value!r})") from exc
    if number != number or number in (float("inf"), float("-inf")) or number < minimum:
        raise AlertInputError(field, f"must be a finite number >= {minimum:g}")
    if maximum is not None and number > maximum:
        raise AlertInputError(field, f"must be at most {maximum:g}")
    return number


def _integer(value: object, field: str, default: int, minimum: int, maximum: int) -> int:
    if value is None or value == "":
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | str)  # the JSON values int() could take
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise AlertInputError(field, f"must be a whole number (got {value!r})")
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise AlertInputError(field, f"must be a whole number (got {value!r})") from exc
    if not minimum <= number <= maximum:
        raise AlertInputError(field, f"must be between {minimum} and {maximum}")
    return number


def _text(value: object, field: str, max_len: int, pattern: re.Pattern[str] | None = None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value.strip()) > max_len:
        raise AlertInputError(field, f"must be text of at most {max_len} characters")
    value = value.strip()
    if value and pattern is not None and not pattern.match(value):
        raise AlertInputError(field, f"{value!r} is not valid")
    return value


def clean(session: Session, org_id: int, body: RuleBody) -> RuleValues:
    """The validated column values of a rule from a request body (all fields, defaults applied)."""
    kind = body.get("type")
    if kind not in RULE_TYPES:
        raise AlertInputError("type", f"unknown rule type {kind!r}; use one of {', '.join(RULE_TYPES)}")
    name = _text(body.get("name"), "name", 200)
    if not name:
        raise AlertInputError("name", "give the rule a name")
    slug = body.get("project")
    project = (
        session.scalar(select(Project).where(Project.slug == slug, Project.org_id == org_id))
        if isinstance(slug, str)
        else None
    )
    if project is None:
        raise AlertInputError("project", f"no project {slug!r} in this organization")
    window_seconds = parse_window(body.get("window") or DEFAULT_WINDOWS.get(kind, "1h"))
    environment = _text(body.get("environment"), "environment", 64)
    metric, statistic, scope = "", "", "*"
    anomaly = anomaly_fields(body) if kind == "anomaly" else None
    if anomaly is not None:  # the history it learns from: at least two seasons
        window_seconds = history_seconds(body.get("window"), anomaly.seasonality)
    if kind == "performance_budget":
        asked = body.get("metric")
        if not isinstance(asked, str) or asked not in METRICS:
            raise AlertInputError("metric", f"unknown metric {asked!r}; use one of {', '.join(METRICS)}")
        metric = asked
        spec = budget_metrics()[metric]
        statistic = body.get("statistic") or spec.default_statistic
        if spec.fixed_statistic:  # part of the metric (API p95, bytes per view, error %), as for budgets
            statistic = spec.default_statistic
        if statistic not in METRICS[metric]:
            raise AlertInputError(
                "statistic",
                f"{metric} keeps {', '.join(METRICS[metric])}; "
                f"{statistic!r} is not one of them (all: {', '.join(STATISTICS)})",
            )
        if spec.same_as is not None:  # another name for a metric and statistic: stored as those
            metric, statistic = spec.same_as
        if window_seconds < 3600:
            raise AlertInputError(
                "window", "a performance rule needs a window of at least 1h (hourly states)"
            )
        # An uptime rule's scope is a monitor's slug (or a pattern of them), as an uptime budget's.
        pattern = r"^(\*|[A-Za-z0-9_*-]{1,100})$" if spec.kind == "monitor_checks" else r"^(\*|/\S*)$"
        scope = _text(body.get("scope") or "*", "scope", 300, re.compile(pattern)) or "*"
    if kind == "crash_free_rate":
        metric = body.get("metric") or CRASH_FREE_METRICS[0]
        if metric not in CRASH_FREE_METRICS:
            raise AlertInputError(
                "metric",
                f"a crash-free rate rule watches {' or '.join(CRASH_FREE_METRICS)} (got {metric!r})",
            )
    below = fires_below(kind, metric)
    percent = kind in ("error_rate", "crash_free_rate") or (
        bool(metric) and CATALOG[metric].unit.symbol == "%"
    )
    maximum = 100.0 if percent else None
    required = kind in THRESHOLD_TYPES
    threshold = _number(body.get("threshold"), "threshold", required=required, maximum=maximum)
    warning = _number(body.get("warning_threshold"), "warning_threshold", required=False, maximum=maximum)
    resolve = _number(body.get("resolve_threshold"), "resolve_threshold", required=False, maximum=maximum)
    # A rule that fires below: its warning sits above the threshold, and firing stops at or above resolve.
    if below:
        if threshold is not None and warning is not None and warning <= threshold:
            raise AlertInputError(
                "warning_threshold", "must be above the threshold (this rule fires below it)"
            )
        if threshold is not None and resolve is not None and resolve < threshold:
            raise AlertInputError(
                "resolve_threshold",
                "must be at least the threshold (it is where firing stops; this rule fires below it)",
            )
    if not below and threshold is not None and warning is not None and warning >= threshold:
        raise AlertInputError("warning_threshold", "must be below the threshold")
    if not below and threshold is not None and resolve is not None and resolve > threshold:
        raise AlertInputError("resolve_threshold", "must be at most the threshold (it is where firing stops)")
    min_samples = _integer(
        body.get("min_samples"),
        "min_samples",
        # A crash-free rate needs sessions: the release verdicts' minimum for crash-free sessions (100).
        {"performance_budget": 20, "error_rate": 20, "crash_free_rate": 100}.get(kind, 1),
        1,
        1_000_000,
    )
    count_kind = body.get("count_kind") or "events"
    if count_kind not in ("events", "users"):
        raise AlertInputError("count_kind", "must be events or users")
    filters = _monitor_filters(body) if kind == "monitor" else _filters(body.get("filters") or {}, body)
    if kind in RELEASE_TYPES and filters:
        refused = next(iter(filters))
        raise AlertInputError(
            refused,
            f"a {TYPE_LABELS[kind].lower()} rule watches the newest release's sessions: no {refused} filter",
        )
    if anomaly is not None:  # its settings are kept in filters, its minimum count in min_samples
        metric, statistic, scope = anomaly.metric, anomaly.statistic, anomaly.scope
        min_samples, filters = anomaly.min_count, anomaly.filters
    renotify_minutes = _integer(body.get("renotify_minutes"), "renotify_minutes", 0, 0, 7 * 24 * 60)
    channel_ids = _channels(session, org_id, body.get("channels"))
    return {
        "type": kind,
        "name": name,
        "project_id": project.id,
        "window_seconds": window_seconds,
        "environment": environment,
        "metric": metric,
        "statistic": statistic,
        "scope": scope,
        "threshold": threshold if required else None,
        "warning_threshold": warning if required else None,
        "resolve_threshold": resolve if required else None,
        "min_samples": min_samples,
        "count_kind": count_kind,
        "filters": filters,
        "renotify_minutes": renotify_minutes,
        "channel_ids": channel_ids,
        "enabled": body.get("enabled", True) is not False,
    }


def _monitor_filters(body: RuleBody) -> dict[str, str]:
    """A monitor rule's ``monitors`` (slugs; absent, empty or ``"all"``: every monitor of the project) and
    ``statuses`` (of missed, timeout, error, down; absent or empty: all), stored comma-joined."""
    monitors = body.get("monitors")
    if monitors in (None, "", "all", ["all"]):
        monitors = []
    if not isinstance(monitors, list) or not all(
        isinstance(m, str) and re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", m) for m in monitors
    ):
        raise AlertInputError("monitors", 'must be a list of monitor slugs, or "all"')
    statuses = body.get("statuses") or []
    if not isinstance(statuses, list) or not all(s in MONITOR_STATUSES for s in statuses):
        raise AlertInputError("statuses", f"must be a list of {', '.join(MONITOR_STATUSES)}")
    return {"monitors": ",".join(dict.fromkeys(monitors)), "statuses": ",".join(dict.fromkeys(statuses))}


def _filters(raw: object, body: RuleBody) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise AlertInputError("filters", "must be an object with release, level and tag")
    merged = {k: raw.get(k, body.get(k)) for k in ("release", "level", "tag")}
    out = {}
    if merged["release"]:
        out["release"] = _text(merged["release"], "release", 200)
    if merged["level"]:
        if merged["level"] not in LEVELS:
            raise AlertInputError(
                "level", f"unknown level {merged['level']!r}; use one of {', '.join(LEVELS)}"
            )
        out["level"] = merged["level"]
    if merged["tag"]:
        tag = _text(merged["tag"], "tag", 200)
        if ":" not in tag or not tag.split(":", 1)[0]:
            raise AlertInputError("tag", "write a tag filter as key:value")
        out["tag"] = tag
    return out


def _channels(session: Session, org_id: int, raw: object) -> list[int]:
    if raw in (None, ""):
        return []
    if not isinstance(raw, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in raw):
        raise AlertInputError("channels", "must be a list of channel ids")
    owned = set(
        session.scalars(
            select(AlertChannel.id).where(
                AlertChannel.org_id == org_id,
                AlertChannel.id.in_(raw or [-1]),
                AlertChannel.personal_user_id.is_(None),  # a person's own channel takes no alert rules
            )
        )
    )
    missing = [c for c in raw if c not in owned]
    if missing:
        raise AlertInputError("channels", f"no channel {missing[0]} in this organization")
    return sorted(set(raw))
