"""Alert pages: the rules (`/orgs/{org}/alerts`), New Rule (`/alerts/new`, prefilled from its query
parameters — "alert me when this budget fails" — or from `?budget_id=`), and one rule (`/alerts/{rule_id}`)
with its states, last evaluations and what it would have fired over the past 30 days. Members see; owners
create and delete."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dashboards.alert_figures import preview_figure
from dashboards.anomaly_figures import anomaly_body, anomaly_chart, band_table
from dashboards.context import Db, OrgViewer, org_projects
from dashboards.marker_figures import mark_charts
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.alerts import rule_types, rules
from stacklens.alerts.anomaly_messages import condition as anomaly_condition
from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.alerts.messages import metric_words, value_text
from stacklens.alerts.preview import DAYS, preview
from stacklens.alerts.rule_validation import clean
from stacklens.anomalies.decide import DIRECTIONS
from stacklens.anomalies.live import rule_fields
from stacklens.anomalies.rule_fields import (
    DAYS_RANGE,
    DEFAULT_DAYS,
    METRICS,
    SEASONALITIES,
    SENSITIVITIES,
    backtest_days,
)
from stacklens.control.channels import list_channels
from stacklens.control.models.alerts import AlertChannel, AlertEvaluation, AlertRule, AlertRuleState
from stacklens.errors import InvalidInput
from stacklens.metrics.catalog import CATALOG
from stacklens.warehouse.client import WarehouseUnavailable, get_warehouse

router = APIRouter(include_in_schema=False)
ANOMALY_LABELS = {"events": "Error events", "users": "Users hit by errors"}


ALERTS = "/orgs/{org_slug}/alerts"
SEVERITY = {"firing": 4, "warning": 3, "resolved": 2, "ok": 1, "insufficient_data": 0}
FORM_FIELDS = (
    "name",
    "type",
    "project",
    "metric",
    "statistic",
    "threshold",
    "warning_threshold",
    "resolve_threshold",
    "scope",
    "window",
    "min_samples",
    "environment",
    "count_kind",
    "release",
    "level",
    "tag",
    "renotify_minutes",
    "budget_id",
    # Anomaly rules (docs/alerts.md): their metric has its own list (the form's metric list is a
    # performance rule's), their backtest its days.
    "anomaly_metric",
    "seasonality",
    "sensitivity",
    "direction",
    "min_count",
    "days",
)


@dataclass(frozen=True)
class EvaluatedState:
    """What a rule without a state row shows: its latest evaluation's outcome and time. A per-issue rule keeps
    state rows only for issues that crossed its threshold; the quiet ones share one evaluation row per
    tick, so a "Busy issue" rule evaluated every minute had no state and read "not evaluated yet"."""

    state: str
    since: datetime
    value: float | None  # the evaluation's value (a frequency rule's: its busiest issue's count)
    label: str = "evaluated"


def rule_state(
    states: list[AlertRuleState], latest: AlertEvaluation | None = None
) -> AlertRuleState | EvaluatedState | None:
    """The state a list shows for a rule: its most severe scope (firing over warning over the others), else
    its latest evaluation's outcome; ``None`` only for a rule never evaluated."""
    shown = max(states, key=lambda s: (SEVERITY.get(s.state, 0), s.since), default=None)
    if shown is None and latest is not None:
        return EvaluatedState(latest.state_after, latest.evaluated_at, latest.value)
    return shown


def latest_evaluations(db: Session, rule_ids: list[int]) -> dict[int, AlertEvaluation]:
    """Each rule's latest evaluation (one query)."""
    newest = (
        select(func.max(AlertEvaluation.id))
        .where(AlertEvaluation.rule_id.in_(rule_ids or [-1]))
        .group_by(AlertEvaluation.rule_id)
    )
    return {e.rule_id: e for e in db.scalars(select(AlertEvaluation).where(AlertEvaluation.id.in_(newest)))}


def condition(rule: AlertRule) -> str:
    """The rule's condition in words: the metric by its catalog label (``LCP p75``, never the key
    ``lcp_ms``), the threshold written as its notifications write it (``LCP p75 on all pages > 1,200.0 ms
    over 7d``)."""
    if rule.type == "anomaly":
        return anomaly_condition(rule)
    threshold, window = value_text(rule, rule.threshold), rule_types.format_window(rule.window_seconds)
    if rule.type == "performance_budget":
        scope = "all pages" if rule.scope == "*" else rule.scope
        if rule_types.fires_below(rule.type, rule.metric):  # uptime: fires below its threshold
            scope = "every uptime check" if rule.scope == "*" else rule.scope
            return f"{metric_words(rule)} of {scope} < {threshold} over {window}"
        return f"{metric_words(rule)} on {scope} > {threshold} over {window}"
    if rule.type == "event_frequency":
        return f"> {threshold} per issue in {window}"
    if rule.type == "error_rate":
        return f"{rule_types.TYPE_LABELS[rule.type]} > {threshold} over {window}"
    if rule.type == "crash_free_rate":  # fires below its threshold
        label = CATALOG[rule.metric].label if rule.metric in CATALOG else rule.metric
        return f"{label} of the newest release < {threshold} over {window} (at least {rule.min_samples:,} sessions)"
    if rule.type == "release_regression":
        return f"the newest release's verdict against the one before it is a regression (over {window})"
    return rule_types.TYPE_LABELS[rule.type]


