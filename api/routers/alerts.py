"""Alert rules and notification channels (docs/reference.md): `GET/POST /api/alerts/rules`,
`GET/PUT/DELETE /api/alerts/rules/{id}`, `POST /api/alerts/rules/backtest` and
`POST /api/alerts/rules/{id}/backtest` (anomaly rules, docs/alerts.md), `GET/POST /api/alerts/channels`, `POST
/api/alerts/channels/{id}/test`, `GET /api/alerts/deliveries`.

Bodies are validated by the domain (``stacklens.alerts.rules``, ``stacklens.control.channels``) so every
refusal names the field: ``{"error": "Bad Request", "detail": "threshold: must be a number (got 'fast')"}``.
Another organization's rule or channel answers 404 exactly like a missing one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, cast

from fastapi import APIRouter, Body, Query, Response
from sqlalchemy import select
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from api.deps import ApiAuth, AppSettings, DbSession, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.alerts import rules
from stacklens.alerts.delivery_log import LoggedDeliveryOut, delivery_log, logged_dict
from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.alerts.rule_validation import clean
from stacklens.alerts.sending import DeliveryOut, send_test
from stacklens.anomalies.backtest import BacktestAnswer, backtest
from stacklens.anomalies.live import rule_fields
from stacklens.anomalies.rule_fields import backtest_days
from stacklens.control import channels
from stacklens.control.models import Project, iso_utc
from stacklens.control.models.alerts import AlertChannel, AlertEvaluation, AlertRule, AlertRuleState

router = APIRouter(prefix="/api/alerts", tags=["alerts"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field is invalid; the detail names it."},
    404: {"model": ErrorBody, "description": "No such rule or channel in this organization."},
}
RULE_EXAMPLE = {
    "name": "Checkout LCP",
    "type": "performance_budget",
    "project": "shop",
    "metric": "lcp_ms",
    "statistic": "p75",
    "threshold": 2500,
    "scope": "/checkout",
    "window": "7d",
    "min_samples": 20,
    "environment": "production",
    "channels": [1],
}
# Release health: fires when the newest release's crash-free sessions (or "crash_free_users") fall below 99 %.
CRASH_FREE_EXAMPLE = {
    "name": "Crash-free sessions below 99 %",
    "type": "crash_free_rate",
    "project": "shop",
    "metric": "crash_free_sessions",
    "threshold": 99,
    "warning_threshold": 99.5,
    "window": "24h",
    "min_samples": 100,
    "environment": "production",
    "channels": [1],
}
# Anomaly: fires when checkout LCP leaves what is normal for its hour of the week.
ANOMALY_EXAMPLE = {
    "name": "Checkout LCP anomaly",
    "type": "anomaly",
    "project": "shop",
    "metric": "lcp_ms",
    "scope": "/checkout",
    "seasonality": "auto",
    "sensitivity": "medium",
    "direction": "up",
    "min_count": 20,
    "channels": [1],
}
RuleBody = Annotated[dict[str, Any], Body(examples=[RULE_EXAMPLE, CRASH_FREE_EXAMPLE, ANOMALY_EXAMPLE])]
BacktestBody = Annotated[dict[str, Any], Body(examples=[{**ANOMALY_EXAMPLE, "days": 14}])]
DaysBody = Annotated[dict[str, Any], Body(examples=[{"days": 14}])]
ChannelBody = Annotated[
    dict[str, Any], Body(examples=[{"type": "webhook", "name": "ops", "url": "https://x.test/h"}])
]


def _bad(exc: AlertInputError) -> ApiError:
    return ApiError(400, "Bad Request", str(exc))


def _missing(exc: AlertNotFound) -> ApiError:
    return ApiError(404, "Not Found", str(exc))


class RuleState(TypedDict):
    """A rule's state in one scope (a page, an endpoint, an issue; "" for the rule as a whole)."""

    scope: str
    state: str  # ok | warning | firing
    since: str
    value: float | None
    release: str


class RuleAnswer(rules.RuleOut):
    """A rule as the API answers it: its definition, its state per scope and its latest evaluation's
    decision in words (an anomaly rule's: the value, expected value, band, score and seasonality)."""

    states: list[RuleState]
    last_decision: str


class RuleList(TypedDict):
    rules: list[RuleAnswer]


