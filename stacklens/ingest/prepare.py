"""Log lines → rows ready to insert: parse, attribute, scrub, normalise and encode each line in turn.

Framework-free and free of the warehouse, so the same code runs in the request's thread or in an ingest
worker process (:mod:`stacklens.ingest.workers`); a :class:`Prepared` is plain data that pickles cheaply.
Per-line problems go to ``rejected`` and never fail the batch (DESIGN §4.2).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from stacklens.ingest.clock import TIME_FIELD, note_replaced_time, time_window
from stacklens.ingest.fields import Origin, assigned_event_id, given_event_id
from stacklens.ingest.grouping import DEFAULT_VERSION, SOURCEMAPPED_VERSION
from stacklens.ingest.grouping.v3 import GROUPING_FRAMES
from stacklens.ingest.in_app import NO_RULES, InAppRules
from stacklens.ingest.inp import holds_inp, inp_rows
from stacklens.ingest.logs import COLUMNS as LOG_COLUMNS
from stacklens.ingest.logs import LOG_TYPE, BadLog, LogWindow, log_row, log_window
from stacklens.ingest.normalise import event_row, spans_rows, transaction_row
from stacklens.ingest.scrub import scrub_payload
from stacklens.ingest.sessions import COLUMNS as SESSION_COLUMNS
from stacklens.ingest.sessions import SESSION_TYPES, BadSession, session_rows
from stacklens.ingest.validate import REPLAY_TYPES, STORED_TYPES, Line, LineError, LineTooLarge, parse_line
from stacklens.outcomes import counting
from stacklens.outcomes.counting import Outcomes
from stacklens.replay.recording import BadRecording
from stacklens.replay.rows import replay_event_row, replay_key, segment_row
from stacklens.sourcemaps.index import MapIndex
from stacklens_contract.words import APPLICATION_NOT_FOUND

# Tables with one row per stored line (spans are their children), and `sessions`: one row per session update,
# or per bucket and status of a session aggregate (its `dedup_key` names the line, see :func:`line_of`);
# `logs`: one row per log record (keyed by its `dedup_key`).
TABLES = ("events", "transactions", "replays", "replay_segments", "sessions", "logs")


@dataclass(frozen=True)
class Attribution:
    project_id: int
    service: str | None
    app_key_id: int
    replay_enabled: bool = (
        True  # the project's setting: replay lines of a project that turned it off are skipped
    )
    # The project's in-app module prefixes: which frames give an event's culprit (never its grouping).
    in_app: InAppRules = NO_RULES
    # The project's merged fingerprints → the issue that holds them (stacklens.issues.merges): grouping stays
    # as its version made it, only the issue id follows the recorded merge.
    issue_overrides: Mapping[str, int] = field(default_factory=dict, hash=False, compare=False)


# One row ready for the warehouse: (app_key_id, project_id, event_id, JSONEachRow text of the row, the
# JSONEachRow texts of its child span rows, the row's partition (month of its time, "YYYY-MM"), its
# children's partitions). Plain tuples: a worker hands ~1,000 of them back per batch.
ReadyRow = tuple[int, int, str, bytes, list[bytes], str, list[str]]
# What gives an event's original frames for grouping (stacklens.sourcemaps.grouping.SourceMapGrouping):
# (project id, scrubbed payload) → the payload's `grouping_frames` entries, or None to group it as sent.
OriginalFrames = Callable[[int, dict[str, Any]], list[Any] | None]


@dataclass
class Prepared:
    """A batch (or one part of it) read line by line."""

    tables: dict[str, list[ReadyRow]] = field(default_factory=lambda: {t: [] for t in TABLES})
    columns: dict[str, list[str]] = field(default_factory=dict)  # table → column names of its rows
    lines: int = 0  # every line of the body, blank ones aside: stored, skipped and rejected alike
    stored: int = 0  # lines of a stored type (event, transaction, session, span with INP) that parsed
    attributed: int = 0  # of those, lines whose app key belongs to the organization
    skipped: int = 0  # lines of item types the service does not store
    rejected: list[dict[str, Any]] = field(default_factory=list)
    body_hash: str = ""  # digest of the whole decoded body (set by whoever decoded it)
    # (line number, raw line) of events a worker left to the server process: their source maps may give
    # original frames for grouping, and only the server process reads the maps.
    deferred: list[tuple[int, bytes]] = field(default_factory=list)
    # What became of each line's item, by (project, category, outcome, reason) (stacklens.outcomes): the
    # quotas spend the accepted ones, the tally counts them all.
    outcomes: Outcomes = field(default_factory=Counter)

    def merge(self, other: Prepared) -> None:
        """Append a later part of the same batch (parts keep their lines' numbers)."""
        for table, rows in other.tables.items():
            self.tables.setdefault(table, []).extend(rows)
        for table, names in other.columns.items():
            self.columns.setdefault(table, names)
        self.lines += other.lines
        self.stored += other.stored
        self.attributed += other.attributed
        self.skipped += other.skipped
        self.rejected.extend(other.rejected)
        self.deferred.extend(other.deferred)
        self.outcomes.update(other.outcomes)
        self.body_hash = self.body_hash or other.body_hash


@dataclass(frozen=True)
class BatchContext:
    """What every line of one batch shares."""

    org_id: int
    batch_id: str
    received: float  # epoch seconds
    header_app_key: str | None
    # The warehouse's retention: times it would expire at once are replaced (:mod:`stacklens.ingest.clock`).
    retention_days: int = 90
    # The organization's source-map uploads (None when it has none): which events to group by original frames.
    maps: MapIndex | None = None
    # The `logs` table's own retention (STACKLENS_LOG_RETENTION_DAYS): which log times it keeps.
    log_retention_days: int = 30


def prepare_lines(
    lines: Sequence[bytes],
    first_number: int,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    originals: OriginalFrames | None = None,
) -> Prepared:
    """Parse, attribute, scrub, normalise and encode each line; ``first_number`` is the first line's number.

    One line at a time, so only one parsed payload is alive at once: 1,000 payloads held together are
    ~500,000 Python objects, and the cyclic garbage collector's passes over them added about half again
    to the time spent parsing them (measured on the benchmark corpus).

    An event that ``context.maps`` says may have a source map is grouped by ``originals`` (the server
    process); without ``originals`` (a worker process) it is left in ``deferred`` for the server process.
    """
    return prepare_numbered(enumerate(lines, start=first_number), context, resolve, originals)


def prepare_numbered(
    lines: Iterable[tuple[int, bytes]],
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    originals: OriginalFrames | None = None,
) -> Prepared:
    """:func:`prepare_lines` for ``(line number, raw line)`` pairs (the lines a worker deferred)."""
    prepared = Prepared()
    cache: dict[str, Attribution | None] = {}
    window = time_window(context.received, context.retention_days)
    logs_window = log_window(context.received, context.log_retention_days)
    for number, raw in lines:
        try:
            line = parse_line(raw.rstrip(b"\r"), number)
        except LineError as exc:
            prepared.lines += 1
            prepared.rejected.append({"line": number, "error": str(exc)})
            _count_unread(raw, exc, context, resolve, cache, prepared)
            continue
        if line is None:
            continue
        prepared.lines += 1
        category = counting.category_of(line.item_type)
        # A `span` line is stored only when it carries a standalone INP span; other spans are skipped.
        if line.item_type not in STORED_TYPES and not (line.item_type == "span" and holds_inp(line.payload)):
            prepared.skipped += 1
            _count_skipped(line, category, context, resolve, cache, prepared)
            continue
        prepared.stored += 1
        who = _attribute(line, context.header_app_key, resolve, cache, prepared)
        if who is None:
            if category is not None:
                prepared.outcomes[(0, category, "invalid", counting.UNKNOWN_APP_KEY)] += 1
            continue
        if line.item_type in REPLAY_TYPES and not who.replay_enabled:
            # Counted as skipped, as item types the service does not keep (not "stored": a batch of only
            # such lines is not an unknown application).
            prepared.stored -= 1
            prepared.skipped += 1
            if category is not None:
                prepared.outcomes[(who.project_id, category, "filtered", counting.REPLAY_DISABLED)] += 1
            continue
        mapped = (
            context.maps is not None
            and line.item_type == "event"
            and context.maps.matches(who.project_id, line.payload)
        )
        if mapped and originals is None:
            prepared.lines -= 1
            prepared.stored -= 1
            prepared.deferred.append((number, raw))
            continue
        prepared.attributed += 1
        refused, rows = len(prepared.rejected), _row_count(prepared)
        if line.item_type == LOG_TYPE:
            _normalise_log(line, who, context, logs_window, prepared)
        else:
            _normalise(line, who, context, window, prepared, originals if mapped else None)
        if category is not None:
            # A line that made rows is accepted, even when part of it was dropped (an aggregate's old buckets).
            kept = _row_count(prepared) > rows or len(prepared.rejected) == refused
            outcome, reason = ("accepted", "") if kept else ("invalid", counting.UNREADABLE)
            prepared.outcomes[(who.project_id, category, outcome, reason)] += 1
    return prepared


def _row_count(prepared: Prepared) -> int:
    return sum(len(rows) for rows in prepared.tables.values())


# The head of a line as the SDKs and the envelope endpoint write it (`{"v":1,"type":…,"app_key":…`): where a
# line that cannot be read still says what it was and whose it is.
_HEAD_TYPE = re.compile(rb'"type"\s*:\s*"([a-z_]{1,32})"')
_HEAD_KEY = re.compile(rb'"app_key"\s*:\s*"([^"\\]{1,200})"')
HEAD_BYTES = 512


def _count_unread(
    raw: bytes,
    exc: LineError,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    cache: dict[str, Attribution | None],
    prepared: Prepared,
) -> None:
    """Count a line that could not be read, under what its head says it was (an error, when it says nothing:
    Relay's `default` category) and the project of its app key, if the head names one."""
    head = raw[:HEAD_BYTES]
    kind = _HEAD_TYPE.search(head)
    category = counting.category_of(kind.group(1).decode()) if kind else "error"
    if category is None:
        return
    key = _HEAD_KEY.search(head)
    project_id = _project_of(key.group(1).decode() if key else None, context, resolve, cache)
    if isinstance(exc, LineTooLarge):
        prepared.outcomes[(project_id, category, "too_large", counting.LINE_TOO_LARGE)] += 1
    else:
        prepared.outcomes[(project_id, category, "invalid", counting.UNREADABLE)] += 1


def _count_skipped(
    line: Line,
    category: str | None,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    cache: dict[str, Attribution | None],
    prepared: Prepared,
) -> None:
    """Count a line of a type the service does not store: a client report (and what the SDK says it dropped
    itself), or a span without INP (counted, not kept)."""
    if category is None:
        return
    project_id = _project_of(line.app_key, context, resolve, cache)
    if category == "client_report":
        prepared.outcomes[(project_id, category, "accepted", "")] += 1
        prepared.outcomes.update(counting.client_discards(project_id, line.payload))
        return
    prepared.outcomes[(project_id, category, "filtered", counting.NOT_STORED)] += 1


def _project_of(
    app_key: str | None,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    cache: dict[str, Attribution | None],
) -> int:
    """The project of a line's app key (or the request's), 0 when it names none of the organization."""
    raw = app_key or context.header_app_key
    if not raw:
        return 0
    if raw not in cache:
        cache[raw] = resolve(raw)
    found = cache[raw]
    return found.project_id if found is not None else 0


def _attribute(
    line: Line,
    header_app_key: str | None,
    resolve: Callable[[str], Attribution | None],
    cache: dict[str, Attribution | None],
    prepared: Prepared,
) -> Attribution | None:
    raw = line.app_key or header_app_key
    if not raw:
        prepared.rejected.append(
            {
                "line": line.number,
                "error": f"{APPLICATION_NOT_FOUND}: the line has no app_key "
                "and the request has no X-Stacklens-App-Key header",
            }
        )
        return None
    if raw not in cache:
        cache[raw] = resolve(raw)
    found = cache[raw]
    if found is None:
        prepared.rejected.append(
            {
                "line": line.number,
                "error": f"{APPLICATION_NOT_FOUND}: the app key is not a current app key of this organization",
            }
        )
    return found


def _normalise(
    line: Line,
    who: Attribution,
    context: BatchContext,
    window: tuple[float, float],
    prepared: Prepared,
    originals: OriginalFrames | None = None,
) -> None:
    origin = Origin(
        context.org_id, who.project_id, who.service, context.batch_id, context.received, line.ts, *window
    )
    if line.item_type in REPLAY_TYPES:
        _normalise_replay(line, who, origin, prepared)
        return
    if line.item_type in SESSION_TYPES:
        _normalise_sessions(line, who, origin, prepared)
        return
    try:
        payload = scrub_payload(line.payload, line.raw, line.shape, line.app_key)
        if line.item_type in TIME_FIELD:
            _settle_identity(payload, line.item_type, line.raw, origin)
        version = DEFAULT_VERSION
        if originals is not None:
            # Recorded in the stored payload, so grouping v3 gives the same fingerprint from it again.
            frames = originals(who.project_id, payload)
            if frames is not None:
                payload[GROUPING_FRAMES] = frames
                version = SOURCEMAPPED_VERSION
        # Serialised once; the row embeds these bytes as they are (no second escaping pass at insert).
        payload_json = orjson.Fragment(orjson.dumps(payload))
        rows: list[tuple[dict[str, Any], list[dict[str, Any]]]]
        if line.item_type == "event":
            rows = [
                (
                    event_row(
                        payload, origin, line.raw, payload_json, version, who.in_app, who.issue_overrides
                    ),
                    [],
                )
            ]
            table = "events"
        elif line.item_type == "span":
            rows = [(row, []) for row in inp_rows(payload, origin)]
            table = "transactions"
        else:
            row = transaction_row(payload, origin, line.raw, payload_json)
            rows = [(row, spans_rows(payload, row, origin))]
            table = "transactions"
        ready = [_encode(who, table, row, children, prepared) for row, children in rows]
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
        # A payload shaped unlike any Sentry payload (or not serialisable): reject the line, keep the batch.
        # The exception's own words are Python's ("'int' object has no attribute …"), not the sender's.
        prepared.rejected.append(
            {
                "line": line.number,
                "error": "the payload could not be read: a field does not have the type a Sentry payload "
                "gives it (an object, list, text or number where another is expected)",
            }
        )
        return
    prepared.tables[table].extend(ready)


def _normalise_replay(line: Line, who: Attribution, origin: Origin, prepared: Prepared) -> None:
    """A replay line's row, keyed ``replay:segment``; a bad segment is rejected alone, naming why."""
    try:
        if line.item_type == "replay_recording":
            row, table = segment_row(line.payload, origin), "replay_segments"
        else:
            payload = scrub_payload(line.payload, line.raw, line.shape, line.app_key)
            row = replay_event_row(payload, origin, orjson.Fragment(orjson.dumps(payload)))
            table = "replays"
        ready = _encode(who, table, row, [], prepared, replay_key(row["replay_id"], row["segment_id"]))
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


def _normalise_sessions(line: Line, who: Attribution, origin: Origin, prepared: Prepared) -> None:
    """A ``session`` / ``sessions`` line's rows (:mod:`stacklens.ingest.sessions`); a bad one is rejected alone,
    naming the field. Aggregate buckets dropped for their age are named in ``rejected``, the rest lands."""
    try:
        made = session_rows(line.item_type, line.payload, origin)
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


def _normalise_log(
    line: Line, who: Attribution, context: BatchContext, window: LogWindow, prepared: Prepared
) -> None:
    """A ``log`` line's row (:mod:`stacklens.ingest.logs`); a bad record is rejected alone, naming the field."""
    origin = Origin(context.org_id, who.project_id, who.service, context.batch_id, context.received, line.ts)
    try:
        row = log_row(line.payload, line.raw, line.shape, origin, window, line.app_key)
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


def line_of(dedup_key: str) -> str:
    """The line a ``sessions`` row came from: its key up to the bucket and status of an aggregate row."""
    return dedup_key.split(":", 1)[0]


def _settle_identity(payload: dict[str, Any], item_type: str, raw: bytes, origin: Origin) -> None:
    """What the stored payload must say about itself: the id the row is stored under (a missing, nil or
    malformed ``event_id`` is replaced by the assigned one, as Relay does) and, when the line's time is
    replaced, the note saying so (:mod:`stacklens.ingest.clock`)."""
    given = payload.get("event_id")
    if given is None or given_event_id(given) is None:
        if given is not None:
            payload["sent_event_id"] = given  # kept as sent, beside the id it is stored under
        payload["event_id"] = assigned_event_id(raw)
    note_replaced_time(payload, item_type, origin)


def _encode(
    who: Attribution,
    table: str,
    row: dict[str, Any],
    children: list[dict[str, Any]],
    prepared: Prepared,
    key: str | None = None,
) -> ReadyRow:
    if table not in prepared.columns:
        prepared.columns[table] = list(row)
    if children and "spans" not in prepared.columns:
        prepared.columns["spans"] = list(children[0])
    return (
        who.app_key_id,
        row["project_id"],
        row["event_id"] if key is None else key,
        orjson.dumps(row),
        [orjson.dumps(child) for child in children],
        row["timestamp"][:7],
        [child["timestamp"][:7] for child in children],
    )
