"""Raw release-health sessions as ingest stores them (table `sessions`, migration 0011): browser-style
sessions sent as updates (an init, maybe an errored update, an end: exited, crashed or abnormal; some
users, some anonymous; a few updates sent twice), server-style aggregates (a bucket per status with its
quantity, no user), over releases, environments and days — and the session states the session_periods asset
builds from them."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from pipelines.assets.sessions import GRAIN_QUERIES
from stacklens.warehouse.queries import load_query
from tests.stacklens.performance.perf_seed import mark_built

NIL = uuid.UUID(int=0)
COLUMNS = [
    "org_id",
    "project_id",
    "session_id",
    "distinct_id",
    "status",
    "errors",
    "init",
    "seq",
    "quantity",
    "started",
    "timestamp",
    "duration",
    "release",
    "environment",
    "user_agent",
    "source",
    "received",
    "batch_id",
    "dedup_key",
]


@dataclass
class SessionRows:
    rows: list[dict] = field(default_factory=list)


def _row(**values: object) -> dict:
    base: dict[str, object] = {
        "distinct_id": "",
        "errors": 0,
        "init": 1,
        "seq": 0,
        "quantity": 1,
        "duration": None,
        "user_agent": "",
        "source": "session",
        "batch_id": "b",
    }
    base.update(values)
    base["dedup_key"] = uuid.uuid4().hex
    return base


def seed_sessions(
    client: Client,
    org_id: int,
    project_id: int,
    *,
    releases: dict[str, tuple[datetime, datetime, float]],
    browser_sessions: int,
    seed: int = 3,
    received: datetime | None = None,
) -> SessionRows:
    """``browser_sessions`` sessions spread over the releases' spans (``{release: (from, to, crash
    rate)}``), and one server aggregate per release, environment and hour of its span."""
    rng = random.Random(seed)
    out = SessionRows()
    names = list(releases)
    for i in range(browser_sessions):
        release = names[i % len(names)]
        first, last, crash_rate = releases[release]
        started = first + (last - first) * rng.random()
        started = started.replace(microsecond=started.microsecond // 1000 * 1000)
        environment = "production" if rng.random() < 0.75 else "staging"
        sid = uuid.UUID(int=rng.getrandbits(128))
        did = f"user-{rng.randint(1, browser_sessions // 3)}" if rng.random() < 0.7 else ""
        common = {"org_id": org_id, "project_id": project_id, "session_id": sid, "distinct_id": did}
        common |= {"started": started, "release": release, "environment": environment}
        arrived = received or started + timedelta(minutes=1)
        out.rows.append(_row(**common, status="ok", init=1, seq=1, timestamp=started, received=arrived))
        errored = rng.random() < 0.15
        if errored:
            at = started + timedelta(seconds=20)
            out.rows.append(
                _row(**common, status="ok", init=0, seq=2, errors=1, timestamp=at, received=arrived)
            )
        end = rng.random()
        status = "crashed" if end < crash_rate else ("abnormal" if end < crash_rate + 0.01 else "exited")
        if status == "exited" and rng.random() < 0.02:
            status = "unhandled"
        at = started + timedelta(seconds=60)
        closing = _row(
            **common,
            status=status,
            init=0,
            seq=3,
            errors=int(errored or status != "exited"),
            timestamp=at,
            duration=60.0,
            received=arrived,
        )
        out.rows.append(closing)
        if i % 17 == 0:  # sent again by a retrying SDK: a second row of the same update
            out.rows.append({**closing, "dedup_key": uuid.uuid4().hex})
    for release, (first, last, crash_rate) in releases.items():
        hour = first.replace(minute=0, second=0, microsecond=0)
        while hour < last:
            for environment in ("production", "staging"):
                bucket = hour + timedelta(minutes=rng.randint(0, 59))
                exited = rng.randint(20, 60)
                counts = {
                    "exited": exited,
                    "errored": rng.randint(0, 4),
                    "crashed": int(exited * crash_rate) + rng.randint(0, 1),
                    "abnormal": rng.randint(0, 1),
                }
                for status, quantity in counts.items():
                    if quantity:
                        out.rows.append(
                            _row(
                                org_id=org_id,
                                project_id=project_id,
                                session_id=NIL,
                                status=status,
                                quantity=quantity,
                                started=bucket,
                                timestamp=bucket,
                                release=release,
                                environment=environment,
                                source="sessions",
                                received=received or bucket + timedelta(minutes=1),
                            )
                        )
            hour += timedelta(hours=1)
    client.insert("sessions", [[r[c] for c in COLUMNS] for r in out.rows], column_names=COLUMNS)
    return out


def fill_session_states(client: Client, start: datetime, end: datetime) -> None:
    """What the session_periods asset does for the hours [start, end): minutes from the raw sessions, then the
    hours, days and blocks merged from them (the same named queries)."""
    parameters = {"start": start, "end": end, "materialized_at": datetime.now(UTC)}
    for query in GRAIN_QUERIES:
        client.command(load_query(f"pipelines/{query}"), parameters=parameters)
    mark_built(client, "session_periods")  # as the run does (the pages' "building" notice reads it)
