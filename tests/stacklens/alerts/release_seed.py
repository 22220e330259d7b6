"""Raw release-health sessions for the release alert rules' tests (table `sessions`, migration 0011, as ingest
stores a session that starts and ends in one update: sentry-python's single update with ``init`` and its final
status), and the session states the session_states asset builds from them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from tests.stacklens.releases.session_seed import COLUMNS, fill_session_states


def spread(
    org_id: int,
    project_id: int,
    release: str,
    first: datetime,
    last: datetime,
    n: int,
    crash_every: int = 0,
    *,
    environment: str = "production",
    users: int = 0,
) -> list[dict]:
    """``n`` sessions started evenly over [first, last); every ``crash_every``-th one crashed (0: none), the
    others exited; with ``users``, the session ``i`` is user ``u{i % users}``."""
    rows = []
    for i in range(n):
        started = first + (last - first) * (i + 0.5) / n
        started = started.replace(microsecond=started.microsecond // 1000 * 1000)
        crashed = crash_every > 0 and i % crash_every == crash_every - 1
        rows.append(
            {
                "org_id": org_id,
                "project_id": project_id,
                "session_id": uuid.uuid4(),
                "distinct_id": f"u{i % users}" if users else "",
                "status": "crashed" if crashed else "exited",
                "errors": int(crashed),
                "init": 1,
                "seq": 1,
                "quantity": 1,
                "started": started,
                "timestamp": started + timedelta(seconds=30),
                "duration": 30.0,
                "release": release,
                "environment": environment,
                "user_agent": "",
                "source": "session",
                "received": started + timedelta(minutes=1),
                "batch_id": "b",
                "dedup_key": uuid.uuid4().hex,
            }
        )
    return rows


def land(client: Client, rows: list[dict]) -> None:
    """Insert the rows and build the session states of the hours they started in (what the asset does)."""
    client.insert("sessions", [[r[c] for c in COLUMNS] for r in rows], column_names=COLUMNS)
    first = min(r["started"] for r in rows).replace(minute=0, second=0, microsecond=0)
    last = max(r["started"] for r in rows).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    fill_session_states(client, first.astimezone(UTC), last.astimezone(UTC))
