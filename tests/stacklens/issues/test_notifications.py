"""Issue news reaching people through the outbox and a real SMTP server, at a fixed clock for the daily
digest: the assignee (a team's members), mentioned members and watchers, each as they chose per project and
kind; nobody told of their own doing; personal channels kept out of the organization's channels."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from stacklens.alerts import outbox
from stacklens.control import accounts
from stacklens.control.channels import list_channels
from stacklens.control.db import session_scope
from stacklens.control.models import DigestItem
from stacklens.control.teams import create_team, resolve_assignee, set_members
from stacklens.errors import InvalidInput, NotFound
from stacklens.issues.assignees import assign
from stacklens.issues.comments import add_comment, edit_comment
from stacklens.issues.notifications import Notifier, send_digests, set_settings, set_watching, settings_of
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import MailSink, org_with_project, start_smtp

BASE = "https://stacklens.example.test"
ISSUE = 4_503_599_627_370_495  # the largest 52-bit issue id


@pytest.fixture
def sink() -> Iterator[MailSink]:
    sink = MailSink()
    controller = start_smtp(sink)
    sink.port = controller.port  # type: ignore[attr-defined]
    yield sink
    controller.stop()


def _mails(sink: MailSink) -> list[tuple[list[str], email.message.EmailMessage, str]]:
    found = []
    for envelope in sink.messages:
        mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        text = next(p.get_content() for p in mail.walk() if p.get_content_type() == "text/plain")
        found.append((list(envelope.rcpt_tos), mail, text))
    return found


def test_people_hear_as_they_chose(settings: Settings, sink: MailSink) -> None:
    smtp = f"smtp://127.0.0.1:{sink.port}"  # type: ignore[attr-defined]
    settings = settings.model_copy(update={"smtp_url": smtp, "mail_from": "sl@acme.test"})
    org_id, project_id, slug = org_with_project(settings)
    other_org, other_project, _ = org_with_project(settings, "Other")
    notifier = Notifier(BASE)
    with session_scope(settings) as session:
        owner = accounts.list_members(session, org_id)[0][0]
        alice = accounts.add_member(session, org_id, "alice@acme.test", "a-long-password-1")
        bob = accounts.add_member(session, org_id, "bob@acme.test", "a-long-password-1")
        carol = accounts.add_member(session, org_id, "carol@acme.test", "a-long-password-1")
        stranger = accounts.add_member(session, other_org, "dave@other.test", "a-long-password-1")
        create_team(session, org_id, "payments")
        set_members(session, org_id, "payments", ["bob@acme.test", "carol@acme.test"])
        set_settings(session, org_id, bob.id, {slug: {"assigned": "daily", "comments": "daily"}})
        set_settings(session, org_id, carol.id, {slug: {"assigned": "none", "comments": "none"}})
        assert settings_of(session, org_id, bob.id)[slug] == {
            "assigned": "daily",
            "mentions": "immediate",
            "comments": "daily",
            "regressions": "immediate",
            "weekly": "none",
            "feedback": "none",
        }
        with pytest.raises(InvalidInput, match="mode must be one of"):
            set_settings(session, org_id, bob.id, {slug: {"assigned": "hourly"}})
        with pytest.raises(NotFound):  # another organization's project
            set_settings(session, org_id, bob.id, {"other-shop": {"assigned": "none"}})

        ids = dict(org_id=org_id, project_id=project_id, issue_id=ISSUE)
        # Alice assigns it to herself: nobody is told of their own doing.
        me = resolve_assignee(session, org_id, "alice@acme.test")
        assign(
            session,
            ids["org_id"],
            project_id,
            ISSUE,
            me,
            actor=alice.email,
            actor_user_id=alice.id,
            notifier=notifier,
        )
        assign(
            session,
            org_id,
            project_id,
            ISSUE,
            None,
            actor=alice.email,
            actor_user_id=alice.id,
            notifier=notifier,
        )
        # The owner assigns it to her: one e-mail.
        assign(
            session,
            org_id,
            project_id,
            ISSUE,
            me,
            actor=owner.email,
            actor_user_id=owner.id,
            notifier=notifier,
        )
        # Dave (another organization) watches nothing here; Carol watches but chose none for comments.
        set_watching(session, org_id, project_id, ISSUE, carol.id, True)
        set_watching(session, org_id, project_id, ISSUE, bob.id, True)
        add_comment(
            session,
            org_id,
            project_id,
            ISSUE,
            "@alice please look; @dave too",
            author=owner.email,
            author_user_id=owner.id,
            notifier=notifier,
        )
        # Reassigned to the team: Bob's news waits for his digest, Carol chose none.
        payments = resolve_assignee(session, org_id, "#payments")
        assign(
            session,
            org_id,
            project_id,
            ISSUE,
            payments,
            actor=owner.email,
            actor_user_id=owner.id,
            notifier=notifier,
        )
        assert [c.name for c in list_channels(session, org_id)] == []  # personal channels are not the org's
        assert stranger.id and other_project
    assert outbox.drain(settings).delivered == 2
    mails = _mails(sink)
    assert [to for to, _, _ in mails] == [["alice@acme.test"], ["alice@acme.test"]]
    (_, assigned, text), (_, mention, mention_text) = mails
    link = f"{BASE}/orgs/acme/projects/{slug}/issues/{ISSUE}"
    assert assigned["Subject"] == f"[StackLens] Assigned to you: issue {ISSUE}"
    assert f"{owner.email} assigned it to alice@acme.test." in text and f"Open: {link}" in text
    assert mention["Subject"] == f"[StackLens] {owner.email} mentioned you: issue {ISSUE}"
    assert "@alice please look" in mention_text and mention["From"] == "sl@acme.test"
    # Alice was mentioned: the same comment does not reach her twice (as assignee).

    with session_scope(settings) as session:
        items = session.scalars(select(DigestItem).order_by(DigestItem.id)).all()
        assert [(i.user_id, i.kind) for i in items] == [(bob.id, "comments"), (bob.id, "assigned")]
        # A fixed clock: the news came in on 20 and 21 November.
        session.execute(
            update(DigestItem)
            .where(DigestItem.id == items[0].id)
            .values(created_at=datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
        )
        session.execute(
            update(DigestItem)
            .where(DigestItem.id == items[1].id)
            .values(created_at=datetime(2026, 11, 21, 7, 30, tzinfo=UTC))
        )
    with session_scope(settings) as session:
        assert send_digests(session, datetime(2026, 11, 21, 7, 59, tzinfo=UTC)) == 0  # before 08:00: it waits
        assert send_digests(session, datetime(2026, 11, 21, 8, 1, tzinfo=UTC)) == 1
        assert send_digests(session, datetime(2026, 11, 22, 8, 1, tzinfo=UTC)) == 0  # each item once
    assert outbox.drain(settings).delivered == 1
    to, digest, text = _mails(sink)[2]
    assert to == ["bob@acme.test"] and digest["Subject"] == "[StackLens] Daily digest: 2 issue updates"
    assert "What happened to your issues until 2026-11-21 08:00 UTC" in text
    assert (
        f"New comment by {owner.email}: issue {ISSUE}" in text
        and f"Assigned to #payments: issue {ISSUE}" in text
    )
    assert text.count(f"Open: {link}") == 2
    assert len(sink.messages) == 3  # carol (none) and dave (another organization) heard nothing


def test_an_edit_tells_only_the_members_it_mentions_for_the_first_time(
    settings: Settings, sink: MailSink
) -> None:
    smtp = f"smtp://127.0.0.1:{sink.port}"  # type: ignore[attr-defined]
    settings = settings.model_copy(update={"smtp_url": smtp, "mail_from": "sl@acme.test"})
    org_id, project_id, _ = org_with_project(settings)
    notifier = Notifier(BASE)
    with session_scope(settings) as session:
        owner = accounts.list_members(session, org_id)[0][0]
        accounts.add_member(session, org_id, "alice@acme.test", "a-long-password-1")
        accounts.add_member(session, org_id, "bob@acme.test", "a-long-password-1")
        row = add_comment(
            session,
            org_id,
            project_id,
            ISSUE,
            "@alice have a look",
            author=owner.email,
            author_user_id=owner.id,
            notifier=notifier,
        )
        edited = edit_comment(
            session,
            org_id,
            project_id,
            ISSUE,
            row.id,
            "@alice have a look, and @bob too",
            author=owner.email,
            notifier=notifier,
        )
        assert set(edited.mentions) == {"alice@acme.test", "bob@acme.test"}
    assert outbox.drain(settings).delivered == 2
    mails = _mails(sink)
    # Alice once (the comment), Bob once (the edit that named him); Alice is not told again.
    assert [to for to, _, _ in mails] == [["alice@acme.test"], ["bob@acme.test"]]
    assert "and @bob too" in mails[1][2]


def test_regressions_reach_the_assignee_and_watchers(settings: Settings, sink: MailSink, client) -> None:
    from stacklens.issues.notifications import notify_regressions
    from stacklens.issues.workflow import HISTORY_COLUMNS

    smtp = f"smtp://127.0.0.1:{sink.port}"  # type: ignore[attr-defined]
    settings = settings.model_copy(update={"smtp_url": smtp})
    org_id, project_id, slug = org_with_project(settings)
    notifier = Notifier(BASE, client)
    t0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

    def regressed(issue_id: int, at: datetime) -> None:
        row = [org_id, project_id, issue_id, at, "system", "resolved", "regressed", "new event", "", 0, None]
        client.insert("issue_history", [row], column_names=HISTORY_COLUMNS)

    with session_scope(settings) as session:
        alice = accounts.add_member(session, org_id, "alice@acme.test", "a-long-password-1")
        bob = accounts.add_member(session, org_id, "bob@acme.test", "a-long-password-1")
        assign(
            session,
            org_id,
            project_id,
            11,
            resolve_assignee(session, org_id, "alice@acme.test"),
            actor="o@acme.test",
        )
        set_watching(session, org_id, project_id, 11, bob.id, True)
        set_settings(session, org_id, bob.id, {slug: {"regressions": "none"}})
        regressed(11, t0 - timedelta(hours=1))  # before anyone was there to tell: not told
        assert notify_regressions(session, client, notifier, t0) == 0
        regressed(11, t0 + timedelta(minutes=5))
        regressed(12, t0 + timedelta(minutes=6))  # nobody's issue
        assert notify_regressions(session, client, notifier, t0 + timedelta(minutes=10)) == 1
        assert notify_regressions(session, client, notifier, t0 + timedelta(minutes=11)) == 0  # told once
        assert alice.id
    assert outbox.drain(settings).delivered == 1
    ((to, mail, text),) = _mails(sink)
    assert to == ["alice@acme.test"] and mail["Subject"] == "[StackLens] Regressed: issue 11"
    assert f"{BASE}/orgs/acme/projects/{slug}/issues/11" in text
