"""The retention run: a project's raw rows older than its own retention are deleted, other projects' stay, and
the table's directory on disk shrinks."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stacklens.control.db import session_scope
from stacklens.control.project_retention import retentions, set_project_retention
from stacklens.errors import InvalidInput
from stacklens.operations.retention import run_retention
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise RuntimeError("disk filler")


def _events(org: dict, days_ago: int, count: int) -> None:
    at = datetime.now(UTC) - timedelta(days=days_ago)
    payloads = []
    for n in range(count):
        payload = sdk_event(_fail, extra={"blob": os.urandom(3000).hex()})
        payload["timestamp"] = (at - timedelta(minutes=n)).isoformat()
        payloads.append(payload)
    land(org["org_id"], org["project_id"], payloads)


def _count(settings: Settings, project_id: int) -> int:
    return int(
        get_warehouse(settings)
        .query("SELECT count() FROM events WHERE project_id = {p:UInt64}", parameters={"p": project_id})
        .result_rows[0][0]
    )


def _events_directory_bytes(settings: Settings) -> int:
    """Bytes of every file in the events table's directories: parts a mutation replaced count until
    removed."""
    paths = (
        get_warehouse(settings)
        .query(
            "SELECT data_paths FROM system.tables WHERE database = {db:String} AND name = 'events'",
            parameters={"db": settings.warehouse_database},
        )
        .result_rows[0][0]
    )
    return sum(f.stat().st_size for path in paths for f in Path(path).rglob("*") if f.is_file())


def test_a_retention_run_deletes_what_a_project_no_longer_keeps(stores, org_factory) -> None:
    short, other = org_factory("Short"), org_factory("Other")
    _events(short, 40, 30)
    _events(short, 1, 10)
    _events(other, 40, 30)
    with session_scope(stores) as session:
        with pytest.raises(InvalidInput, match="days: must be from 1 to 90"):
            set_project_retention(session, short["org_id"], short["project_id"], 400, stores.retention_days)
        set_project_retention(session, short["org_id"], short["project_id"], 30, stores.retention_days)
    with session_scope(stores) as session:
        projects = retentions(session)
    assert {p.name: p.days for p in projects} == {
        f"{short['org_slug']}/{short['project']}": 30,
        f"{other['org_slug']}/{other['project']}": None,
    }
    before = _events_directory_bytes(stores)

    outcome = run_retention(
        get_warehouse(stores), stores.warehouse_database, projects, stores.log_retention_days
    )

    assert _count(stores, short["project_id"]) == 10  # the recent ones
    assert _count(stores, other["project_id"]) == 30  # the installation's 90 days
    assert outcome.rows_deleted == 30 and outcome.bytes_freed > 0
    after = _events_directory_bytes(stores)
    assert after < before * 0.8, (before, after)
