"""One rule's step in an evaluation tick (:mod:`stacklens.alerts.evaluation`): each (rule, scope) moved
through the state machine (:func:`stacklens.alerts.state.decide` with the rule's :func:`thresholds`), event
rules' occurrences and release regressions' verdicts, every evaluation recorded and a notification put in the
outbox on the transitions that notify, all in the tick's transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.alerts.anomaly_messages import amount, compose_anomaly
from stacklens.alerts.measures import Measurement
from stacklens.alerts.messages import Context, compose, link, value_text, what
from stacklens.alerts.rule_types import BELOW_TYPES, fires_below
from stacklens.alerts.state import Decision, Thresholds, decide
from stacklens.control.models.alerts import AlertRule, AlertRuleState

EVENT_TYPES = ("new_issue", "regression")


# A state keeps the release a firing started in in 200 characters; ingest keeps releases up to 256 (PostgreSQL
# refuses a longer value, which would make the rule's step fail).
RELEASE_CHARS = 200


@dataclass
class EvaluationSummary:
    rules: int = 0
    evaluations: int = 0
    transitions: int = 0
    notifications: int = 0
    failed: int = 0  # rules whose evaluation raised this tick (recorded on the rule, retried with backoff)
    deferred: int = 0  # rules waiting for their retry after a failure
    firing: list[str] = field(default_factory=list)
    # Of those, the ones that began firing this tick: the server log warns of each once, not every minute.
    newly_firing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # evaluation rows, inserted at the end


def thresholds(rule: AlertRule) -> Thresholds:
    return Thresholds(
        threshold=float(rule.threshold or 0),
        warning=rule.warning_threshold,
        resolve=rule.resolve_threshold,
        min_samples=0 if rule.type == "event_frequency" else rule.min_samples,
        below=fires_below(rule.type, rule.metric),
    )


def step_rule(
    session: Session,
    rule: AlertRule,
    found_now: list[Measurement],
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    window_start = now - timedelta(seconds=rule.window_seconds)
    if rule.type in EVENT_TYPES:
        _occurrences(session, rule, found_now, own, ctx, now, summary)
    elif rule.type == "release_regression":
        _release_verdict(session, rule, found_now, own, ctx, now, summary)
    elif rule.type == "anomaly":
        _anomaly(session, rule, found_now, own, ctx, now, summary)
    else:
        _measured(session, rule, found_now, own, ctx, now, window_start, summary)
    if rule.failures or rule.last_error:  # evaluated again: its earlier failure is over
        rule.last_error, rule.failures, rule.retry_at = "", 0, None
    # Written now, so a value the store refuses is this rule's failure, not the commit's (the tick's).
    session.flush()


def _measured(
    session: Session,
    rule: AlertRule,
    found_now: list[Measurement],
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    window_start: datetime,
    summary: EvaluationSummary,
) -> None:
    found = {m.scope_key: m for m in found_now}
    for scope, state in own.items():  # a firing issue with no events now: value 0
        if scope not in found and state.state in ("firing", "warning"):
            found[scope] = Measurement(
                scope, 0.0, 0, window_start, now, state.release, issue_id=_issue(scope)
            )
    quiet = [m for m in found.values() if _quiet(rule, m, own)]
    quiet_keys = {m.scope_key for m in quiet}
    for m in found.values():
        if m.scope_key not in quiet_keys:
            _step(session, rule, m, own, ctx, now, summary)
    if quiet or not found:
        # Issues that are and were within the threshold share one evaluation row per tick (a rule
        # over a busy project would otherwise write a row per issue per minute).
        top = max(quiet, key=lambda m: m.value or 0.0, default=None)
        text = (
            f"{len(quiet)} issue(s) within the threshold; highest {top.value:,.0f} (issue {top.scope_key})"
            if top
            else "nothing in the window"
        )
        record_transition(
            rule,
            Measurement("*", top.value if top else None, sum(m.samples for m in quiet), window_start, now),
            "ok",
            "ok",
            text,
            False,
            now,
            summary,
        )


def _quiet(rule: AlertRule, m: Measurement, own: dict[str, AlertRuleState]) -> bool:
    """A per-issue figure that neither has a state nor needs one (within warning and threshold)."""
    if rule.type != "event_frequency" or m.scope_key in own or m.value is None:
        return False
    limit = rule.warning_threshold if rule.warning_threshold is not None else rule.threshold
    return limit is not None and m.value <= limit


def _issue(scope: str) -> int | None:
    head = scope.split("@", 1)[0]
    return int(head) if head.isdigit() else None


def _state(
    session: Session, rule: AlertRule, scope: str, own: dict[str, AlertRuleState], now: datetime
) -> AlertRuleState:
    state = own.get(scope)
    if state is None:
        state = AlertRuleState(
            rule_id=rule.id, scope_key=scope, state="insufficient_data", since=now, updated_at=now
        )
        session.add(state)
        own[scope] = state
    return state


def _step(
    session: Session,
    rule: AlertRule,
    m: Measurement,
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    state = _state(session, rule, m.scope_key, own, now)
    renotify = timedelta(minutes=rule.renotify_minutes) if rule.renotify_minutes else None
    decision: Decision = decide(
        state.state,
        m.value,
        m.samples,
        thresholds(rule),
        what(rule)[1],
        state.last_notified_at,
        renotify,
        now,
        # A crash-free rate as the catalog writes it (two decimals: 99.95 % against 99.90 %).
        write=(lambda value: value_text(rule, value)) if rule.type in BELOW_TYPES else None,
    )
    before = state.state
    if decision.state != before:
        state.state, state.since = decision.state, now
        if decision.state == "firing":
            state.release = m.release[:RELEASE_CHARS]
        summary.transitions += 1
    state.value, state.updated_at = m.value, now
    notified = False
    if decision.notify and rule.channel_ids:
        payload = compose(rule, decision.notify, m, state.since, state.release, ctx)
        summary.notifications += len(
            outbox.enqueue(session, rule.org_id, list(rule.channel_ids), decision.notify, payload, rule.id)
        )
        state.last_notified_at, notified = now, True
    if decision.state == "firing":
        summary.firing.append(f"{rule.name} [{m.scope_key}]")
        if before != "firing":
            summary.newly_firing.append(summary.firing[-1])
    record_transition(rule, m, before, decision.state, decision.text, notified, now, summary)


def _occurrences(
    session: Session,
    rule: AlertRule,
    found: list[Measurement],
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """New issues and regressions notify once per occurrence (the scope remembers it was notified)."""
    fresh = [m for m in found if m.scope_key not in own]
    window = Measurement(
        "*", float(len(fresh)), len(found), now - timedelta(seconds=rule.window_seconds), now
    )
    word = "new issue" if rule.type == "new_issue" else "regression"
    # An occurrence fires once; it counts as firing for the rule's window, then as resolved (no message:
    # nothing ended, the window just passed). The "*" row gives the rule a state before any occurrence.
    overall = _state(session, rule, "*", own, now)
    if overall.state != "ok":
        overall.state, overall.since = "ok", now
    for state in own.values():
        if state.state == "firing" and now - state.since >= timedelta(seconds=rule.window_seconds):
            state.state, state.updated_at = "resolved", now
    if not fresh:
        record_transition(
            rule, window, "ok", "ok", f"no {word} not yet notified in the window", False, now, summary
        )
        return
    for m in fresh:
        _fire_occurrence(session, rule, m, own, ctx, now, summary, m.title, f"{word}: {m.title}")


def _release_verdict(
    session: Session,
    rule: AlertRule,
    found: list[Measurement],
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """A release regression notifies once per release: when the newest release's verdict against the release
    before it is first a regression. Its state (scope: the version) is firing while that holds — it is
    still the newest release and still a regression — and resolved otherwise, without a message (nothing to
    undo: a newer release came, or the verdict no longer holds as traffic arrived); firing again later
    notifies nothing more. The "*" row gives the rule a state before any regression, as for the other
    occurrence rules."""
    newest = found[0] if found else None
    regressed = newest is not None and newest.value == 1.0
    overall = _state(session, rule, "*", own, now)
    if overall.state != "ok":
        overall.state, overall.since = "ok", now
    for scope, state in own.items():
        holds = regressed and newest is not None and scope == newest.scope_key
        if scope != "*" and state.state == "firing" and not holds:
            state.state, state.since, state.updated_at = "resolved", now, now
    window = Measurement("*", None, 0, now - timedelta(seconds=rule.window_seconds), now)
    if newest is None:
        record_transition(rule, window, "ok", "ok", "no release in the window", False, now, summary)
        return
    if not regressed:
        why = newest.reasons[0] if len(newest.reasons) == 1 else "no significant regression"
        record_transition(rule, newest, "ok", "ok", f"{newest.title}: {why}", False, now, summary)
        return
    earlier = own.get(newest.scope_key)
    if earlier is not None:  # notified already (once per release)
        before = earlier.state
        if before != "firing":
            earlier.state, earlier.since = "firing", now
            summary.transitions += 1
        earlier.updated_at = now
        told = earlier.last_notified_at
        text = f"still a regression: {newest.title}" + (
            f" (notified {told.strftime('%Y-%m-%d %H:%M UTC')})" if told is not None else ""
        )
        record_transition(rule, newest, before, "firing", text, False, now, summary)
        summary.firing.append(f"{rule.name} [{newest.release}]")
        if before != "firing":
            summary.newly_firing.append(summary.firing[-1])
        return
    text = f"release regression: {newest.title}"
    _fire_occurrence(session, rule, newest, own, ctx, now, summary, newest.release, text)


def _anomaly(
    session: Session,
    rule: AlertRule,
    found: list[Measurement],
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """An anomaly rule (docs/alerts.md): firing while its replay of the last day ends firing (the same
    band and hysteresis as its backtest), notified once into firing and once out of it; a series still
    learning is insufficient data, which never fires."""
    reading = found[0].anomaly if found else None
    if reading is None:
        return
    m = found[0]
    state = _state(session, rule, "*", own, now)
    before = state.state
    if reading.firing:
        after = "firing"
    elif before in ("firing", "resolved"):
        after = "resolved"
    else:
        after = "insufficient_data" if reading.learning else "ok"
    notify = None
    if after == "firing" and before != "firing":
        notify = "firing"
    elif before == "firing" and after == "resolved":
        notify = "resolved"
    elif (
        after == "firing"
        and rule.renotify_minutes
        and state.last_notified_at is not None
        and now - state.last_notified_at >= timedelta(minutes=rule.renotify_minutes)
    ):
        notify = "renotify"
    if after != before:
        state.state, state.since = after, now
        if after == "firing":
            state.release = m.release[:RELEASE_CHARS]
        summary.transitions += 1
    state.value, state.updated_at = m.value, now
    notified = False
    if notify and rule.channel_ids:
        payload = compose_anomaly(rule, notify, reading, ctx.project_slug, link(rule, ctx, None))
        summary.notifications += len(
            outbox.enqueue(session, rule.org_id, list(rule.channel_ids), notify, payload, rule.id)
        )
        state.last_notified_at, notified = now, True
    if after == "firing":
        summary.firing.append(f"{rule.name} [{reading.fields.metric}]")
        if before != "firing":
            summary.newly_firing.append(summary.firing[-1])
    shown = reading.fired if reading.firing and reading.fired else reading.latest
    if after == "insufficient_data":
        text = f"learning: {reading.history_hours} hours of data, not enough for a band yet"
    else:
        text = (
            f"{after}: {amount(reading.fields, shown['value'])}, expected "
            f"{amount(reading.fields, shown['expected'])} (band {amount(reading.fields, shown['lower'])} – "
            f"{amount(reading.fields, shown['upper'])}), score {shown['score'] or 0:+.1f}, {reading.seasonality}"
        )
    record_transition(rule, m, before, after, text, notified, now, summary)


def _fire_occurrence(
    session: Session,
    rule: AlertRule,
    m: Measurement,
    own: dict[str, AlertRuleState],
    ctx: Context,
    now: datetime,
    summary: EvaluationSummary,
    label: str,
    text: str,
) -> None:
    """An occurrence seen for the first time (a new issue, a regression, a regressed release): its scope
    fires, the rule's channels are told once (the scope remembers when), and the evaluation row says
    ``text``; ``label`` names the occurrence in the tick's list of what fires."""
    state = _state(session, rule, m.scope_key, own, now)
    state.state, state.value, state.release, state.since = "firing", 1.0, m.release[:RELEASE_CHARS], now
    notified = False
    if rule.channel_ids:
        payload = compose(rule, "firing", m, now, m.release, ctx)
        summary.notifications += len(
            outbox.enqueue(session, rule.org_id, list(rule.channel_ids), "firing", payload, rule.id)
        )
        state.last_notified_at, notified = now, True
    summary.transitions += 1
    summary.firing.append(f"{rule.name} [{label}]")
    summary.newly_firing.append(summary.firing[-1])
    record_transition(rule, m, "ok", "firing", text, notified, now, summary)


def record_transition(
    rule: AlertRule,
    m: Measurement,
    before: str,
    after: str,
    text: str,
    notified: bool,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """Queue one evaluation row; all of a tick's rows are inserted at once (one statement, not one per
    row)."""
    summary.rows.append(
        {
            "org_id": rule.org_id,
            "rule_id": rule.id,
            # A performance rule has one state ("*"); its evaluations name what they measured: the rule's
            # scope.
            "scope_key": (rule.scope if rule.type == "performance_budget" else m.scope_key)[:300],
            "evaluated_at": now,
            "window_start": m.window_start,
            "window_end": m.window_end,
            "value": m.value,
            "samples": m.samples,
            "threshold": rule.threshold,
            "state_before": before,
            "state_after": after,
            "decision": text[:200],
            "notified": notified,
        }
    )
    summary.evaluations += 1
