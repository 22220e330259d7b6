from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.activity import list_activity
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key, regenerate_api_key
from stacklens.control.keys.use import record_key_use
from stacklens.control.projects import create_project
from stacklens.settings import Settings


def test_pagination_walks_every_row_once_newest_first(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        project, _ = create_project(session, org.id, "Web")
        for n in range(7):
            create_app_key(session, project.id, f"svc_{n}")
        record_key_use(session, org.id, "api", 1)
        record_key_use(session, org.id, "app", 2, events=5)
    seen, cursor, pages = [], None, 0
    while True:
        with session_scope(control_settings) as session:
            rows, cursor = list_activity(session, org.id, cursor=cursor, limit=3)
        seen.extend(rows)
        pages += 1
        if cursor is None:
            break
    ids = [r.id for r in seen]
    assert len(ids) == len(set(ids)) == 2 + 2 + 7 + 2  # org + api key + project/primary key + 7 keys + 2 uses
    assert pages == 5
    times = [r.created_at for r in seen]
    assert times == sorted(times, reverse=True)


def test_api_key_only_filter_and_isolation(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        other, _ = accounts.create_organization(session, "Other", "o@b.co", "password-1")
        create_project(session, org.id, "Web")
        regenerate_api_key(session, org.id)
        record_key_use(session, org.id, "app", 1)
        record_key_use(session, org.id, "api", 1)
        regenerate_api_key(session, other.id)
    with session_scope(control_settings) as session:
        rows, _ = list_activity(session, org.id, api_key_only=True)
        everything, _ = list_activity(session, org.id)
        theirs, _ = list_activity(session, other.id)
    assert {r.action for r in rows} == {"api_key.created", "api_key.regenerated", "api_key.used"}
    assert {"project.created", "app_key.created", "app_key.used"} <= {r.action for r in everything}
    assert {r.id for r in theirs}.isdisjoint({r.id for r in everything})


def test_bad_cursor_is_a_value_error(control_settings: Settings) -> None:
    with pytest.raises(ValueError, match="invalid cursor"), session_scope(control_settings) as session:
        list_activity(session, 1, cursor="definitely-not-a-cursor")
