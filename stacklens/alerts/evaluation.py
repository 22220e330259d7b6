"""One evaluation tick: measure every enabled rule, move each (rule, scope) through the state machine, record
every evaluation, and put a notification in the outbox on the transitions that notify.

Called by the ``alerts`` asset every minute with the warehouse client and the settings passed in. The
notifications are written in the same transaction as the states they follow from, so a crash cannot record
a transition without its notification, nor notify twice for one transition.
A rule whose evaluation raises is that rule's error, never the tick's (see :func:`evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.alerts.measures import Measurement, measure
from stacklens.alerts.messages import Context, compose, value_text, what
from stacklens.alerts.rule_types import BELOW_TYPES
from stacklens.alerts.state import Decision, Thresholds, decide
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, Project, utcnow
from stacklens.control.models.alerts import AlertEvaluation, AlertRule, AlertRuleState
from stacklens.isolation import failure_text, is_shared_outage, retry_at
from stacklens.settings import Settings

EVENT_TYPES = ("new_issue", "regression")
# Evaluations that changed nothing are kept 2 days (a rule evaluated every minute writes 1,440 a day);
# transitions are kept for good: they are the rule's history.
KEEP_UNCHANGED = timedelta(days=2)
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
    errors: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # evaluation rows, inserted at the end


class _RuleFailed(Exception):
    """One rule's step raised: the tick's transaction is rolled back and redone without that rule."""

    def __init__(self, rule_id: int, error: Exception) -> None:
        super().__init__(rule_id)
        self.rule_id = rule_id
        self.error = error


def thresholds(rule: AlertRule) -> Thresholds:
    return Thresholds(
        threshold=float(rule.threshold or 0),
        warning=rule.warning_threshold,
        resolve=rule.resolve_threshold,
        min_samples=0 if rule.type == "event_frequency" else rule.min_samples,
        below=rule.type in BELOW_TYPES,
    )


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
            session.scalars(select(AlertRule).where(AlertRule.enabled.is_(True)).order_by(AlertRule.id))
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
                _step_rule(session, rule, measured[rule.id], states[rule.id], contexts[rule.id], now, part)
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


def _step_rule(
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
    else:
        _measured(session, rule, found_now, own, ctx, now, window_start, summary)
    if rule.failures or rule.last_error:  # evaluated again: its earlier failure is over
        rule.last_error, rule.failures, rule.retry_at = "", 0, None
    # Written now, so a value the store refuses is this rule's failure, not the commit's (the tick's).
    session.flush()


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
        _record(
            rule,
            Measurement("*", top.value if top else None, sum(m.samples for m in quiet), window_start, now),
            "ok",
            "ok",
            text,
            False,
            now,
            summary,
        )


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
        _record(row, window, current, current, f"evaluation failed: {message}", False, now, part)
        session.execute(insert(AlertEvaluation), part.rows)


def _quiet(rule: AlertRule, m: Measurement, own: dict[str, AlertRuleState]) -> bool:
    """A per-issue figure that neither has a state nor needs one (within warning and threshold)."""
    if rule.type != "event_frequency" or m.scope_key in own or m.value is None:
        return False
    limit = rule.warning_threshold if rule.warning_threshold is not None else rule.threshold
    return limit is not None and m.value <= limit


def _issue(scope: str) -> int | None:
    head = scope.split("@", 1)[0]
    return int(head) if head.isdigit() else None


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
    _record(rule, m, before, decision.state, decision.text, notified, now, summary)


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
        _record(rule, window, "ok", "ok", f"no {word} not yet notified in the window", False, now, summary)
        return
    for m in fresh:
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
        summary.firing.append(f"{rule.name} [{m.title}]")
        _record(rule, m, "ok", "firing", f"{word}: {m.title}", notified, now, summary)


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
    before it is first a regression. Its state (scope: the version) is firing while that holds — it is still the
    newest release and still a regression — and resolved otherwise, without a message (nothing to undo: a newer
    release came, or the verdict no longer holds as traffic arrived); firing again later notifies nothing more.
    The "*" row gives the rule a state before any regression, as for the other occurrence rules."""
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
        _record(rule, window, "ok", "ok", "no release in the window", False, now, summary)
        return
    if not regressed:
        why = newest.reasons[0] if len(newest.reasons) == 1 else "no significant regression"
        _record(rule, newest, "ok", "ok", f"{newest.title}: {why}", False, now, summary)
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
        _record(rule, newest, before, "firing", text, False, now, summary)
        summary.firing.append(f"{rule.name} [{newest.release}]")
        return
    state = _state(session, rule, newest.scope_key, own, now)
    state.state, state.value, state.release, state.since = "firing", 1.0, newest.release[:RELEASE_CHARS], now
    notified = False
    if rule.channel_ids:
        payload = compose(rule, "firing", newest, now, newest.release, ctx)
        summary.notifications += len(
            outbox.enqueue(session, rule.org_id, list(rule.channel_ids), "firing", payload, rule.id)
        )
        state.last_notified_at, notified = now, True
    summary.transitions += 1
    summary.firing.append(f"{rule.name} [{newest.release}]")
    _record(rule, newest, "ok", "firing", f"release regression: {newest.title}", notified, now, summary)


def _record(
    rule: AlertRule,
    m: Measurement,
    before: str,
    after: str,
    text: str,
    notified: bool,
    now: datetime,
    summary: EvaluationSummary,
) -> None:
    """Queue one evaluation row; all of a tick's rows are inserted at once (one statement, not one per row)."""
    summary.rows.append(
        {
            "org_id": rule.org_id,
            "rule_id": rule.id,
            # A performance rule has one state ("*"); its evaluations name what they measured: the rule's scope.
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
