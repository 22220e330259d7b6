"""Rule evaluation, one rule at a time: one organization's rule that cannot be measured (a statistic its
metric does not keep, as a row written by hand or by another version could hold) is that rule's error — on
the rule, as an evaluation row, retried after the outbox's backoff, its state untouched — while the other
organization's rule is measured with it in the same tick, fires and notifies. Editing the broken rule
evaluates it at once."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from stacklens.alerts import rules
from stacklens.alerts.evaluation import evaluate
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertEvaluation, AlertNotification, AlertRule
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.alerts.test_evaluation import NOW, _load, _states, tx


def _tenant(settings: Settings, name: str, receiver: Receiver) -> tuple[int, int, int, str]:
    """An organization with a webhook channel and an LCP rule over all its pages: (org, project, rule,
    project slug)."""
    org_id, project_id, slug = org_with_project(settings, name)
    with session_scope(settings) as session:
        channel, _ = create_channel(session, org_id, settings, type="webhook", name="hook", url=receiver.url)
        rule = rules.create_rule(session, org_id, _body(slug, channel.id))
        return org_id, project_id, rule.id, slug


def _body(slug: str, channel_id: int) -> dict:
    return {
        "name": "LCP",
        "type": "performance_budget",
        "project": slug,
        "metric": "lcp_ms",
        "statistic": "p75",
        "threshold": 2000,
        "window": "1h",
        "min_samples": 1,
        "channels": [channel_id],
    }


def _rule(settings: Settings, rule_id: int) -> AlertRule:
    with session_scope(settings) as session:
        row = session.get(AlertRule, rule_id)
        assert row is not None
        return row


def _evaluations(settings: Settings, rule_id: int) -> list[str]:
    with session_scope(settings) as session:
        return list(
            session.scalars(
                select(AlertEvaluation.decision)
                .where(AlertEvaluation.rule_id == rule_id)
                .order_by(AlertEvaluation.id)
            )
        )


def test_a_rule_that_raises_is_its_own_error_and_the_other_tenant_fires(settings: Settings, client) -> None:
    settings = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    receiver = Receiver().start()
    try:
        broken_org, broken_project, broken, slug = _tenant(settings, "Initech", receiver)
        healthy_org, healthy_project, healthy, _ = _tenant(settings, "Globex", receiver)
        with session_scope(settings) as session:
            row = session.get(AlertRule, broken)
            assert row is not None
            row.statistic = "p42"  # no metric keeps it: measuring raises
        _load(
            client,
            [
                tx(p, 3000, NOW - timedelta(minutes=m))
                for p in (broken_project, healthy_project)
                for m in (1, 2)
            ],
        )

        summary = evaluate(settings, client, "http://sl.test", NOW)

        assert (summary.rules, summary.failed, summary.notifications) == (2, 1, 1)
        assert _states(settings, healthy) == {"*": "firing"}
        with session_scope(settings) as session:
            notified = session.scalars(select(AlertNotification.org_id)).all()
        assert notified == [healthy_org]
        failed = _rule(settings, broken)
        assert "lcp_ms" in failed.last_error and "'p42'" in failed.last_error and failed.failures == 1
        assert failed.retry_at is not None
        assert timedelta(seconds=15) <= failed.retry_at - NOW <= timedelta(seconds=30)
        assert _states(settings, broken) == {}  # no state moved, nothing notified
        (decision,) = _evaluations(settings, broken)
        assert decision.startswith("evaluation failed: lcp_ms") and "'p42'" in decision
        # Shown on the rule (its page and GET /api/alerts/rules/{id}).
        shown = rules.rule_out(failed, slug)
        assert shown["last_error"] == failed.last_error and shown["retry_at"]
        assert summary.errors == [f"LCP: {failed.last_error}"]

        # Within its backoff the rule waits; the other one is evaluated as usual.
        waiting = evaluate(settings, client, "http://sl.test", NOW + timedelta(seconds=10))
        assert (waiting.deferred, waiting.failed, waiting.evaluations) == (1, 0, 1)
        assert len(_evaluations(settings, broken)) == 1

        # Fixing the rule evaluates it on the next tick, and clears its error.
        with session_scope(settings) as session:
            rules.update_rule(session, broken_org, broken, _body(slug, failed.channel_ids[0]))
        fixed = evaluate(settings, client, "http://sl.test", NOW + timedelta(seconds=12))
        assert fixed.failed == 0 and fixed.deferred == 0
        healed = _rule(settings, broken)
        assert (healed.last_error, healed.failures, healed.retry_at) == ("", 0, None)
        assert _states(settings, broken) == {"*": "firing"}
    finally:
        receiver.stop()