@router.get(ALERTS, response_class=HTMLResponse)
def alert_list(request: Request, viewer: OrgViewer, db: Db) -> Response:
    org_rules = rules.list_rules(db, viewer.org.id)
    states: dict[int, list[AlertRuleState]] = {r.id: [] for r in org_rules}
    for state in db.scalars(select(AlertRuleState).where(AlertRuleState.rule_id.in_(list(states) or [-1]))):
        states[state.rule_id].append(state)
    latest = latest_evaluations(db, [r.id for r in org_rules if not states[r.id]])
    projects = {p.id: p for p in org_projects(db, viewer.org.id)}
    channel_names = {c.id: c.name for c in list_channels(db, viewer.org.id)}
    rows = [
        {
            "rule": r,
            "state": rule_state(states[r.id], latest.get(r.id)),
            "project": projects.get(r.project_id),
            "condition": condition(r),
            "type": rule_types.TYPE_LABELS[r.type],
            "channels": [channel_names.get(c, "?") for c in r.channel_ids or []],
        }
        for r in org_rules
    ]
    return render(
        request,
        "alerts.html",
        {"viewer": viewer, "user": viewer.user, "rows": rows, "channels": channel_names},
    )


def _form_context(
    viewer: OrgViewer, db: Db, values: dict[str, Any], error: str | None = None, field: str | None = None
) -> dict[str, Any]:
    return {
        "viewer": viewer,
        "user": viewer.user,
        "values": values,
        "error": error,
        "field": field,
        "projects": org_projects(db, viewer.org.id),
        "channels": list_channels(db, viewer.org.id),
        "types": rule_types.TYPE_LABELS,
        "metrics": {key: CATALOG[key].label for key in rule_types.METRICS},
        "crash_free_metrics": {key: CATALOG[key].label for key in rule_types.CRASH_FREE_METRICS},
        "statistics": rule_types.STATISTICS,
        "levels": rule_types.LEVELS,
        "anomaly_metrics": {k: CATALOG[k].label if k in CATALOG else ANOMALY_LABELS[k] for k in METRICS},
        "seasonalities": SEASONALITIES,
        "sensitivities": SENSITIVITIES,
        "directions": DIRECTIONS,
    }


@router.get(ALERTS + "/new", response_class=HTMLResponse)
def new_rule(request: Request, viewer: OrgViewer, db: Db, budget_id: int | None = None) -> Response:
    viewer.require_admin()
    values: dict[str, Any] = {
        "type": "performance_budget",
        "window": "7d",
        "statistic": "p75",
        "scope": "*",
        "min_samples": "20",
        "count_kind": "events",
        "seasonality": "auto",
        "sensitivity": "medium",
        "days": str(DEFAULT_DAYS),
    }
    # "Alert me when this fails" on the budgets page links here with the budget's fields as parameters.
    values.update(
        {k: v.strip() for k, v in request.query_params.items() if k in FORM_FIELDS and k != "budget_id"}
    )
    if budget_id is not None:
        try:
            values.update(rules.body_from_budget(db, viewer.org.id, budget_id, []))
        except (AlertNotFound, AlertInputError) as exc:
            return render(request, "alert_new.html", _form_context(viewer, db, values, str(exc)), 400)
    # The organization's only channel is ticked on a new form: a rule without one notifies nobody, and there
    # is no choice to make (with several, the owner picks).
    available = list_channels(db, viewer.org.id)
    if len(available) == 1 and not values.get("channels"):
        values["channels"] = [available[0].id]
    return render(request, "alert_new.html", _form_context(viewer, db, values))