class ChannelOut(TypedDict):
    id: int
    type: str  # email | slack | webhook
    name: str
    target: str  # the address or the URL's host, never a secret
    health: str  # healthy | failing | paused | untested
    health_detail: str
    paused_at: str | None
    created_at: str


class CreatedChannel(ChannelOut, total=False):
    secret: str  # a webhook's signing secret (whsec_…), in the creation's answer only


class ChannelList(TypedDict):
    channels: list[ChannelOut]


class DeliveryList(TypedDict):
    deliveries: list[LoggedDeliveryOut]


def _rule_out(session: DbSession, rule: Any) -> RuleAnswer:
    project = session.get(Project, rule.project_id)
    out = rules.rule_out(rule, project.slug if project else "")
    states = session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id == rule.id))
    latest = session.scalar(
        select(AlertEvaluation.decision)
        .where(AlertEvaluation.rule_id == rule.id)
        .order_by(AlertEvaluation.id.desc())
        .limit(1)
    )
    return {
        **out,
        "last_decision": latest or "",
        "states": [
            {
                "scope": s.scope_key,
                "state": s.state,
                "since": iso_utc(s.since),
                "value": s.value,
                "release": s.release,
            }
            for s in states
        ],
    }


@router.get("/rules", response_model=RuleList, responses=ERRORS)
def list_rules(identity: ApiAuth, session: DbSession) -> RuleList:
    """Every alert rule of the organization with its states per scope."""
    return {"rules": [_rule_out(session, r) for r in rules.list_rules(session, identity.org_id)]}


def _with_budget(session: DbSession, org_id: int, body: dict[str, Any]) -> dict[str, Any]:
    """``{"budget_id": N, "channels": […]}`` alone: "alert me when this budget fails"."""
    if isinstance(body.get("budget_id"), int) and not body.get("metric"):
        return {
            **rules.body_from_budget(session, org_id, body["budget_id"], body.get("channels") or []),
            **{k: v for k, v in body.items() if k in ("name", "environment", "min_samples", "window")},
        }
    return body


@router.post("/rules", status_code=201, response_model=RuleAnswer, responses=ERRORS)
def create_rule(body: RuleBody, identity: ApiAuth, session: DbSession) -> RuleAnswer:
    """Create a rule; the `alerts` pipeline evaluates it within a minute."""
    try:
        rule = rules.create_rule(session, identity.org_id, _with_budget(session, identity.org_id, body))
    except AlertInputError as exc:
        raise _bad(exc) from exc
    except AlertNotFound as exc:
        raise _missing(exc) from exc
    return _rule_out(session, rule)


@router.get("/rules/{rule_id}", response_model=RuleAnswer, responses=ERRORS)
def get_rule(rule_id: int, identity: ApiAuth, session: DbSession) -> RuleAnswer:
    try:
        return _rule_out(session, rules.get_rule(session, identity.org_id, rule_id))
    except AlertNotFound as exc:
        raise _missing(exc) from exc


@router.put("/rules/{rule_id}", response_model=RuleAnswer, responses=ERRORS)
def update_rule(rule_id: int, body: RuleBody, identity: ApiAuth, session: DbSession) -> RuleAnswer:
    """Replace the rule's definition (same body as for creation); its states start over."""
    try:
        return _rule_out(session, rules.update_rule(session, identity.org_id, rule_id, body))
    except AlertInputError as exc:
        raise _bad(exc) from exc
    except AlertNotFound as exc:
        raise _missing(exc) from exc


@router.delete("/rules/{rule_id}", status_code=204, responses=ERRORS)
def delete_rule(rule_id: int, identity: ApiAuth, session: DbSession) -> Response:
    try:
        rules.delete_rule(session, identity.org_id, rule_id)
    except AlertNotFound as exc:
        raise _missing(exc) from exc
    return Response(status_code=204)


def _backtest(session: DbSession, client: Any, org_id: int, rule: AlertRule, days: object) -> BacktestAnswer:
    fields = rule_fields(rule)
    try:
        got_days = backtest_days(days, fields.seasonality)
    except AlertInputError as exc:
        raise _bad(exc) from exc
    return backtest(
        client,
        org_id,
        rule.project_id,
        fields,
        rule.environment,
        got_days,
        rule.window_seconds,
        datetime.now(UTC),
    )


