"""The activity log in words: every entry the product writes reads as a sentence, times to the second, no
``name=value`` pairs, no booleans, no microseconds; an unknown action still reads as words."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from stacklens.control import accounts, invitations
from stacklens.control.activity import ActivityRow, list_activity, record_activity
from stacklens.control.activity_text import describe, when
from stacklens.control.auth import verify_api_key
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key, create_next_api_key, reveal_api_key
from stacklens.control.keys.use import record_key_use
from stacklens.control.projects import create_project
from stacklens.settings import Settings

MACHINE_TEXT = re.compile(r"\w=\S|\bTrue\b|\bFalse\b|\bNone\b|\d{2}:\d{2}:\d{2}\.\d|T\d{2}:\d{2}|\+00:00")


def test_entries_of_every_kind_read_as_sentences(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, api_key = accounts.create_organization(session, "Acme", "owner@b.co", "password-1")
        owner_id = accounts.list_members(session, org.id)[0][0].id
        project, _ = create_project(session, org.id, "Web")
        create_app_key(session, project.id, "frontend", owner_id)
        reveal_api_key(session, org.id, owner_id)
        create_next_api_key(session, org.id, owner_id)
        reveal_api_key(session, org.id, owner_id, next_key=True)
        member = accounts.add_member(session, org.id, "m@b.co", "password-2", actor_user_id=owner_id)
        accounts.change_role(session, org.id, member.id, "owner", actor_user_id=owner_id)
        invitations.create_invitation(
            session, invitations.signer_for("x" * 32), org.id, "new@b.co", actor_user_id=owner_id
        )
        accounts.set_quota(session, org.id, events_per_minute=1000, requests_per_second=50)
        key_id = verify_api_key(session, api_key).api_key_id
        record_key_use(session, org.id, "api", key_id, events=12, ip="10.0.0.7", user_agent="shipper/2")
        record_activity(
            session,
            org.id,
            "alert_rule.muted",
            "alert_rule",
            1,
            owner_id,
            {"until": "2026-01-02T03:04:05.678901+00:00", "quiet": True, "note": None},
        )
        org_id = org.id
    with session_scope(control_settings) as session:
        rows, _ = list_activity(session, org_id, limit=100)
    sentences = {row.action: describe(row) for row in reversed(rows)}  # the newest of each action
    for action, sentence in sentences.items():
        assert not MACHINE_TEXT.search(sentence), (action, sentence)
        assert sentence[0].isupper() and sentence.endswith("."), (action, sentence)

    assert sentences["organization.created"] == "Created the organization “Acme”."
    assert re.fullmatch(r"Revealed the next API key …\w{4}\.", sentences["api_key.viewed"])
    assert re.fullmatch(r"Created the frontend app key …\w{4} of project web\.", sentences["app_key.created"])
    assert sentences["member.role_changed"] == "Changed the role of m@b.co from member to owner."
    assert re.fullmatch(
        r"Invited new@b\.co as member; the link works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.",
        sentences["invitation.created"],
    )
    assert sentences["quota.changed"] == (
        "Set the rate limits to 1,000 events per minute and 50 requests per second per API key."
    )
    assert re.fullmatch(
        r"The API key made 1 request carrying 12 events in the hour from \d\d:00 UTC on \d{4}-\d\d-\d\d; "
        r"the last from 10\.0\.0\.7 \(shipper/2\)\.",
        sentences["api_key.used"],
    )
    # An action without its own sentence: its name and detail in words, the time to the second.
    assert sentences["alert_rule.muted"] == "Alert rule muted: until: 2026-01-02 03:04:05 UTC; quiet: yes."


def test_both_api_key_reveals_and_odd_details() -> None:
    def row(action: str, detail: dict) -> ActivityRow:
        return ActivityRow("e1", datetime(2026, 1, 1, tzinfo=UTC), action, "api_key", 1, 1, detail)

    assert describe(row("api_key.viewed", {"last4": "ab12", "next": False})) == (
        "Revealed the current API key …ab12."
    )
    assert describe(
        row("api_key.regenerated", {"last4": "cd34", "previous_id": 3, "promoted_next": True})
    ) == (
        "Regenerated the API key: the next key …cd34 became the current key; the previous key stopped working."
    )
    # A detail of an unexpected shape (an older version wrote it) still gives a sentence, never an error.
    assert describe(row("quota.rate_limited", {"refusals": "many"})).startswith(
        "Quota rate limited: refusals: many"
    )
    assert when("2026-11-24T23:10:46.123456+00:00") == "2026-11-24 23:10:46 UTC"
    assert when("not a time") == "not a time"
