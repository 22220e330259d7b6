"""Alert rules: validation of the request body (DESIGN §7.2 field names), create / update / delete / list.

Every threshold rule is "above" a threshold — a performance metric above a budget, more than N events (or users)
in a window, a share of failed transactions above X % — except the crash-free rate of the newest release, which
fires *below* its threshold (:data:`BELOW_TYPES`). New-issue, regression and release-regression rules fire on
each occurrence instead (a release regression once per release). Bad input
raises :class:`AlertInputError` naming the field. Callers own the transaction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.control.activity import record_activity
from stacklens.control.models import Budget, Project, utcnow
from stacklens.control.models.alerts import AlertChannel, AlertRule
from stacklens.metrics.catalog import CATALOG, budget_metrics

RULE_TYPES = (
    "performance_budget",
    "new_issue",
    "regression",
    "event_frequency",
    "error_rate",
    "crash_free_rate",
    "release_regression",
)
TYPE_LABELS = {
    "performance_budget": "Performance Budget",
    "new_issue": "New issue",
    "regression": "Regression",
    "event_frequency": "Event frequency",
    # Stored as error_rate since rules exist; it watches the catalog's failed_transactions_pct, not error_pct.
    "error_rate": CATALOG["failed_transactions_pct"].label,
    "crash_free_rate": "Crash-free rate",
    "release_regression": "Release regression",
}
LEVELS = ("fatal", "error", "warning", "info", "debug")
THRESHOLD_TYPES = ("performance_budget", "event_frequency", "error_rate", "crash_free_rate")
# Lower is worse: these fire below the threshold, warn below the warning threshold and resolve at or above the
# resolve threshold (stacklens.alerts.state.Thresholds.below).
BELOW_TYPES = ("crash_free_rate",)
# What a crash-free rate rule watches of the newest release: the metric catalog's crash-free shares (sessions
# that did not crash, users none of whose sessions crashed), the first the default.
CRASH_FREE_METRICS = ("crash_free_sessions", "crash_free_users")
# Rule types on release health: they watch the newest release, so they take no release, level or tag filter.
RELEASE_TYPES = ("crash_free_rate", "release_regression")
# The window a rule gets when the body names none: a release regression compares the newest release with the
# one before it over the release pages' default window (stacklens.releases.health.DEFAULT_RANGE), so the rule
# judges what the pages show.
DEFAULT_WINDOWS = {"performance_budget": "7d", "crash_free_rate": "24h", "release_regression": "30d"}
_WINDOW = re.compile(r"^\s*(\d{1,4})\s*([mhd])\s*$")
_UNIT = {"m": 60, "h": 3600, "d": 86400}
MAX_WINDOW = timedelta(days=30)
# A performance rule can watch every metric a budget can be set on, and the other way round: both are the
# catalog's budget metrics (stacklens.metrics). metric -> the statistics it allows, the default first.
METRICS: dict[str, tuple[str, ...]] = {
    k: (m.default_statistic, *(s for s in m.statistics if s != m.default_statistic))
    for k, m in budget_metrics().items()
}
STATISTICS = tuple(dict.fromkeys(s for m in budget_metrics().values() for s in m.statistics))
# Budget metric → (rule metric, statistic): "alert me when this budget fails". A key that is another name for
# a metric and statistic (api_p95_ms: api_ms p95) is stored as that metric and statistic.
BUDGET_METRIC_MAP = {k: m.same_as or (k, m.default_statistic) for k, m in budget_metrics().items()}
# A request body as the API and the form send it: JSON of any shape until :func:`clean` has read it.
RuleBody = Mapping[str, Any]


class RuleSettings(TypedDict):
    """What a rule watches and when it fires: the fields the stored rule (:class:`RuleValues`) and the API's
    rule (:class:`RuleOut`) share."""

    name: str
    type: str
    metric: str
    statistic: str
    scope: str
    threshold: float | None
    warning_threshold: float | None
    resolve_threshold: float | None
    min_samples: int
    count_kind: str
    environment: str
    filters: dict[str, str]  # release, level and tag ("key:value"), each when set
    renotify_minutes: int
    enabled: bool


class RuleValues(RuleSettings):
    """The validated column values of a rule (:func:`clean`)."""

    project_id: int
    window_seconds: int
    channel_ids: list[int]


class RuleOut(RuleSettings):
    """The API's rule (:func:`rule_out`): the request's field names, plus id, timestamps and the last failure."""

    id: int
    project: str  # the project's slug
    window: str  # "7d", "6h", "30m"
    channels: list[int]
    budget_id: int | None
    created_at: str
    last_error: str
    retry_at: str | None


class BudgetRuleBody(TypedDict):
    """The rule body that alerts when a budget fails (:func:`body_from_budget`)."""

    name: str
    type: str
    project: str
    metric: str
    statistic: str
    threshold: float
    scope: str
    window: str
    min_samples: int
    channels: list[int]
    budget_id: int


def parse_window(value: object, field: str = "window") -> int:
    """Seconds of ``"30m"``, ``"6h"``, ``"7d"`` (or an integer of seconds); 1 minute to 30 days."""
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and (match := _WINDOW.match(value)):
        seconds = int(match.group(1)) * _UNIT[match.group(2)]
    else:
        raise AlertInputError(field, f"{value!r} is not a window; write it like 30m, 6h or 7d")
    if not 60 <= seconds <= MAX_WINDOW.total_seconds():
        raise AlertInputError(field, "must be between 1m and 30d")
    return seconds


def format_window(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


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
        scope = _text(body.get("scope") or "*", "scope", 300, re.compile(r"^(\*|/\S*)$")) or "*"
    if kind == "crash_free_rate":
        metric = body.get("metric") or CRASH_FREE_METRICS[0]
        if metric not in CRASH_FREE_METRICS:
            raise AlertInputError(
                "metric",
                f"a crash-free rate rule watches {' or '.join(CRASH_FREE_METRICS)} (got {metric!r})",
            )
    maximum = 100.0 if kind in ("error_rate", "crash_free_rate") else None
    required = kind in THRESHOLD_TYPES
    threshold = _number(body.get("threshold"), "threshold", required=required, maximum=maximum)
    warning = _number(body.get("warning_threshold"), "warning_threshold", required=False, maximum=maximum)
    resolve = _number(body.get("resolve_threshold"), "resolve_threshold", required=False, maximum=maximum)
    # A rule that fires below: its warning sits above the threshold, and firing stops at or above resolve.
    if kind in BELOW_TYPES:
        if threshold is not None and warning is not None and warning <= threshold:
            raise AlertInputError(
                "warning_threshold", "must be above the threshold (this rule fires below it)"
            )
        if threshold is not None and resolve is not None and resolve < threshold:
            raise AlertInputError(
                "resolve_threshold",
                "must be at least the threshold (it is where firing stops; this rule fires below it)",
            )
    if kind not in BELOW_TYPES and threshold is not None and warning is not None and warning >= threshold:
        raise AlertInputError("warning_threshold", "must be below the threshold")
    if kind not in BELOW_TYPES and threshold is not None and resolve is not None and resolve > threshold:
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
    filters = _filters(body.get("filters") or {}, body)
    if kind in RELEASE_TYPES and filters:
        refused = next(iter(filters))
        raise AlertInputError(
            refused,
            f"a {TYPE_LABELS[kind].lower()} rule watches the newest release's sessions: no {refused} filter",
        )
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


def create_rule(session: Session, org_id: int, body: RuleBody, actor_user_id: int | None = None) -> AlertRule:
    rule = AlertRule(org_id=org_id, **clean(session, org_id, body))
    rule.budget_id = body.get("budget_id") if isinstance(body.get("budget_id"), int) else None
    session.add(rule)
    session.flush()
    record_activity(
        session,
        org_id,
        "alert_rule.created",
        "alert_rule",
        rule.id,
        actor_user_id,
        {"name": rule.name, "type": rule.type},
    )
    return rule


def update_rule(
    session: Session, org_id: int, rule_id: int, body: RuleBody, actor_user_id: int | None = None
) -> AlertRule:
    """Replace the rule's definition (the body as for creation); its states start over."""
    rule = get_rule(session, org_id, rule_id)
    for key, value in clean(session, org_id, body).items():
        setattr(rule, key, value)
    rule.updated_at = utcnow()
    rule.retry_at = None  # a changed rule is evaluated on the next tick, even while a failure backs off
    from stacklens.control.models.alerts import AlertRuleState

    for state in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id == rule.id)):
        session.delete(state)
    record_activity(
        session, org_id, "alert_rule.updated", "alert_rule", rule.id, actor_user_id, {"name": rule.name}
    )
    return rule


