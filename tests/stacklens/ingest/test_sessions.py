"""Session items read as Relay reads them: fields, defaults, statuses, aggregates, times and row keys."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.ingest.clock import time_window
from stacklens.ingest.fields import Origin
from stacklens.ingest.sessions import NIL_SESSION, BadSession, session_rows
from stacklens.ingest.timeparse import format_ms

RECEIVED = 1_795_000_000.0
DAY = 86_400.0
SID = "8333339f-5675-4f89-a9a0-1c935255ab58"


def origin(line_ts: str | None = None, project_id: int = 2) -> Origin:
    return Origin(1, project_id, None, "batch", RECEIVED, line_ts, *time_window(RECEIVED, 90))


def update(**fields: Any) -> dict[str, Any]:
    return {
        "sid": SID,
        "did": "user-7",
        "init": True,
        "started": format_ms(RECEIVED - 120).replace(" ", "T") + "Z",
        "timestamp": RECEIVED - 60,
        "status": "exited",
        "duration": 60.5,
        "attrs": {"release": "shop@1.3.0", "environment": "production", "user_agent": "Firefox/145.0"},
        **fields,
    }


def one(payload: dict[str, Any], where: Origin | None = None) -> dict[str, Any]:
    made = session_rows("session", payload, where or origin())
    assert len(made.rows) == 1 and made.dropped == ""
    return made.rows[0]


def test_an_update_becomes_one_row_with_every_field() -> None:
    row = one(update(errors=2, seq=42))
    assert {k: v for k, v in row.items() if k not in ("dedup_key", "received")} == {
        "org_id": 1,
        "project_id": 2,
        "session_id": SID,
        "distinct_id": "user-7",
        "status": "exited",
        "errors": 2,
        "init": 1,
        "seq": 42,
        "quantity": 1,
        "started": format_ms(RECEIVED - 120),
        "timestamp": format_ms(RECEIVED - 60),
        "duration": 60.5,
        "release": "shop@1.3.0",
        "environment": "production",
        "user_agent": "Firefox/145.0",
        "source": "session",
        "batch_id": "batch",
    }
    assert row["received"] == format_ms(RECEIVED) and len(row["dedup_key"]) == 32


def test_defaults_are_relays() -> None:
    """status ok, no errors, not initial, the line's time, seq = the update's time in ms, a derived sid."""
    payload = {"started": RECEIVED - 10, "attrs": {"release": "r@1"}}
    row = one(payload, origin(line_ts=format_ms(RECEIVED - 5).replace(" ", "T") + "Z"))
    assert (row["status"], row["errors"], row["init"], row["distinct_id"], row["environment"]) == (
        "ok",
        0,
        0,
        "",
        "",
    )
    assert row["timestamp"] == format_ms(RECEIVED - 5) and row["seq"] == int((RECEIVED - 5) * 1000)
    assert row["duration"] is None and row["session_id"] != NIL_SESSION
    # Reproducible: the same update sent again, in another line, is the same session and the same key.
    again = one(payload)
    assert (again["session_id"], again["dedup_key"]) == (row["session_id"], row["dedup_key"])
    # Without a line time the update is stamped when received.
    assert one(payload)["timestamp"] == format_ms(RECEIVED)


@pytest.mark.parametrize("status", ["ok", "exited", "errored", "crashed", "abnormal", "unhandled"])
def test_every_relay_status_is_kept(status: str) -> None:
    assert one(update(status=status))["status"] == status


def test_the_key_tells_updates_apart_and_names_the_project() -> None:
    first, later = one(update(status="ok")), one(update(status="crashed", timestamp=RECEIVED - 30))
    assert first["session_id"] == later["session_id"] and first["dedup_key"] != later["dedup_key"]
    # Key order and formatting do not matter, the project does.
    shuffled = dict(reversed(list(update(status="ok").items())))
    assert one(shuffled)["dedup_key"] == first["dedup_key"]
    assert one(update(status="ok"), origin(project_id=3))["dedup_key"] != first["dedup_key"]


def test_nil_user_and_sid_count_as_none() -> None:
    row = one(update(did="00000000-0000-0000-0000-000000000000", sid=NIL_SESSION))
    assert row["distinct_id"] == "" and row["session_id"] != NIL_SESSION
    assert one(update(did=1234))["distinct_id"] == "1234"
    assert one(update(sid=SID.replace("-", "").upper()))["session_id"] == SID


def test_times_follow_the_events_clock() -> None:
    # An update stamped before its session started happened at the start (Relay).
    row = one(update(timestamp=RECEIVED - 500, started=RECEIVED - 100))
    assert row["timestamp"] == row["started"] == format_ms(RECEIVED - 100)
    # A clock an hour ahead: moved back to the receive time, started with it (the duration kept).
    ahead = one(update(started=RECEIVED + 3600 - 30, timestamp=RECEIVED + 3600))
    assert (ahead["started"], ahead["timestamp"]) == (format_ms(RECEIVED - 30), format_ms(RECEIVED))
    # Within a minute ahead is ordinary drift: kept as sent.
    assert one(update(started=RECEIVED + 30, timestamp=RECEIVED + 50))["timestamp"] == format_ms(
        RECEIVED + 50
    )
    with pytest.raises(BadSession, match="longer ago than the warehouse keeps"):
        session_rows("session", update(started=RECEIVED - 100 * DAY), origin())


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"attrs": None}, "`attrs.release` is required"),
        ({"attrs": {"environment": "production"}}, "`attrs.release` is required"),
        ({"attrs": {"release": "  "}}, "`attrs.release` must be a non-empty text"),
        ({"attrs": {"release": "a" * 201}}, "at most 200"),
        ({"attrs": {"release": "v1\n2"}}, "control character"),
        ({"attrs": "shop@1"}, "`attrs` must be an object"),
        ({"status": "finished"}, "`status` must be one of ok, exited"),
        ({"started": None}, "`started` is required"),
        ({"started": "yesterday"}, "`started` is not a time"),
        ({"timestamp": "soon"}, "`timestamp` is not a time"),
        ({"errors": -1}, "`errors` must be a whole number"),
        ({"errors": "3"}, "`errors` must be a whole number"),
        ({"seq": 2**64 - 1}, "`seq` must be a whole number"),
        ({"sid": "not-a-uuid"}, "`sid` must be a UUID"),
        ({"did": {"id": 1}}, "`did` must be text"),
        ({"duration": "long"}, "`duration` must be a number"),
        ({"init": "yes"}, "`init` must be true or false"),
    ],
)
def test_a_malformed_update_is_refused_naming_the_field(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(BadSession, match=words.replace("(", r"\(")):
        session_rows("session", update(**fields), origin())


def test_an_invalid_environment_is_dropped_and_the_session_kept() -> None:
    for bad in ("a/b", "x" * 65, "prod\tuction", 7):
        assert one(update(attrs={"release": "r@1", "environment": bad}))["environment"] == ""


def aggregate(*buckets: dict[str, Any]) -> dict[str, Any]:
    return {"attrs": {"release": "shop@1.4.0", "environment": "production"}, "aggregates": list(buckets)}


def test_each_bucket_and_status_is_a_row_with_its_count() -> None:
    minute = RECEIVED - 600
    made = session_rows(
        "sessions",
        aggregate(
            {"started": minute, "exited": 12, "errored": 3, "crashed": 1, "abnormal": 0},
            {"started": minute + 60, "did": "user-1", "exited": 1, "unhandled": 2},
            {"started": minute + 120},  # nothing counted: no row
        ),
        origin(line_ts="2026-11-25T10:00:00.123Z"),
    )
    got = sorted(
        (r["started"], r["status"], r["quantity"], r["distinct_id"], r["session_id"], r["init"])
        for r in made.rows
    )
    first, second = format_ms(minute), format_ms(minute + 60)
    assert got == [
        (first, "crashed", 1, "", NIL_SESSION, 1),
        (first, "errored", 3, "", NIL_SESSION, 1),
        (first, "exited", 12, "", NIL_SESSION, 1),
        (second, "exited", 1, "user-1", NIL_SESSION, 1),
        (second, "unhandled", 2, "user-1", NIL_SESSION, 1),
    ]
    assert all(r["timestamp"] == r["started"] and r["source"] == "sessions" for r in made.rows)
    keys = {r["dedup_key"] for r in made.rows}
    assert len(keys) == 5 and len({k.split(":")[0] for k in keys}) == 1


def test_an_aggregate_is_told_apart_by_its_line_time() -> None:
    """Two flushes of a quiet minute can carry the same counts: the line's time keeps both."""
    payload = aggregate({"started": RECEIVED - 600, "exited": 1})
    first = session_rows("sessions", payload, origin(line_ts="2026-11-25T10:00:00.100Z")).rows
    again = session_rows("sessions", payload, origin(line_ts="2026-11-25T10:00:00.100Z")).rows
    later = session_rows("sessions", payload, origin(line_ts="2026-11-25T10:01:00.100Z")).rows
    assert first[0]["dedup_key"] == again[0]["dedup_key"] != later[0]["dedup_key"]


