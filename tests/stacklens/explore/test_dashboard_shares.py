"""Dashboard share links: the token shown once (its hash stored), opened until it expires or is revoked, never
made for another organization's dashboard; a snapshot is fresh for ten minutes and of visitors arriving
when it went stale exactly one refreshes it."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.control.db import session_scope
from stacklens.errors import InvalidInput, NotFound
from stacklens.explore.dashboard_shares import (
    ShareGone,
    active_shares,
    claim_refresh,
    create_share,
    expiry_days,
    fresh,
    open_share,
    revoke_shares,
    store_snapshot,
)
from stacklens.explore.dashboards import create_dashboard
from stacklens.settings import Settings

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_links_open_until_expired_or_revoked(settings: Settings, make_org) -> None:
    acme, other = int(make_org("Acme")["org_id"]), int(make_org("Globex")["org_id"])
    with session_scope(settings) as session:
        board = create_dashboard(session, acme, {"name": "Vitals"})
        row, token = create_share(session, acme, board.id, 7, now=NOW)
        assert row.token_hash == hashlib.sha256(token.encode()).hexdigest() and token not in row.token_hash
        assert open_share(session, token, NOW + timedelta(days=6)).id == row.id
        with pytest.raises(ShareGone):
            open_share(session, token, NOW + timedelta(days=7))
        with pytest.raises(NotFound):
            open_share(session, token + "x", NOW)
        with pytest.raises(NotFound):
            create_share(session, other, board.id, 7)
        with pytest.raises(NotFound):
            revoke_shares(session, other, board.id)
        second, token2 = create_share(session, acme, board.id, 30, now=NOW)
        assert {s.id for s in active_shares(session, acme, board.id, NOW)} == {row.id, second.id}
        assert revoke_shares(session, acme, board.id, NOW) == 2
        with pytest.raises(ShareGone):
            open_share(session, token2, NOW)
    assert expiry_days(None) == 30 and expiry_days({"expires_in_days": 365}) == 365
    for bad in ({"expires_in_days": 0}, {"expires_in_days": "7"}, {"days": 7}, []):
        with pytest.raises(InvalidInput):
            expiry_days(bad)


def test_one_visitor_refreshes_a_stale_snapshot(settings: Settings, make_org) -> None:
    acme = int(make_org("Acme")["org_id"])
    with session_scope(settings) as session:
        board = create_dashboard(session, acme, {"name": "Vitals"})
        row, _ = create_share(session, acme, board.id, 7, now=NOW)
        assert not fresh(row, NOW) and claim_refresh(session, row, NOW)
        store_snapshot(session, row, {"name": "Vitals"}, NOW)
        assert fresh(row, NOW + timedelta(minutes=9)) and not fresh(row, NOW + timedelta(minutes=10))
    later = NOW + timedelta(minutes=11)
    with session_scope(settings) as first, session_scope(settings) as second:
        a, b = first.get(type(row), row.id), second.get(type(row), row.id)
        assert a is not None and b is not None
        assert [claim_refresh(first, a, later), claim_refresh(second, b, later)] == [True, False]
