"""Share links: signed tokens stored only as hashes, expiry choices, revocation, and tokens this server never
signed; the time-range form's checks name what to change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from itsdangerous import Signer
from sqlalchemy import select

from stacklens.control import share_links
from stacklens.control.db import session_scope
from stacklens.control.models import ShareLink, User
from stacklens.settings import Settings

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_create_open_revoke_and_expire(control_settings: Settings, make_org) -> None:
    org = make_org("Acme")
    signer = Signer(b"one secret", salt="stacklens.share-link")
    ids = {"org_id": org["org_id"], "project_id": org["project_id"], "issue_id": 42}
    with session_scope(control_settings) as session:
        user_id = session.scalar(select(User.id))  # the owner, the one user of this store
        assert user_id is not None
        link, token = share_links.create_link(session, signer, **ids, user_id=user_id, expires_days=7)
        assert link.token_hash != token and token not in link.token_hash  # only the hash is kept
        with pytest.raises(share_links.ShareRefused, match="expires after 1, 7, 30 days"):
            share_links.create_link(session, signer, **ids, user_id=user_id, expires_days=2)
        link_id = link.id

    with session_scope(control_settings) as session:
        opened = share_links.open_link(session, signer, token)
        assert opened is not None and opened.id == link_id and opened.issue_id == "42"
        # Another installation's signature, a forged token and a tampered one open nothing.
        assert (
            share_links.open_link(session, Signer(b"another secret", salt="stacklens.share-link"), token)
            is None
        )
        assert share_links.open_link(session, signer, "forged") is None
        assert share_links.open_link(session, signer, signer.sign(b"unknown").decode()) is None
        (listed,) = share_links.issue_links(session, int(org["org_id"]), int(org["project_id"]), 42)
        assert listed.state == "active" and listed.created_by.startswith("owner-")
        # Only through the link's own organization, project and issue.
        assert (
            share_links.revoke_link(session, int(org["org_id"]) + 1, int(org["project_id"]), 42, link_id)
            is None
        )
        assert (
            share_links.revoke_link(session, int(org["org_id"]), int(org["project_id"]), 43, link_id) is None
        )
        assert (
            share_links.revoke_link(session, int(org["org_id"]), int(org["project_id"]), 42, link_id)
            is not None
        )

    with session_scope(control_settings) as session:
        with pytest.raises(share_links.LinkGone):
            share_links.open_link(session, signer, token)
        revoked = session.get(ShareLink, link_id)
        assert revoked is not None and share_links.state_of(revoked) == "revoked"
        revoked.revoked_at = None
        assert share_links.state_of(revoked, datetime.now(UTC) + timedelta(days=8)) == "expired"


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("", "2026-11-20T10:00", "pick both"),
        ("2026-11-20T10:00", "2026-11-20T09:00", "must come before"),
        ("2025-01-01T00:00", "2026-11-20T00:00", "at most 366 days"),
        ("2026-11-21T00:00", "2026-11-22T00:00", "starts in the future"),
        ("yesterday", "2026-11-20T00:00", "is not a date and time"),
    ],
)
def test_absolute_range_names_what_to_change(start: str, end: str, message: str) -> None:
    with pytest.raises(share_links.ShareRefused, match=message):
        share_links.absolute_range(start, end, NOW)


def test_absolute_range_reads_utc() -> None:
    assert share_links.absolute_range("2026-11-19T08:00", "2026-11-20T08:30", NOW) == (
        datetime(2026, 11, 19, 8, 0, tzinfo=UTC),
        datetime(2026, 11, 20, 8, 30, tzinfo=UTC),
    )
