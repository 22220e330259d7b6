"""Key use counted in memory, written once by one writer, and seen by a reader at once."""

from __future__ import annotations

from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.keys.use_tally import count_key_use, flush_all, write_pending
from stacklens.control.models import KeyUsage
from stacklens.settings import Settings


def test_uses_are_added_up_and_a_reader_sees_them_at_once(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Tally", "owner@tally.example", "password-123")
        org_id = org.id
    for n in range(5):
        count_key_use(control_settings, org_id, "app", 41, events=2, ip=f"10.0.0.{n}")
    count_key_use(control_settings, org_id, "api", 7, requests=0, events=10, user_agent="shipper/1")
    with session_scope(control_settings) as session:
        write_pending(session)
        rows = {
            (u.key_kind, u.key_id): (u.requests, u.events, u.last_ip, u.last_user_agent)
            for u in session.scalars(select(KeyUsage).where(KeyUsage.org_id == org_id))
        }
    assert rows == {("app", 41): (5, 10, "10.0.0.4", ""), ("api", 7): (0, 10, "", "shipper/1")}
    count_key_use(control_settings, org_id, "app", 41, events=1)
    flush_all()
    with session_scope(control_settings) as session:
        usage = session.scalar(select(KeyUsage).where(KeyUsage.key_kind == "app", KeyUsage.key_id == 41))
        assert usage is not None and (usage.requests, usage.events) == (6, 11)
