"""The lines that are not events (stacklens/ingest/prepare_items.py): a session update, a log record and a
replay segment, each read from a real line into its table's row, or refused alone with the item type and
why; the project's scrubbing rules reach log records and replay recordings."""

from __future__ import annotations

import base64
import time
import zlib
from typing import Any

import orjson

from stacklens.ingest.clock import time_window
from stacklens.ingest.fields import Origin
from stacklens.ingest.logs import COLUMNS as LOG_COLUMNS
from stacklens.ingest.logs import log_window
from stacklens.ingest.prepare_items import normalise_log, normalise_replay, normalise_sessions
from stacklens.ingest.prepared_rows import Attribution, BatchContext, Prepared
from stacklens.ingest.sessions import COLUMNS as SESSION_COLUMNS
from stacklens.ingest.timeparse import format_ms
from stacklens.ingest.validate import Line, parse_line
from stacklens.scrubbing.apply import ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules

NOW = time.time()
WHO = Attribution(project_id=7, service=None, app_key_id=3)
ORIGIN = Origin(1, 7, None, "batch-1", NOW, None, *time_window(NOW, 90))
SID = "8333339f-5675-4f89-a9a0-1c935255ab58"


def _line(kind: str, payload: dict[str, Any], number: int = 1) -> Line:
    line = parse_line(orjson.dumps({"v": 1, "type": kind, "payload": payload}), number)
    assert line is not None
    return line


def _session(**fields: Any) -> dict[str, Any]:
    return {
        "sid": SID,
        "init": True,
        "started": format_ms(NOW - 120).replace(" ", "T") + "Z",
        "timestamp": NOW - 60,
        "status": "exited",
        "attrs": {"release": "shop@1.3.0", "environment": "production"},
        **fields,
    }


def test_a_session_update_is_a_sessions_row_and_a_bad_one_is_refused_alone() -> None:
    prepared = Prepared()
    normalise_sessions(_line("session", _session(), 1), WHO, ORIGIN, prepared)
    normalise_sessions(_line("session", _session(status="finished"), 2), WHO, ORIGIN, prepared)
    [row] = prepared.tables["sessions"]
    app_key_id, project_id, key, body, children, partition, _ = row
    stored = orjson.loads(body)
    assert (app_key_id, project_id, children) == (3, 7, [])
    assert key == stored["dedup_key"] and partition == stored["started"][:7]
    assert (stored["session_id"], stored["status"], stored["release"]) == (SID, "exited", "shop@1.3.0")
    assert prepared.columns["sessions"] == list(SESSION_COLUMNS)
    [refused] = prepared.rejected
    assert refused["line"] == 2 and refused["error"].startswith("session: `status` must be one of ok, exited")


def test_a_log_record_is_a_logs_row_and_a_bad_one_is_refused_alone() -> None:
    prepared = Prepared()
    context = BatchContext(org_id=1, batch_id="batch-1", received=NOW, header_app_key=None)
    window = log_window(NOW, 30)
    good = {
        "message": "card declined",
        "level": "warning",
        "timestamp": NOW - 5,
        "trace_id": "5b8efff798038103d269b633813fc60c",
    }
    normalise_log(_line("log", good, 1), WHO, context, window, prepared)
    normalise_log(_line("log", {"message": "x", "trace_id": "abc"}, 2), WHO, context, window, prepared)
    [row] = prepared.tables["logs"]
    stored = orjson.loads(row[3])
    assert (row[0], row[1], row[2]) == (3, 7, stored["dedup_key"])
    assert (stored["severity"], stored["trace_id"], stored["org_id"]) == ("warn", good["trace_id"], 1)
    assert prepared.columns["logs"] == list(LOG_COLUMNS)
    [refused] = prepared.rejected
    assert refused["line"] == 2 and refused["error"].startswith("log: ") and "trace_id" in refused["error"]


def test_a_replay_segment_that_is_not_one_is_refused_naming_the_item_type() -> None:
    prepared = Prepared()
    normalise_replay(_line("replay_recording", {"replay_id": 12}, 4), WHO, ORIGIN, prepared)
    assert not prepared.tables.get("replay_segments")
    [refused] = prepared.rejected
    assert refused["line"] == 4 and refused["error"].startswith("replay_recording: ")


def test_the_project_rules_scrub_log_records_and_replay_recordings() -> None:
    rules = ScrubRules(tuple(check_rules([RuleSpec("mask", "email", None, "$string")])), b"salt")
    who = Attribution(project_id=7, service=None, app_key_id=3, scrubbing=rules)
    prepared = Prepared()
    context = BatchContext(org_id=1, batch_id="batch-1", received=NOW, header_app_key=None)
    record = {"body": "refund for ann@example.com", "attributes": {"user.email": "ann@example.com"}}
    normalise_log(_line("log", {**record, "timestamp": NOW - 5}), who, context, log_window(NOW, 30), prepared)
    stored = orjson.loads(prepared.tables["logs"][0][3])
    assert stored["body"] == "refund for " + "*" * 15 and stored["attributes"]["user.email"] == "*" * 15
    text = {
        "type": 3,
        "timestamp": NOW * 1000,
        "data": {"source": 0, "texts": [{"value": "ann@example.com"}]},
    }
    segment = {"replay_id": "a" * 32, "segment_id": 0, "recording": [text]}
    normalise_replay(_line("replay_recording", segment), who, ORIGIN, prepared)
    row = orjson.loads(prepared.tables["replay_segments"][0][3])
    kept = zlib.decompress(base64.b64decode(row["payload"]))
    assert b"ann@example.com" not in kept and b"*" * 15 in kept
