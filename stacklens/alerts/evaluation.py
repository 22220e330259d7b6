"""One evaluation tick: measure every enabled rule, move each (rule, scope) through the state machine, record
every evaluation, and put a notification in the outbox on the transitions that notify.

Called by the ``alerts`` asset every minute with the warehouse client and the settings passed in. The
notifications are written in the same transaction as the states they follow from, so a crash cannot record
a transition without its notification, nor notify twice for one transition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.alerts.measures import Measurement, measure
from stacklens.alerts.messages import Context, compose, what
from stacklens.alerts.state import Decision, Thresholds, decide
from stacklens.control.alert_models import AlertEvaluation, AlertRule, AlertRuleState
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, Project, utcnow
from stacklens.settings import Settings

EVENT_TYPES = ("new_issue", "regression")
# Evaluations that changed nothing are kept 2 days (a rule evaluated every minute writes 1,440 a day);
# transitions are kept for good: they are the rule's history.
KEEP_UNCHANGED = timedelta(days=2)


@dataclass
class EvaluationSummary:
    rules: int = 0
    evaluations: int = 0
    transitions: int = 0
    notifications: int = 0
    firing: list[str] = field(default_factory=list)


def thresholds(rule: AlertRule) -> Thresholds:
    return Thresholds(threshold=float(rule.threshold or 0), warning=rule.warning_threshold,
                      resolve=rule.resolve_threshold,
                      min_samples=0 if rule.type == "event_frequency" else rule.min_samples)


def evaluate(settings: Settings, client: Any, base_url: str, now: datetime | None = None) -> EvaluationSummary:
    now = now or utcnow()
    summary = EvaluationSummary()
    with session_scope(settings) as session:
        rules = list(session.scalars(select(AlertRule).where(AlertRule.enabled.is_(True)).order_by(AlertRule.id)))
        summary.rules = len(rules)
        if not rules:
            return summary
        measured = measure(client, rules, now)
        contexts = _contexts(session, base_url, rules)
        states: dict[tuple[int, str], AlertRuleState] = {
            (s.rule_id, s.scope_key): s
            for s in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id.in_([r.id for r in rules])))
        }
        for rule in rules:
            ctx = contexts[rule.id]
            if rule.type in EVENT_TYPES:
                _occurrences(session, rule, measured[rule.id], states, ctx, now, summary)
            else:
                found = {m.scope_key: m for m in measured[rule.id]}
                for (rule_id, scope), state in states.items():  # a firing issue with no events now: value 0
                    if rule_id == rule.id and scope not in found and state.state in ("firing", "warning"):
                        found[scope] = Measurement(scope, 0.0, 0, now - timedelta(seconds=rule.window_seconds), now,
                                                   state.release, issue_id=_issue(scope))
                if not found:
                    _record(session, rule, Measurement("*", None, 0, now - timedelta(seconds=rule.window_seconds),
                                                       now), "ok", "ok", "nothing in the window", False, now, summary)
                for m in found.values():
                    _step(session, rule, m, states, ctx, now, summary)
        if now.minute == 0:
            session.execute(delete(AlertEvaluation).where(
                AlertEvaluation.evaluated_at < now - KEEP_UNCHANGED,
                AlertEvaluation.state_before == AlertEvaluation.state_after, AlertEvaluation.notified.is_(False)))
    return summary


def _issue(scope: str) -> int | None:
    head = scope.split("@", 1)[0]
    return int(head) if head.isdigit() else None


def _contexts(session: Session, base_url: str, rules: list[AlertRule]) -> dict[int, Context]:
    projects = {p.id: p for p in session.scalars(select(Project).where(Project.id.in_({r.project_id for r in rules})))}
    orgs = {o.id: o.slug for o in session.scalars(select(Organization).where(Organization.id.in_({r.org_id for r in rules})))}
    return {r.id: Context(base_url, orgs.get(r.org_id, ""), projects[r.project_id].slug if r.project_id in projects
                          else "") for r in rules}


def _state(session: Session, rule: AlertRule, scope: str, states: dict, now: datetime) -> AlertRuleState:
    state = states.get((rule.id, scope))
    if state is None:
        state = AlertRuleState(rule_id=rule.id, scope_key=scope, state="insufficient_data", since=now, updated_at=now)
        session.add(state)
        states[(rule.id, scope)] = state
    return state


def _step(session: Session, rule: AlertRule, m: Measurement, states: dict, ctx: Context, now: datetime,
          summary: EvaluationSummary) -> None:
    state = _state(session, rule, m.scope_key, states, now)
    renotify = timedelta(minutes=rule.renotify_minutes) if rule.renotify_minutes else None
    decision: Decision = decide(state.state, m.value, m.samples, thresholds(rule), what(rule)[1],
                                state.last_notified_at, renotify, now)
    before = state.state
    if decision.state != before:
        state.state, state.since = decision.state, now
        if decision.state == "firing":
            state.release = m.release
        summary.transitions += 1
    state.value, state.updated_at = m.value, now
    notified = False
    if decision.notify and rule.channel_ids:
        payload = compose(rule, decision.notify, m, state.since, state.release, ctx)
        summary.notifications += len(outbox.enqueue(session, rule.org_id, list(rule.channel_ids), decision.notify,
                                                    payload, rule.id))
        state.last_notified_at, notified = now, True
    if decision.state == "firing":
        summary.firing.append(f"{rule.name} [{m.scope_key}]")
    _record(session, rule, m, before, decision.state, decision.text, notified, now, summary)


def _occurrences(session: Session, rule: AlertRule, found: list[Measurement], states: dict, ctx: Context,
                 now: datetime, summary: EvaluationSummary) -> None:
    """New issues and regressions notify once per occurrence (the scope remembers it was notified)."""
    fresh = [m for m in found if (rule.id, m.scope_key) not in states]
    window = Measurement("*", float(len(fresh)), len(found), now - timedelta(seconds=rule.window_seconds), now)
    word = "new issue" if rule.type == "new_issue" else "regression"
    # An occurrence fires once; it counts as firing for the rule's window, then as resolved (no message:
    # nothing ended, the window just passed). The "*" row gives the rule a state before any occurrence.
    overall = _state(session, rule, "*", states, now)
    if overall.state != "ok":
        overall.state, overall.since = "ok", now
    for (rule_id, _scope), state in states.items():
        if rule_id == rule.id and state.state == "firing" and now - state.since >= timedelta(seconds=rule.window_seconds):
            state.state, state.updated_at = "resolved", now
    if not fresh:
        _record(session, rule, window, "ok", "ok", f"no {word} not yet notified in the window", False, now, summary)
        return
    for m in fresh:
        state = _state(session, rule, m.scope_key, states, now)
        state.state, state.value, state.release, state.since = "firing", 1.0, m.release, now
        notified = False
        if rule.channel_ids:
            payload = compose(rule, "firing", m, now, m.release, ctx)
            summary.notifications += len(outbox.enqueue(session, rule.org_id, list(rule.channel_ids), "firing",
                                                        payload, rule.id))
            state.last_notified_at, notified = now, True
        summary.transitions += 1
        summary.firing.append(f"{rule.name} [{m.title}]")
        _record(session, rule, m, "ok", "firing", f"{word}: {m.title}", notified, now, summary)


def _record(session: Session, rule: AlertRule, m: Measurement, before: str, after: str, text: str, notified: bool,
            now: datetime, summary: EvaluationSummary) -> None:
    session.add(AlertEvaluation(
        org_id=rule.org_id, rule_id=rule.id, scope_key=m.scope_key[:300], evaluated_at=now,
        window_start=m.window_start, window_end=m.window_end, value=m.value, samples=m.samples,
        threshold=rule.threshold, state_before=before, state_after=after, decision=text[:200], notified=notified,
    ))
    summary.evaluations += 1
