"""The weekly summary against the real warehouse and a real SMTP server, at a fixed clock (the end of the last
whole week): new issues of the week only, regressions, the top issues by users as the list counts them,
sent once a week to the members who switched it on."""

from __future__ import annotations

import email
import email.policy
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.alerts import outbox
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.issues.notifications import Notifier, set_settings
from stacklens.issues.weekly_summary import send_weekly_summaries, week_end
from stacklens.issues.workflow import HISTORY_COLUMNS
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land
from tests.stacklens.alerts.helpers import MailSink, start_smtp


@pytest.fixture
def sink() -> Iterator[MailSink]:
    sink = MailSink()
    controller = start_smtp(sink)
    sink.port = controller.port  # type: ignore[attr-defined]
    yield sink
    controller.stop()


def _event(kind: str, at: datetime, user: str) -> dict:
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": at.timestamp(),
        "user": {"id": user},
        "release": "shop@1.0",
        "exception": {
            "values": [{"type": kind, "value": "boom", "stacktrace": {"frames": [{"filename": "a.py"}]}}]
        },
    }


def test_week_end() -> None:
    monday = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    assert week_end(monday) == monday
    assert week_end(monday - timedelta(minutes=1)) == monday - timedelta(days=7)
    assert week_end(datetime(2026, 11, 26, 1, 0, tzinfo=UTC)) == monday


def test_weekly_summary_by_mail(stores: Settings, org_factory, sink: MailSink) -> None:
    settings = stores.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{sink.port}"})  # type: ignore[attr-defined]
    org = org_factory("Weekly", "Shop")
    end = week_end(datetime.now(UTC))
    now = end + timedelta(hours=1)  # the fixed clock: an hour after the week ended
    client = get_warehouse(settings)
    land(
        org["org_id"],
        org["project_id"],
        [
            _event("CheckoutError", end - timedelta(days=2), "u1"),
            _event("CheckoutError", end - timedelta(days=2, hours=1), "u2"),
            _event("SearchError", end - timedelta(days=1), "u1"),
            _event("OldError", end - timedelta(days=10), "u3"),  # first seen before the week
            _event("OldError", end - timedelta(days=3), "u3"),
        ],
    )
    old = next(
        r for r in client.query("SELECT issue_id FROM events WHERE exception_type = 'OldError'").result_rows
    )
    row = [
        org["org_id"],
        org["project_id"],
        old[0],
        end - timedelta(days=3),
        "system",
        "resolved",
        "regressed",
        "",
        "",
        0,
        None,
    ]
    client.insert("issue_history", [row], column_names=HISTORY_COLUMNS)
    with session_scope(settings) as session:
        reader = accounts.add_member(session, org["org_id"], "reader@weekly.test", "password-123")
        accounts.add_member(session, org["org_id"], "quiet@weekly.test", "password-123")
        set_settings(session, org["org_id"], reader.id, {org["project"]: {"weekly": "weekly"}})
        project = session.get(Project, org["project_id"])
        assert project is not None
        notifier = Notifier("https://sl.test", client)
        assert send_weekly_summaries(session, client, notifier, now) == 1
        assert send_weekly_summaries(session, client, notifier, now + timedelta(days=1)) == 0  # once a week
        assert (
            send_weekly_summaries(
                session, client, Notifier("https://sl.test", client, mail=False), now + timedelta(days=7)
            )
            == 0
        )
    assert outbox.drain(settings).delivered == 1
    (envelope,) = sink.messages
    assert envelope.rcpt_tos == ["reader@weekly.test"]
    mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
    text = next(p.get_content() for p in mail.walk() if p.get_content_type() == "text/plain")
    assert mail["Subject"] == f"[StackLens] Week of {org['project']}: 2 new issues, 1 regression"
    assert f"{end - timedelta(days=7):%Y-%m-%d} to {end:%Y-%m-%d} (UTC)" in text
    text = text.replace("\r\n", "\n")
    top = text.split("Top issues by users:\n", 1)[1].split("\nRelease health", 1)[0].splitlines()
    assert top[0].startswith("  2 users · 2 events · CheckoutError: boom")
    assert top[1:] == [line for line in top[1:] if line.startswith("  1 user · 1 event · ")] and len(top) == 3
    assert "OldError" in text  # its event of the week counts among the top issues
    assert "Release health (crash-free sessions):\n  shop@1.0: no sessions\n" in text  # errors, no sessions
    assert "Failing budgets: none" in text and "https://sl.test/orgs/" in text
