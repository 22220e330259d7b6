"""Alert rules: create / update / delete / list, and the rule a budget asks for. Callers own the transaction.

A request body is read by :func:`stacklens.alerts.rule_validation.clean` (bad input raises
:class:`AlertInputError` naming the field); the kinds of rule and their vocabulary are in
:mod:`stacklens.alerts.rule_types`.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.alerts.rule_types import (
    BUDGET_METRIC_MAP,
    RuleBody,
    RuleSettings,
    format_window,
)
from stacklens.alerts.rule_validation import clean
from stacklens.anomalies.rule_fields import stored_fields
from stacklens.control.activity import record_activity
from stacklens.control.models import Budget, Project, utcnow
from stacklens.control.models.alerts import AlertRule


class RuleOut(RuleSettings):
    """The API's rule (:func:`rule_out`): the request's field names, plus id, timestamps and the last
    failure."""

    id: int
    project: str  # the project's slug
    window: str  # "7d", "6h", "30m"
    channels: list[int]
    budget_id: int | None
    created_at: str
    last_error: str
    retry_at: str | None
    # Monitor rules: the monitors watched (empty: all of the project's) and the statuses (empty: all).
    monitors: list[str]
    statuses: list[str]
    # Anomaly rules (docs/alerts.md): auto | daily | weekly | none, low | medium | high, up | down | both, and
    # the count below which a bucket never fires; "" and null for the other types.
    seasonality: str
    sensitivity: str
    direction: str
    min_count: int | None


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
        "filters": {} if rule.type == "anomaly" else rule.filters or {},
        "renotify_minutes": rule.renotify_minutes,
        "channels": list(rule.channel_ids or []),
        "budget_id": rule.budget_id,
        "enabled": rule.enabled,
        "created_at": rule.created_at.isoformat().replace("+00:00", "Z"),
        # The last evaluation's failure, if it failed (the rule is evaluated again at retry_at).
        "last_error": rule.last_error or "",
        "retry_at": rule.retry_at.isoformat().replace("+00:00", "Z") if rule.retry_at else None,
        "monitors": _listed(rule, "monitors"),
        "statuses": _listed(rule, "statuses"),
        **_anomaly_settings(rule),
    }


class _AnomalySettings(TypedDict):
    seasonality: str
    sensitivity: str
    direction: str
    min_count: int | None


def _anomaly_settings(rule: AlertRule) -> _AnomalySettings:
    if rule.type != "anomaly":
        return {"seasonality": "", "sensitivity": "", "direction": "", "min_count": None}
    fields = stored_fields(rule.metric, rule.statistic, rule.scope, rule.filters or {}, rule.min_samples)
    return {
        "seasonality": fields.seasonality,
        "sensitivity": fields.sensitivity,
        "direction": fields.direction,
        "min_count": fields.min_count,
    }


def _listed(rule: AlertRule, key: str) -> list[str]:
    if rule.type != "monitor":
        return []
    return [v for v in str((rule.filters or {}).get(key, "")).split(",") if v]
