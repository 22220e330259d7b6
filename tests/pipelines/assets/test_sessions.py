"""The session_periods asset through real Dagster runs: raw sessions landed, the sessions schedule's plan
picks the hours of their starts, the asset writes the minute, hour, day and block states with its checks
passing, and a late update — a session closed crashed hours after it began — refreshes the hour that counts
it, on the next tick."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from pipelines.embedded import materialize_now
from stacklens.control.db import migrate_control_store
from stacklens.releases.health import Window, release_health
from tests.pipelines.pipeline_seed import ORG, PROJECT
from tests.stacklens.releases.session_seed import COLUMNS, seed_sessions

START = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=30)


def _state_sums(client, grain: str) -> tuple[int, int]:
    row = client.query(
        "SELECT sum(sessions), sum(crashed) FROM session_periods FINAL WHERE grain = {g:String}",
        parameters={"g": grain},
    ).result_rows[0]
    return int(row[0]), int(row[1])


def test_the_asset_builds_every_grain_and_a_late_update_refreshes_its_hour(
    client, instance, settings, defs
) -> None:
    migrate_control_store(settings)
    received = datetime.now(UTC) - timedelta(minutes=5)
    spans = {"web@2.0.0": (START, START + timedelta(hours=26), 0.02)}
    seed_sessions(client, ORG, PROJECT, releases=spans, browser_sessions=600, seed=5, received=received)
    outcomes = materialize_now(defs, instance, select=["session_periods"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes if not o.success]
    checks = {name: ok for o in outcomes for name, ok in o.checks.items()}
    assert checks == {
        "session_periods:session_counts_are_consistent": True,
        "session_periods:session_hours_add_up_to_their_days": True,
    }
    minutes = _state_sums(client, "minute")
    assert minutes[0] > 600 and _state_sums(client, "hour") == minutes == _state_sums(client, "day")
    window = Window(START - timedelta(hours=1), START + timedelta(hours=27))
    (before,) = release_health(client, ORG, PROJECT, window)
    assert (before.sessions, before.crashed_sessions) == minutes

    # A session that began at START + 1 h 10 min closes crashed now: the next tick refreshes that hour.
    sid = uuid.uuid4()
    started = START + timedelta(hours=1, minutes=10)
    rows = []
    for init, seq, status, at in ((1, 1, "ok", started), (0, 2, "crashed", datetime.now(UTC))):
        rows.append(
            {
                "org_id": ORG,
                "project_id": PROJECT,
                "session_id": sid,
                "distinct_id": "late-user",
                "status": status,
                "errors": int(status == "crashed"),
                "init": init,
                "seq": seq,
                "quantity": 1,
                "started": started,
                "timestamp": at,
                "duration": None,
                "release": "web@2.0.0",
                "environment": "production",
                "user_agent": "",
                "source": "session",
                "received": datetime.now(UTC),
                "batch_id": "late",
                "dedup_key": f"late-{seq}",
            }
        )
    client.insert("sessions", [[r[c] for c in COLUMNS] for r in rows], column_names=COLUMNS)
    outcomes = materialize_now(defs, instance, select=["session_periods"])
    assert outcomes and all(o.success for o in outcomes)
    (after,) = release_health(client, ORG, PROJECT, window)
    assert (after.sessions, after.crashed_sessions) == (before.sessions + 1, before.crashed_sessions + 1)
    assert after.crashed_users == before.crashed_users + 1
    assert (
        _state_sums(client, "day")
        == _state_sums(client, "minute")
        == (after.sessions, after.crashed_sessions)
    )