def delete_rule(session: Session, org_id: int, rule_id: int, actor_user_id: int | None = None) -> None:
    rule = get_rule(session, org_id, rule_id)
    session.delete(rule)
    record_activity(
        session, org_id, "alert_rule.deleted", "alert_rule", rule_id, actor_user_id, {"name": rule.name}
    )


def get_rule(session: Session, org_id: int, rule_id: int) -> AlertRule:
    rule = session.get(AlertRule, rule_id)
    if rule is None or rule.org_id != org_id:
        raise AlertNotFound("rule", f"no alert rule {rule_id} in this organization")
    return rule


def list_rules(session: Session, org_id: int) -> list[AlertRule]:
    return list(session.scalars(select(AlertRule).where(AlertRule.org_id == org_id).order_by(AlertRule.id)))


def body_from_budget(session: Session, org_id: int, budget_id: int, channels: list[int]) -> BudgetRuleBody:
    """A rule body that alerts when the budget fails (its metric, statistic, scope, value, window and
    minimum samples)."""
    budget = session.get(Budget, budget_id)
    if budget is None or budget.org_id != org_id:
        raise AlertNotFound("budget", f"no budget {budget_id} in this organization")
    if budget.metric not in BUDGET_METRIC_MAP:
        raise AlertInputError(
            "budget_id",
            f"budgets on {budget.metric} cannot be alerted on yet; use one of {', '.join(BUDGET_METRIC_MAP)}",
        )
    metric, statistic = BUDGET_METRIC_MAP[budget.metric]
    if metric == budget.metric and budget.statistic:  # the budget's own statistic (API p95 stays p95)
        statistic = budget.statistic
    project = session.get(Project, budget.project_id)
    return {
        "name": f"Budget: {budget.metric} on {budget.scope}",
        "type": "performance_budget",
        "project": project.slug if project else "",
        "metric": metric,
        "statistic": statistic,
        "threshold": budget.value,
        "scope": budget.scope,
        "window": f"{budget.window_days or 7}d",
        "min_samples": budget.min_samples or 20,
        "channels": channels,
        "budget_id": budget.id,
    }


def rule_out(rule: AlertRule, project_slug: str) -> RuleOut:
    """The API shape of a rule (the request's field names, plus id and timestamps)."""
    return {
        "id": rule.id,
        "name": rule.name,
        "type": rule.type,
        "project": project_slug,
        "metric": rule.metric,
        "statistic": rule.statistic,
        "scope": rule.scope,
        "threshold": rule.threshold,
        "warning_threshold": rule.warning_threshold,
        "resolve_threshold": rule.resolve_threshold,
        "window": format_window(rule.window_seconds),
        "min_samples": rule.min_samples,
        "count_kind": rule.count_kind,
        "environment": rule.environment,
        "filters": rule.filters or {},
        "renotify_minutes": rule.renotify_minutes,
        "channels": list(rule.channel_ids or []),
        "budget_id": rule.budget_id,
        "enabled": rule.enabled,
        "created_at": rule.created_at.isoformat().replace("+00:00", "Z"),
        # The last evaluation's failure, if it failed (the rule is evaluated again at retry_at).
        "last_error": rule.last_error or "",
        "retry_at": rule.retry_at.isoformat().replace("+00:00", "Z") if rule.retry_at else None,
    }
