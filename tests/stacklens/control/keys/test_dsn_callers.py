"""A DSN caller is remembered for a moment, and never past a write of this process: a key revoked, a quota
changed or a project setting saved answers at the next request."""

from __future__ import annotations

from sqlalchemy import update

from stacklens.control.db import session_scope, writes_sent
from stacklens.control.keys import dsn_callers
from stacklens.control.keys.lifecycle import revoke_app_key
from stacklens.control.models import Organization
from stacklens.settings import Settings


def test_remembered_until_a_write_or_its_moment_passes(settings: Settings, make_org, monkeypatch) -> None:
    org = make_org("Acme")
    key = str(org["app_key"])
    first = dsn_callers.dsn_caller(settings, key)
    assert first is not None and first.identity.project_id == org["project_id"]
    assert dsn_callers.dsn_caller(settings, key) is first  # no look-up: nothing changed

    writes = writes_sent()
    with session_scope(settings) as session:
        session.execute(
            update(Organization).where(Organization.id == org["org_id"]).values(events_per_minute=7)
        )
    assert writes_sent() > writes
    changed = dsn_callers.dsn_caller(settings, key)
    assert changed is not first and changed is not None and changed.events_per_minute == 7

    with session_scope(settings) as session:
        revoke_app_key(session, changed.identity.app_key_id)
    assert dsn_callers.dsn_caller(settings, key) is None
    assert dsn_callers.dsn_caller(settings, "stacklens_app_unknown0000000000") is None

    # A write by another process is not counted here: the answer lasts a second at most.
    monkeypatch.setattr(dsn_callers._callers, "seconds", 0.0)
    again = make_org("Other")
    other = str(again["app_key"])
    remembered = dsn_callers.dsn_caller(settings, other)
    assert remembered is not None and dsn_callers.dsn_caller(settings, other) is not remembered