@router.post(ALERTS + "/new", response_class=HTMLResponse)
async def create_rule(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values: dict[str, Any] = {k: str(form.get(k) or "").strip() for k in FORM_FIELDS}
    body: dict[str, Any] = {k: v for k, v in values.items() if v != ""}
    body["channels"] = [int(c) for c in form.getlist("channels") if str(c).isdigit()]  # type: ignore[arg-type]
    if "budget_id" in body:
        body["budget_id"] = int(body["budget_id"]) if body["budget_id"].isdigit() else None
    if body.get("type") == "anomaly":
        body = anomaly_body(body)
        if form.get("action") == "backtest":
            return _form_backtest(request, viewer, db, values, body)
    try:
        rule = rules.create_rule(db, viewer.org.id, body, viewer.user.id)
    except AlertInputError as exc:
        values["channels"] = body["channels"]
        return render(request, "alert_new.html", _form_context(viewer, db, values, str(exc), exc.field), 400)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/alerts/{rule.id}", status_code=303)


def _form_backtest(
    request: Request, viewer: OrgViewer, db: Db, values: dict[str, Any], body: dict[str, Any]
) -> Response:
    """The New Rule form again with its backtest: the last days' values, expected values, band and the
    hours that would have fired (nothing saved)."""
    values["channels"] = body.get("channels", [])
    try:
        cleaned = clean(db, viewer.org.id, {**body, "name": body.get("name") or "backtest"})
        rule = AlertRule(org_id=viewer.org.id, **cleaned)
        fields = rule_fields(rule)
        days = backtest_days(values.get("days"), fields.seasonality)
    except AlertInputError as exc:
        return render(request, "alert_new.html", _form_context(viewer, db, values, str(exc), exc.field), 400)
    context = _form_context(viewer, db, values)
    try:
        client = get_warehouse(request.app.state.settings)
        context.update(anomaly_chart(client, db, viewer.org.id, viewer.org.slug, rule, days, "Backtest"))
    except WarehouseUnavailable as exc:
        context["backtest_error"] = f"The backtest needs the warehouse: {exc}"
    return render(request, "alert_new.html", context)


@router.get(ALERTS + "/{rule_id}", response_class=HTMLResponse)
def rule_page(request: Request, viewer: OrgViewer, db: Db, rule_id: int) -> Response:
    try:
        rule = rules.get_rule(db, viewer.org.id, rule_id)
    except AlertNotFound as exc:
        raise HTTPException(status_code=404, detail="Not Found") from exc
    states = list(
        db.scalars(
            select(AlertRuleState)
            .where(AlertRuleState.rule_id == rule.id)
            .order_by(AlertRuleState.updated_at.desc())
            .limit(50)
        )
    )
    evaluations = list(
        db.scalars(
            select(AlertEvaluation)
            .where(AlertEvaluation.rule_id == rule.id)
            .order_by(AlertEvaluation.id.desc())
            .limit(50)
        )
    )
    channels = list(
        db.scalars(
            select(AlertChannel).where(
                AlertChannel.org_id == viewer.org.id, AlertChannel.id.in_(rule.channel_ids or [-1])
            )
        )
    )
    projects = {p.id: p for p in org_projects(db, viewer.org.id)}
    replay, figure, preview_error = None, None, None
    anomaly: dict[str, Any] = {}
    try:
        client = get_warehouse(request.app.state.settings)
        # An anomaly rule shows the band of its last days with its firings, not a threshold's replay.
        if rule.type == "anomaly":
            # Its longest backtest (28 days): a firing of the last weeks stays in sight.
            anomaly = anomaly_chart(client, db, viewer.org.id, viewer.org.slug, rule, DAYS_RANGE[1], "Rule")
            anomaly["band_rows"] = band_table(client, viewer.org.id, rule)
        replay = preview(client, rule) if rule.type != "anomaly" else None
        figure = preview_figure(rule, replay) if replay is not None and replay.points else None
        if replay is not None and figure is not None:
            # The releases and annotations of the rule's project over the replayed 30 days.
            until = datetime.now(UTC)
            mark_charts(
                [figure],
                client,
                db,
                viewer.org.id,
                viewer.org.slug,
                [rule.project_id],
                replay.steps[0].at if replay.steps else until - timedelta(days=DAYS),
                until,
            )
    except WarehouseUnavailable as exc:
        preview_error = f"The preview needs the warehouse: {exc}"
    except InvalidInput as exc:  # a metric the history cannot be computed for: said on the page, not a 400
        preview_error = f"No preview: {exc}"
    return render(
        request,
        "alert_rule.html",
        {
            "viewer": viewer,
            "user": viewer.user,
            "rule": rule,
            "type": rule_types.TYPE_LABELS[rule.type],
            "condition": condition(rule),
            "states": states,
            "state": rule_state(states, evaluations[0] if evaluations else None),
            "evaluations": evaluations,
            "channels": channels,
            "project": None,
            "rule_project": projects.get(rule.project_id),
            "window": rule_types.format_window(rule.window_seconds),
            "below": rule_types.fires_below(
                rule.type, rule.metric
            ),  # warns and fires below, resolves at or above
            "preview": replay,
            "figure": figure,
            "preview_error": preview_error,
            **anomaly,
        },
    )


@router.post(ALERTS + "/{rule_id}/delete", response_class=HTMLResponse)
async def delete_rule(request: Request, viewer: OrgViewer, db: Db, rule_id: int) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    try:
        rules.delete_rule(db, viewer.org.id, rule_id, viewer.user.id)
    except AlertNotFound as exc:
        raise HTTPException(status_code=404, detail="Not Found") from exc
    return RedirectResponse(f"/orgs/{viewer.org.slug}/alerts", status_code=303)
