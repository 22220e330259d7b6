"""An alert rule with an e-mail channel, end to end: the rule fires and resolves on real data, the outbox
delivers each transition to a real SMTP server on loopback (plain text and HTML), and an SMTP server that is
down at the first attempt gets the same message again later (one Message-ID, never two messages)."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import Message as MailMessage

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertDelivery
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import MailSink, free_port, org_with_project, start_smtp
from tests.stacklens.alerts.test_evaluation import NOW, TX, _load, bucketed, fold, tx


@pytest.fixture
def sink() -> Iterator[MailSink]:
    sink = MailSink()
    controller = start_smtp(sink)
    sink.port = controller.port  # type: ignore[attr-defined]
    yield sink
    controller.stop()


def _parts(envelope) -> tuple[MailMessage, dict[str, str]]:
    mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
    parts = {
        p.get_content_type(): p.get_payload(decode=True).decode() for p in mail.walk() if not p.is_multipart()
    }
    return mail, parts


def _rule(settings: Settings, org_id: int, slug: str) -> tuple[int, int]:
    with session_scope(settings) as session:
        channel, secret = create_channel(
            session, org_id, settings, type="email", name="on-call", to=["oncall@acme.test"]
        )
        assert secret is None  # only webhooks have a signing secret
        rule = rules.create_rule(
            session,
            org_id,
            {
                "name": "Checkout LCP",
                "type": "performance_budget",
                "project": slug,
                "metric": "lcp_ms",
                "statistic": "p75",
                "threshold": 2000,
                "window": "1h",
                "min_samples": 3,
                "channels": [channel.id],
            },
        )
        return rule.id, channel.id


def test_firing_and_resolved_reach_a_real_smtp_server(settings: Settings, client, sink: MailSink) -> None:
    settings = settings.model_copy(
        update={"smtp_url": f"smtp://127.0.0.1:{sink.port}", "mail_from": "alerts@acme.test"}  # type: ignore[attr-defined]
    )
    org_id, project_id, slug = org_with_project(settings)
    rule_id, channel_id = _rule(settings, org_id, slug)
    _load(client, [tx(project_id, 3100, NOW - timedelta(minutes=m)) for m in range(1, 6)])
    assert evaluate(settings, client, "http://sl.test", NOW).notifications == 1
    assert outbox.drain(settings).delivered == 1

    (firing,) = sink.messages
    assert firing.rcpt_tos == ["oncall@acme.test"] and firing.mail_from == "alerts@acme.test"
    mail, parts = _parts(firing)
    assert mail["Subject"].startswith("[Firing] Checkout LCP")
    value = f"{bucketed(3100):,.1f} ms"  # the p75 of five loads of 3,100 ms, as the states keep it
    assert f"{value} > 2,000.0 ms" in mail["Subject"]
    text = parts["text/plain"]
    assert value in text and "2,000.0 ms" in text  # the value against the threshold
    assert "2.0.0" in text  # the release it started in
    assert f"http://sl.test/orgs/acme/projects/{slug}/performance" in text  # a link back
    assert value in parts["text/html"] and "<script" not in parts["text/html"]

    # Nothing new while it keeps firing; once the window holds no slow loads any more, one "resolved" mail.
    assert evaluate(settings, client, "http://sl.test", NOW + timedelta(minutes=1)).notifications == 0
    later = NOW + timedelta(hours=3)
    client.insert(
        "transactions",
        [tx(project_id, 900, later - timedelta(minutes=m)) for m in range(1, 6)],
        column_names=TX,
    )
    fold(client, later - timedelta(hours=2), later + timedelta(hours=1))
    assert evaluate(settings, client, "http://sl.test", later).notifications == 1
    outbox.drain(settings)
    assert len(sink.messages) == 2
    resolved, parts = _parts(sink.messages[1])
    assert resolved["Subject"].startswith("[Resolved]") and "Checkout LCP" in resolved["Subject"]
    assert resolved["Message-ID"] != mail["Message-ID"]
    with session_scope(settings) as session:
        statuses = [
            d.outcome
            for d in session.scalars(select(AlertDelivery).where(AlertDelivery.channel_id == channel_id))
        ]
    assert statuses == ["delivered", "delivered"], statuses
    assert rule_id


def test_smtp_server_down_then_up_delivers_the_same_message_once(settings: Settings, client) -> None:
    port = free_port()
    settings = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{port}"})
    org_id, project_id, slug = org_with_project(settings)
    _rule(settings, org_id, slug)
    _load(client, [tx(project_id, 3100, NOW - timedelta(minutes=m)) for m in range(1, 6)])
    evaluate(settings, client, "http://sl.test", NOW)
    start = datetime.now(UTC)
    first = outbox.drain(settings, now=start)
    assert first.delivered == 0 and first.retried == 1  # nobody listens yet: retried later, not lost
    with session_scope(settings) as session:
        (attempt,) = session.scalars(select(AlertDelivery)).all()
        assert attempt.outcome == "retry" and "cannot reach the SMTP server" in attempt.error

    sink = MailSink()
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import SMTP as SmtpProtocol  # noqa: N811 - says which SMTP: the protocol class

    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.factory = lambda: SmtpProtocol(sink, hostname="stacklens-test")
    controller.start()
    try:
        assert outbox.drain(settings, now=start + timedelta(seconds=1)).delivered == 0  # not due yet: backoff
        assert outbox.drain(settings, now=start + timedelta(hours=1)).delivered == 1
        assert outbox.drain(settings, now=start + timedelta(hours=2)).delivered == 0
    finally:
        controller.stop()
    (message,) = sink.messages
    assert _parts(message)[0]["Subject"].startswith("[Firing] Checkout LCP")
