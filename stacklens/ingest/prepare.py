"""Log lines → rows ready to insert: parse, attribute, scrub, normalise and encode each line in turn.

Framework-free and free of the warehouse, so the same code runs in the request's thread or in an ingest
worker process (:mod:`stacklens.ingest.workers`); a :class:`Prepared` is plain data that pickles cheaply.
Per-line problems go to ``rejected`` and never fail the batch (docs/architecture.md §11.2).

What preparing yields (:class:`Prepared` and its rows) is in :mod:`stacklens.ingest.prepared_rows`; the lines
that are not events (replays, sessions, logs) are normalised in :mod:`stacklens.ingest.prepare_items`. All
three are compiled (:mod:`stacklens.ingest.compiled`): they are the per-line path."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from stacklens.ingest.clock import TIME_FIELD, note_replaced_time, time_window
from stacklens.ingest.fields import Origin, assigned_event_id, given_event_id
from stacklens.ingest.grouping import DEFAULT_VERSION, SOURCEMAPPED_VERSION
from stacklens.ingest.grouping.v3 import GROUPING_FRAMES
from stacklens.ingest.inp import holds_inp, inp_rows
from stacklens.ingest.logs import LOG_TYPE, log_window
from stacklens.ingest.normalise import event_row, spans_rows, transaction_row
from stacklens.ingest.prepare_items import normalise_log, normalise_replay, normalise_sessions
from stacklens.ingest.prepared_rows import (
    Attribution,
    BatchContext,
    OriginalFrames,
    Prepared,
    encode_row,
)
from stacklens.ingest.scrub import scrub_payload
from stacklens.ingest.sessions import SESSION_TYPES
from stacklens.ingest.validate import REPLAY_TYPES, STORED_TYPES, Line, LineError, LineTooLarge, parse_line
from stacklens.outcomes import counting
from stacklens_contract.words import APPLICATION_NOT_FOUND


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
            normalise_log(line, who, context, logs_window, prepared)
        else:
            _normalise(line, who, context, window, prepared, originals if mapped else None)
        if category is not None:
            # A line that made rows is accepted, even when part of it was dropped (an aggregate's old
            # buckets).
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
        normalise_replay(line, who, origin, prepared)
        return
    if line.item_type in SESSION_TYPES:
        normalise_sessions(line, who, origin, prepared)
        return
    try:
        payload = who.scrubbing.apply(
            scrub_payload(line.payload, line.raw, line.shape, line.app_key), line.raw
        )
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
        ready = [encode_row(who, table, row, children, prepared) for row, children in rows]
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
