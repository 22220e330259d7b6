"""Preparing the lines that are not events (:mod:`stacklens.ingest.prepare`): replay recordings and their
segments, session updates and aggregates, log records, each scrubbed and normalised into its table's rows."""

from __future__ import annotations

import orjson

from stacklens.ingest.fields import Origin
from stacklens.ingest.log_scrub import scrub_log
from stacklens.ingest.logs import COLUMNS as LOG_COLUMNS
from stacklens.ingest.logs import BadLog, LogWindow, log_row
from stacklens.ingest.prepared_rows import Attribution, BatchContext, Prepared, encode_row
from stacklens.ingest.scrub import scrub_payload
from stacklens.ingest.session_scrub import scrub_session
from stacklens.ingest.sessions import COLUMNS as SESSION_COLUMNS
from stacklens.ingest.sessions import BadSession, session_rows
from stacklens.ingest.validate import Line
from stacklens.replay.recording import BadRecording
from stacklens.replay.rows import replay_event_row, replay_key, segment_row


def normalise_replay(line: Line, who: Attribution, origin: Origin, prepared: Prepared) -> None:
    """A replay line's row, keyed ``replay:segment``; a bad segment is rejected alone, naming why."""
    try:
        if line.item_type == "replay_recording":
            row, table = segment_row(line.payload, origin, who.scrubbing), "replay_segments"
        else:
            payload = who.scrubbing.apply(
                scrub_payload(line.payload, line.raw, line.shape, line.app_key), line.raw
            )
            row = replay_event_row(payload, origin, orjson.Fragment(orjson.dumps(payload)))
            table = "replays"
        ready = encode_row(who, table, row, [], prepared, replay_key(row["replay_id"], row["segment_id"]))
    except BadRecording as exc:
        prepared.rejected.append({"line": line.number, "error": f"{line.item_type}: {exc}"})
        return
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
        prepared.rejected.append(
            {
                "line": line.number,
                "error": f"{line.item_type}: a field does not have the type the SDK gives it",
            }
        )
        return
    prepared.tables[table].append(ready)


def normalise_sessions(line: Line, who: Attribution, origin: Origin, prepared: Prepared) -> None:
    """A ``session`` / ``sessions`` line's rows (:mod:`stacklens.ingest.sessions`); a bad one is rejected
    alone, naming the field. Aggregate buckets dropped for their age are named in ``rejected``, the rest
    lands."""
    try:
        # The user a session names is scrubbed as an event's user is, before its rows are made.
        payload = scrub_session(line.item_type, line.payload, who.scrubbing, line.raw, line.app_key)
        made = session_rows(line.item_type, payload, origin)
    except BadSession as exc:
        prepared.rejected.append({"line": line.number, "error": f"{line.item_type}: {exc}"})
        return
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
        prepared.rejected.append(
            {
                "line": line.number,
                "error": f"{line.item_type}: a field does not have the type the SDK gives it",
            }
        )
        return
    if made.dropped:
        prepared.rejected.append({"line": line.number, "error": f"{line.item_type}: {made.dropped}"})
    if "sessions" not in prepared.columns:
        prepared.columns["sessions"] = list(SESSION_COLUMNS)
    prepared.tables["sessions"].extend(
        (who.app_key_id, row["project_id"], row["dedup_key"], orjson.dumps(row), [], row["started"][:7], [])
        for row in made.rows
    )


def normalise_log(
    line: Line, who: Attribution, context: BatchContext, window: LogWindow, prepared: Prepared
) -> None:
    """A ``log`` line's row (:mod:`stacklens.ingest.logs`); a bad record is rejected alone, naming the
    field."""
    origin = Origin(context.org_id, who.project_id, who.service, context.batch_id, context.received, line.ts)
    try:
        # The project's rules see the record as sent (`body`, `attributes.<name>`) and its user attributes
        # as an event's user (`user.email`, …: stacklens.ingest.log_scrub); the built-in scrubbing runs
        # inside log_row.
        row = log_row(
            scrub_log(line.payload, who.scrubbing, line.raw),
            line.raw,
            line.shape,
            origin,
            window,
            line.app_key,
        )
    except BadLog as exc:
        prepared.rejected.append({"line": line.number, "error": f"log: {exc}"})
        return
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
        prepared.rejected.append(
            {"line": line.number, "error": "log: a field does not have the type a log record gives it"}
        )
        return
    if "logs" not in prepared.columns:
        prepared.columns["logs"] = list(LOG_COLUMNS)
    prepared.tables["logs"].append(
        (who.app_key_id, row["project_id"], row["dedup_key"], orjson.dumps(row), [], row["timestamp"][:7], [])
    )
