"""The demo's release-health sessions of the last days at the rates the real shop's 35-day backfill
measured (per release: ~320 sessions a day, and its crash-free share), sent as sentry-python's request-mode
aggregates (one bucket an hour, no user), read by ingest's session reader and folded into the session
states — what the demo and the pipelines do, without running them."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from demo import traffic
from stacklens.ingest.fields import Origin
from stacklens.ingest.sessions import session_rows
from tests.demo.demo_pageloads import HISTORY_DAYS
from tests.stacklens.releases.session_seed import fill_session_states

# Crash-free sessions % per release in the backfill (1.3.0 is the demo's crash-free regression).
CRASH_FREE = {
    "shop@1.0.0": 97.67,
    "shop@1.1.0": 97.12,
    "shop@1.2.0": 97.20,
    "shop@1.3.0": 94.70,
    "shop@1.4.0": 97.49,
}
PER_DAY = 320


def land(client: Client, org_id: int, project_id: int, days: int = 15, seed: int = 37) -> dict[str, int]:
    """Sessions of the last ``days`` days, each day's under the release the demo ran then; sessions per
    release."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    rows: list[dict] = []
    counted: dict[str, int] = {}
    hour = (now - timedelta(days=days)).replace(minute=0, second=0, microsecond=0)
    while hour < now - timedelta(hours=1):
        offset = (now.date() - hour.date()).days
        release = (traffic.release_at(offset, HISTORY_DAYS) if offset else traffic.CURRENT_RELEASE).name
        sessions = sum(rng.random() < PER_DAY / 24 / 40 for _ in range(40))
        crashed = sum(rng.random() > CRASH_FREE[release] / 100 for _ in range(sessions))
        started = hour + timedelta(minutes=rng.randint(0, 59))
        item = {
            "attrs": {"release": release, "environment": "production"},
            "aggregates": [
                {"started": started.isoformat(), "exited": sessions - crashed, "crashed": crashed}
            ],
        }
        if sessions:
            origin = Origin(
                org_id, project_id, None, uuid.uuid4().hex, time.time(), line_ts=started.isoformat()
            )
            rows.extend(session_rows("sessions", item, origin).rows)
            counted[release] = counted.get(release, 0) + sessions
        hour += timedelta(hours=1)
    body = "\n".join(json.dumps(r) for r in rows).encode()
    client.raw_insert("sessions", insert_block=body, fmt="JSONEachRow")
    fill_session_states(client, now - timedelta(days=days + 1), now + timedelta(hours=1))
    return counted
