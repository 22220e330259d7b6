"""The delivery log names what sent each message, through real sends to a local receiver: a rule's message its
rule (by its current name), a deleted rule's message the name it carried, a digest the rules of the
messages it folded, a channel test itself, a scheduled report its dashboard and who subscribed (not
"unknown"); another organization sees none of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select, update

from stacklens.alerts import outbox, rules
from stacklens.alerts.delivery_log import delivery_log, logged_dict
from stacklens.alerts.sending import send_test
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import User
from stacklens.control.models.alerts import AlertNotification
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.subscriptions import create_subscription
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def _payload(rule: str) -> dict:
    return {"subject": f"[Firing] {rule}", "text": rule, "html": rule, "link": "", "data": {"rule": rule}}


def test_each_delivery_names_the_rule_that_sent_it(settings: Settings, receiver: Receiver) -> None:
    allowed = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_id, _, slug = org_with_project(allowed)
    other_org, _, _ = org_with_project(allowed, "Other")
    with session_scope(allowed) as session:
        channel, secret = create_channel(
            session, org_id, allowed, type="webhook", name="ops", url=receiver.url
        )
        body = {"type": "performance_budget", "project": slug, "metric": "lcp_ms", "threshold": 1200}
        kept = rules.create_rule(session, org_id, {**body, "name": "Checkout LCP", "channels": [channel.id]})
        gone = rules.create_rule(session, org_id, {**body, "name": "Old rule", "channels": [channel.id]})
        outbox.enqueue(session, org_id, [channel.id], "firing", _payload("Checkout LCP"), kept.id)
        outbox.enqueue(session, org_id, [channel.id], "firing", _payload("Old rule"), gone.id)
        folded = [
            *outbox.enqueue(session, org_id, [channel.id], "renotify", _payload("Checkout LCP"), kept.id),
            *outbox.enqueue(session, org_id, [channel.id], "renotify", _payload("Old rule"), gone.id),
        ]
        rows = [session.get(AlertNotification, i) for i in folded]
        outbox.enqueue(session, org_id, [channel.id], "digest", outbox.digest_payload(rows))
        session.execute(
            update(AlertNotification).where(AlertNotification.id.in_(folded)).values(status="digested")
        )
        rules.delete_rule(session, org_id, gone.id)
        owner = session.scalars(select(User).where(User.email == "owner@acme.test")).one()
        board = create_dashboard(session, org_id, {"name": "Vitals", "widgets": []})
        schedule = {"every": "day", "at": "08:00", "timezone": "UTC"}
        body = {
            "schedule": schedule,
            "format": "summary",
            "channel_id": channel.id,
            "target": {"dashboard_id": board.id},
        }
        subscription = create_subscription(session, org_id, body, owner_user_id=owner.id)
        report = {
            **_payload("Daily report: Vitals"),
            "data": {"subscription_id": subscription.id, "name": "Vitals"},
        }
        outbox.enqueue(session, org_id, [channel.id], "report", report)
        channel_id, kept_id = channel.id, kept.id
    receiver.secret = secret
    outbox.drain(allowed)
    send_test(allowed, org_id, channel_id)
    assert len(receiver.received) == 5

    with session_scope(allowed) as session:
        log = delivery_log(session, org_id)
        assert delivery_log(session, other_org) == []
    sent = {(e.notification_kind, e.sent_by.text) for e in log}
    assert sent == {
        ("firing", "Checkout LCP"),
        ("firing", "Old rule (deleted)"),
        ("digest", "digest of 2: Checkout LCP, Old rule (deleted)"),
        ("test", "channel test"),
        ("report", "scheduled report: Vitals (subscribed by owner@acme.test)"),
    }
    answers = {d["notification_id"]: d for d in map(logged_dict, log)}
    firing = next(d for d in answers.values() if d["rule"] == "Checkout LCP")
    assert firing["sent_by"] == "rule" and firing["rule_id"] == kept_id and firing["outcome"] == "delivered"
    digest = next(d for d in answers.values() if d["sent_by"] == "digest")
    assert digest["rules"] == [
        {"id": kept_id, "name": "Checkout LCP"},
        {"id": None, "name": "Old rule (deleted)"},
    ]