def test_aggregate_buckets_outside_the_window() -> None:
    made = session_rows(
        "sessions",
        aggregate(
            {"started": RECEIVED - 200 * DAY, "exited": 4},
            {"started": RECEIVED + 3600, "crashed": 1},  # a clock ahead: now
            {"started": RECEIVED - 60, "exited": 2},
        ),
        origin(),
    )
    assert sorted((r["status"], r["started"]) for r in made.rows) == [
        ("crashed", format_ms(RECEIVED)),
        ("exited", format_ms(RECEIVED - 60)),
    ]
    assert made.dropped.startswith("1 of 3 buckets started before")
    with pytest.raises(BadSession, match="every bucket of `aggregates` started before"):
        session_rows("sessions", aggregate({"started": RECEIVED - 200 * DAY, "exited": 4}), origin())


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"aggregates": [{"started": RECEIVED, "exited": 1}]}, "`attrs.release` is required"),
        (aggregate(), "`aggregates` must be a non-empty list"),
        ({**aggregate(), "aggregates": {"started": RECEIVED}}, "`aggregates` must be a non-empty list"),
        (aggregate([1]), r"`aggregates\[0\]` must be an object"),
        (aggregate({"exited": 1}), r"`aggregates\[0\].started` is required"),
        (aggregate({"started": RECEIVED, "exited": 1.5}), r"`aggregates\[0\].exited` must be a whole number"),
        (aggregate({"started": RECEIVED, "did": ["a"]}), r"`aggregates\[0\].did` must be text"),
        (aggregate({"started": RECEIVED, "exited": 0}), "no bucket of `aggregates` counts a session"),
    ],
)
def test_a_malformed_aggregate_is_refused_naming_the_field(payload: dict[str, Any], words: str) -> None:
    with pytest.raises(BadSession, match=words):
        session_rows("sessions", payload, origin())