@router.post("/rules/backtest", response_model=BacktestAnswer, responses=ERRORS)
def backtest_body(
    body: BacktestBody, identity: ApiAuth, session: DbSession, client: Warehouse
) -> BacktestAnswer:
    """What an anomaly rule (the body of a new rule, and `days`: 7 to 28) would have done over the last
    days: each hour's value, expected value, band and score, and the hours where it would have fired with
    the releases first seen near them. Nothing is saved."""
    if not isinstance(body, dict) or body.get("type", "anomaly") != "anomaly":
        raise ApiError(400, "Bad Request", "type: a backtest is of an anomaly rule; use type anomaly")
    try:
        values = clean(session, identity.org_id, {"name": "backtest", **body, "type": "anomaly"})
    except AlertInputError as exc:
        raise _bad(exc) from exc
    rule = AlertRule(org_id=identity.org_id, **values)  # never added to the session: nothing is saved
    return _backtest(session, client, identity.org_id, rule, body.get("days"))


@router.post("/rules/{rule_id}/backtest", response_model=BacktestAnswer, responses=ERRORS)
def backtest_rule(
    rule_id: int, identity: ApiAuth, session: DbSession, client: Warehouse, body: DaysBody | None = None
) -> BacktestAnswer:
    """The backtest of a saved anomaly rule over the last `days` (7 to 28)."""
    try:
        rule = rules.get_rule(session, identity.org_id, rule_id)
    except AlertNotFound as exc:
        raise _missing(exc) from exc
    if rule.type != "anomaly":
        raise ApiError(
            400, "Bad Request", f"type: rule {rule_id} is a {rule.type} rule; backtests are of anomaly rules"
        )
    return _backtest(session, client, identity.org_id, rule, (body or {}).get("days"))


def channel_out(row: AlertChannel) -> ChannelOut:
    health = channels.health(row)
    return {
        "id": row.id,
        "type": row.type,
        "name": row.name,
        "target": channels.target_text(row),
        "health": health.badge,
        "health_detail": health.text,
        "paused_at": iso_utc(row.paused_at) if row.paused_at else None,
        "created_at": iso_utc(row.created_at),
    }


@router.get("/channels", response_model=ChannelList, responses=ERRORS)
def list_channels(identity: ApiAuth, session: DbSession) -> ChannelList:
    return {"channels": [channel_out(c) for c in channels.list_channels(session, identity.org_id)]}


@router.post("/channels", status_code=201, response_model=CreatedChannel, responses=ERRORS)
def create_channel(
    body: ChannelBody, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> CreatedChannel:
    """Create a channel; a webhook's signing `secret` (`whsec_…`) is in this answer only."""
    try:
        row, secret = channels.create_channel(
            session,
            identity.org_id,
            settings,
            type=body.get("type"),  # type: ignore[arg-type]
            name=body.get("name"),  # type: ignore[arg-type]
            url=body.get("url"),
            to=body.get("to"),
        )
    except AlertInputError as exc:
        raise _bad(exc) from exc
    # The listing's fields, and the signing secret once: in the creation's answer only.
    out = cast(CreatedChannel, dict(channel_out(row)))
    if secret:
        out["secret"] = secret
    return out


@router.post("/channels/{channel_id}/test", response_model=DeliveryOut, responses=ERRORS)
def test_channel(channel_id: int, identity: ApiAuth, settings: AppSettings) -> DeliveryOut:
    """Send a test notification through the outbox, as real alerts go, and answer what the receiver said."""
    try:
        return send_test(settings, identity.org_id, channel_id)
    except AlertNotFound as exc:
        raise _missing(exc) from exc


@router.get("/deliveries", response_model=DeliveryList, responses=ERRORS)
def list_deliveries(
    identity: ApiAuth,
    session: DbSession,
    channel_id: int | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DeliveryList:
    """The delivery log, newest first (one row per attempt), optionally of one channel; each attempt names
    what sent its message: `sent_by` `rule` (`rule_id`, `rule`: the rule's name), `digest` (`rules`) or
    `test`."""
    entries = delivery_log(session, identity.org_id, channel_id, limit)
    return {"deliveries": [logged_dict(e) for e in entries]}
