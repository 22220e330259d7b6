"""One evaluation tick: measure every enabled rule, move each (rule, scope) through the state machine, record
every evaluation, and put a notification in the outbox on the transitions that notify.

Called by the ``alerts`` asset every minute with the warehouse client and the settings passed in. The
notifications are written in the same transaction as the states they follow from, so a crash cannot record
a transition without its notification, nor notify twice for one transition.
A rule whose evaluation raises is that rule's error, never the tick's (see :func:`evaluate`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from stacklens.alerts.measures import Measurement, measure
from stacklens.alerts.messages import Context
from stacklens.alerts.transitions import EvaluationSummary, record_transition, step_rule
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, Project, utcnow
from stacklens.control.models.alerts import AlertEvaluation, AlertRule, AlertRuleState
from stacklens.isolation import failure_text, is_shared_outage, retry_at
from stacklens.settings import Settings

# Evaluations that changed nothing are kept 2 days (a rule evaluated every minute writes 1,440 a day);
# transitions are kept for good: they are the rule's history.
KEEP_UNCHANGED = timedelta(days=2)


class _RuleFailed(Exception):
    """One rule's step raised: the tick's transaction is rolled back and redone without that rule."""

    def __init__(self, rule_id: int, error: Exception) -> None:
        super().__init__(rule_id)
        self.rule_id = rule_id
        self.error = error


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def evaluate(
    settings: Settings, client: Any, base_url: str, now: datetime | None = None
) -> EvaluationSummary:
    """Evaluate every enabled rule. Each rule is its own item (:mod:`stacklens.isolation`): a rule whose
    measure or evaluation raises is recorded on the rule (its page shows the error and an evaluation row says
    so), keeps its state, notifies nothing and is retried after the outbox's backoff — the other rules, of
    every organization, are evaluated as usual.

    The rules are measured together (one query per kind) and stepped in one transaction, as cheap as a tick
    can be (1,000 rules: one commit, not 1,000). A rule whose step raises rolls that transaction back, so it
    cannot leave a state change without its notification; the tick is then stepped again without it (the
    measurements are kept, so a redo costs control-store work only, and a broken rule waits for its backoff
    on the next ticks)."""
    now = now or utcnow()
    summary = EvaluationSummary()
    with session_scope(settings) as session:
        rules = list(
            session.scalars(
                select(AlertRule)
                # Monitor rules are told of incidents as they happen (stacklens.monitors.health).
                .where(AlertRule.enabled.is_(True), AlertRule.type != "monitor")
                .order_by(AlertRule.id)
            )
        )
        contexts = _contexts(session, base_url, rules) if rules else {}
    summary.rules = len(rules)
    due = [r for r in rules if r.retry_at is None or _utc(r.retry_at) <= now]
    summary.deferred = len(rules) - len(due)
    measured, failures = _measure(client, due, now)
    while True:
        stepped = [r.id for r in due if r.id not in failures]
        try:
            _step_all(settings, stepped, measured, contexts, now, summary)
            break
        except _RuleFailed as failed:
            failures[failed.rule_id] = failed.error
    for rule in due:
        if rule.id in failures:
            _failed(settings, rule, failures[rule.id], now, summary)
    if now.minute == 0:
        with session_scope(settings) as session:
            session.execute(
                delete(AlertEvaluation).where(
                    AlertEvaluation.evaluated_at < now - KEEP_UNCHANGED,
                    AlertEvaluation.state_before == AlertEvaluation.state_after,
                    AlertEvaluation.notified.is_(False),
                )
            )
    return summary


def _step_all(
    settings: Settings,
    rule_ids: list[int],
    measured: dict[int, list[Measurement]],
    contexts: dict[int, Context],
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """Step every rule in one transaction; :class:`_RuleFailed` (after the rollback) names a rule that raised.
    The summary is filled only once the transaction has committed."""
    if not rule_ids:
        return
    part = EvaluationSummary()
    with session_scope(settings) as session:
        rules = list(
            session.scalars(
                select(AlertRule)
                .where(AlertRule.id.in_(rule_ids), AlertRule.enabled.is_(True))
                .order_by(AlertRule.id)
            )
        )  # deleted or disabled since the tick began: left out
        states: dict[int, dict[str, AlertRuleState]] = {r.id: {} for r in rules}
        for s in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id.in_(list(states)))):
            states[s.rule_id][s.scope_key] = s
        for rule in rules:
            try:
                step_rule(session, rule, measured[rule.id], states[rule.id], contexts[rule.id], now, part)
            except Exception as exc:
                if is_shared_outage(exc):
                    raise  # the control store is down: every rule would fail alike
                raise _RuleFailed(rule.id, exc) from exc
        if part.rows:
            session.execute(insert(AlertEvaluation), part.rows)
    summary.evaluations += part.evaluations
    summary.transitions += part.transitions
    summary.notifications += part.notifications
    summary.firing += part.firing
    summary.newly_firing += part.newly_firing


def _measure(
    client: Any, rules: list[AlertRule], now: datetime
) -> tuple[dict[int, list[Measurement]], dict[int, Exception]]:
    """Every rule's measurements in one query per kind; when that raises, each rule alone, so the one
    that fails is told apart (the others lose only the shared query's saving)."""
    if not rules:
        return {}, {}
    try:
        return measure(client, rules, now), {}
    except Exception as exc:
        if is_shared_outage(exc):
            raise
        if len(rules) == 1:
            return {}, {rules[0].id: exc}
    measured: dict[int, list[Measurement]] = {}
    failures: dict[int, Exception] = {}
    for rule in rules:
        try:
            measured.update(measure(client, [rule], now))
        except Exception as exc:
            if is_shared_outage(exc):
                raise
            failures[rule.id] = exc
    return measured, failures


def _failed(
    settings: Settings, rule: AlertRule, exc: Exception, now: datetime, summary: EvaluationSummary
) -> None:
    """The rule's error: on the rule (its page), as an evaluation row, and its next attempt; no state
    changes and nothing is notified (a firing rule stays firing, a quiet one quiet)."""
    message = failure_text(exc, f"the evaluation of alert rule {rule.id}")
    summary.failed += 1
    summary.errors.append(f"{rule.name}: {message}")
    with session_scope(settings) as session:
        row = session.get(AlertRule, rule.id)
        if row is None:
            return
        row.last_error = message
        row.failures = (row.failures or 0) + 1
        row.retry_at = retry_at(row.failures, now)
        state = session.scalar(
            select(AlertRuleState.state).where(
                AlertRuleState.rule_id == row.id, AlertRuleState.scope_key == "*"
            )
        )
        part = EvaluationSummary()
        window = Measurement("*", None, 0, now - timedelta(seconds=row.window_seconds), now)
        current = state or "insufficient_data"
        record_transition(row, window, current, current, f"evaluation failed: {message}", False, now, part)
        session.execute(insert(AlertEvaluation), part.rows)


def _contexts(session: Session, base_url: str, rules: list[AlertRule]) -> dict[int, Context]:
    projects = {
        p.id: p for p in session.scalars(select(Project).where(Project.id.in_({r.project_id for r in rules})))
    }
    orgs = {
        o.id: o.slug
        for o in session.scalars(select(Organization).where(Organization.id.in_({r.org_id for r in rules})))
    }
    return {
        r.id: Context(
            base_url, orgs.get(r.org_id, ""), projects[r.project_id].slug if r.project_id in projects else ""
        )
        for r in rules
    }
