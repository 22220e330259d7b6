"""Server-side sessions: hashed tokens, revocation, idle and absolute lifetimes."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.models import UserSession, utcnow
from stacklens.control.signin_sessions import (
    Lifetimes,
    end_session,
    end_user_sessions,
    resolve_session,
    start_session,
)

LIFE = Lifetimes(idle=timedelta(minutes=30), absolute=timedelta(days=1))


def _user(settings) -> int:
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@example.test", "long-enough-1")
        return accounts.list_members(session, org.id)[0][0].id


def test_token_is_stored_hashed_and_revocation_is_immediate(control_settings) -> None:
    user_id = _user(control_settings)
    with session_scope(control_settings) as session:
        first = start_session(session, user_id, LIFE, ip="10.0.0.1", user_agent="test")
        second = start_session(session, user_id, LIFE)
    with session_scope(control_settings) as session:
        hashes = session.scalars(select(UserSession.token_hash)).all()
        assert first not in hashes and len(hashes) == 2
        assert resolve_session(session, first, LIFE).id == user_id
        assert resolve_session(session, "forged-token", LIFE) is None
        end_session(session, first)
    with session_scope(control_settings) as session:
        assert resolve_session(session, first, LIFE) is None
        assert resolve_session(session, second, LIFE) is not None
        assert end_user_sessions(session, user_id) == 1
    with session_scope(control_settings) as session:
        assert resolve_session(session, second, LIFE) is None


def test_idle_and_absolute_lifetimes(control_settings) -> None:
    user_id = _user(control_settings)
    with session_scope(control_settings) as session:
        token = start_session(session, user_id, LIFE)
        now = utcnow()
        # Used every 20 minutes, the session lives on (each use moves the idle limit)…
        for minutes in (20, 40, 60):
            assert resolve_session(session, token, LIFE, now + timedelta(minutes=minutes)) is not None
        # …but not past its absolute end, however busy.
        assert resolve_session(session, token, LIFE, now + timedelta(days=1, seconds=1)) is None
        idle = start_session(session, user_id, LIFE)
        assert resolve_session(session, idle, LIFE, now + timedelta(minutes=31)) is None
        assert resolve_session(session, idle, LIFE, now + timedelta(minutes=1)) is None  # stays ended


def test_password_change_and_member_removal_end_sessions(control_settings) -> None:
    user_id = _user(control_settings)
    with session_scope(control_settings) as session:
        keep, other = start_session(session, user_id, LIFE), start_session(session, user_id, LIFE)
        accounts.change_password(
            session, user_id, "long-enough-1", "a new long phrase", keep_session_token=keep
        )
    with session_scope(control_settings) as session:
        assert resolve_session(session, keep, LIFE) is not None
        assert resolve_session(session, other, LIFE) is None
        org, _ = accounts.create_organization(session, "Beta", "b@example.test", "long-enough-1")
        accounts.add_member(session, org.id, "owner@example.test", "", "member")
        token = start_session(session, user_id, LIFE)
        accounts.remove_member(session, org.id, user_id)
    with session_scope(control_settings) as session:
        assert resolve_session(session, token, LIFE) is None
