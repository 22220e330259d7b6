"""Key use: one row per key per hour, incremented atomically, on both control stores."""

from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.activity import list_activity
from stacklens.control.auth import verify_api_key
from stacklens.control.db import session_scope
from stacklens.control.keys.use import record_key_use
from stacklens.settings import Settings


def test_key_use_is_aggregated_per_key_per_hour(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, api_key = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        key_id = verify_api_key(session, api_key).api_key_id
    for n in range(3):
        with session_scope(control_settings) as session:
            record_key_use(
                session, org.id, "api", key_id, events=10, ip=f"10.0.0.{n}", user_agent=f"shipper/{n}"
            )
    with session_scope(control_settings) as session:
        rows, _ = list_activity(session, org.id)
    used = [r for r in rows if r.action == "api_key.used"]
    assert len(used) == 1
    assert used[0].detail["requests"] == 3 and used[0].detail["events"] == 30
    assert used[0].detail["last_ip"] == "10.0.0.2" and used[0].detail["last_user_agent"] == "shipper/2"
    with (
        pytest.raises(ValueError, match="key_kind must be one of"),
        session_scope(control_settings) as session,
    ):
        record_key_use(session, org.id, "bogus", key_id)
