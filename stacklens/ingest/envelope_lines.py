"""The log lines an envelope (or a legacy ``/store/`` body) becomes (docs/sdk.md).

Each item the service keeps becomes the line the SDK's file transport writes, so an envelope lands through
the ingest service's one code path; the other item types are counted, and ``check_in`` payloads are handed
back for the control store. The envelope was read and bounded before (:mod:`stacklens.ingest.envelope`);
what is bounded only once an item is read (an attachment's size, a log container's records) is refused here.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from sentry_sdk.envelope import Envelope, Item, PayloadRef

from stacklens.feedback.attachment_files import AttachmentIn
from stacklens.feedback.items import FeedbackIn, FeedbackRefused, feedback_item, user_report
from stacklens.ingest import timeparse
from stacklens.ingest.decode import MAX_LINE_BYTES, BodyTooLarge, DecodeError, decode_error
from stacklens.ingest.envelope import MAX_ATTACHMENT_BYTES, MAX_LOG_RECORDS
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, JsonTooDeep, loads
from stacklens_sdk.items import WRITTEN_TYPES, UnreadableItem, item_payload


@dataclass
class EnvelopeLines:
    """What one envelope becomes: NDJSON log lines to land, and what was only counted."""

    lines: bytes
    event_id: str
    written: Counter[str] = field(default_factory=Counter)
    counted: Counter[str] = field(default_factory=Counter)  # item types kept out of the warehouse
    # The payloads of ``check_in`` items: recorded in the control store by the caller (stacklens.monitors),
    # not landed as lines.
    check_ins: list[Any] = field(default_factory=list)
    # Feedback (``feedback`` and ``user_report`` items, read and checked) and attachments: kept by the caller
    # in the control store and the data directory (stacklens.feedback), not landed as lines.
    feedback: list[FeedbackIn] = field(default_factory=list)
    attachments: list[AttachmentIn] = field(default_factory=list)
    # The envelope header's ``sent_at`` (epoch seconds): the attachments are kept under it, as their event.
    sent_at: float | None = None

    @property
    def idempotency_key(self) -> str:
        """The same envelope sent again lands nothing again (the shipper's Idempotency-Key rule)."""
        return "env-" + hashlib.sha256(self.lines).hexdigest()[:40]


class ItemRefused(DecodeError):
    """An item the service will not keep (400): ``reason`` is its outcome's reason code."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ItemTooLarge(BodyTooLarge):
    """An item over its limit (413): ``reason`` is its outcome's reason code."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


ATTACHMENT_TOO_LARGE = "attachment_too_large"


def envelope_lines(
    envelope: Envelope, app_key: str, received: datetime, max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
) -> EnvelopeLines:
    """The log lines of every item the service keeps; other item types are counted.

    Every item is read before any line is made, so a malformed item refuses the envelope whole (400) and
    nothing of it lands half.
    """
    ts = _iso(received)
    # Session lines carry the SDK's send time when the envelope names it: an aggregate is told apart from
    # another flush with the same counts by its line's time (stacklens.ingest.sessions), and the same
    # envelope sent again then makes the same lines, which land once.
    sent_at = envelope.headers.get("sent_at")
    session_ts = sent_at[:64] if isinstance(sent_at, str) and sent_at else ts
    lines: list[bytes] = []
    written: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    check_ins: list[Any] = []
    feedback: list[FeedbackIn] = []
    attachments: list[AttachmentIn] = []
    event_id = envelope.headers.get("event_id")
    for item in envelope.items:
        kind = item.type or "unknown"
        if kind == "check_in":
            check_ins.append(_check_in_payload(item))
            counted[kind] += 1
            continue
        if kind == "attachment":
            attachments.append(_attachment(item, max_attachment_bytes))
            counted[kind] += 1
            continue
        if kind in ("feedback", "user_report"):
            feedback.append(_feedback(item, envelope.headers.get("event_id")))
            counted[kind] += 1
            continue
        if kind == "log":
            for record in _log_records(item):
                lines.append(_line("log", app_key, ts, record))
                written[kind] += 1
            continue
        if kind not in WRITTEN_TYPES:
            counted[kind if kind in ("check_in", "profile", "statsd") else "unknown"] += 1
            continue
        if kind in _SPLICED and isinstance(event_id, str) and (raw := _spliceable(item)) is not None:
            lines.append(_spliced_line(kind, app_key, ts, raw))
            written[kind] += 1
            continue
        try:
            payload = _json_payload(item) if kind != "replay_recording" else None
            if payload is None:
                payload = item_payload(item, envelope.headers)
        except UnreadableItem as exc:
            raise decode_error(400, f"malformed envelope item: {exc}") from None
        if kind in ("event", "transaction") and not isinstance(event_id, str):
            event_id = payload.get("event_id")
        lines.append(_line(kind, app_key, session_ts if kind in ("session", "sessions") else ts, payload))
        written[kind] += 1
    if not isinstance(event_id, str) or not event_id:
        event_id = uuid.uuid4().hex  # an empty answer breaks some SDKs: always name an id
    sent = timeparse.to_epoch(sent_at) if isinstance(sent_at, str) else None
    return EnvelopeLines(
        b"\n".join(lines), event_id, written, counted, check_ins, feedback, attachments, sent
    )


def _attachment(item: Item, limit: int) -> AttachmentIn:
    """An attachment within the per-item limit (as Relay, one over it refuses the envelope: 413)."""
    data = item.get_bytes()
    if len(data) > limit:
        raise ItemTooLarge(
            f"an attachment of {len(data):,} bytes exceeds the per-attachment limit of {limit:,} bytes",
            ATTACHMENT_TOO_LARGE,
        )
    headers = item.headers
    return AttachmentIn(
        filename=str(headers.get("filename") or "attachment"),
        content_type=str(headers.get("content_type") or "application/octet-stream"),
        attachment_type=str(headers.get("attachment_type") or "event.attachment"),
        data=data,
    )


def _feedback(item: Item, envelope_event_id: Any) -> FeedbackIn:
    """A feedback item read and checked: one without a message, or too long, refuses the envelope with the
    reason (400 / 413), as Relay refuses it."""
    try:
        payload = loads(item.get_bytes(), MAX_JSON_DEPTH, where="the feedback")
    except JsonTooDeep as exc:
        raise decode_error(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise decode_error(400, f"malformed envelope item: the feedback is not JSON: {exc}") from None
    try:
        if item.type == "user_report":
            return user_report(payload)
        return feedback_item(payload, envelope_event_id)
    except FeedbackRefused as refused:
        kind = ItemTooLarge if refused.status == 413 else ItemRefused
        raise kind(str(refused), refused.reason) from None


def _check_in_payload(item: Item) -> Any:
    """A check-in item's JSON (at most 64 levels deep, as every JSON part); what it says is read by
    stacklens.monitors.checkins, which names a bad field."""
    raw = item.get_bytes()
    try:
        return loads(raw, MAX_JSON_DEPTH, where="the check-in")
    except JsonTooDeep as exc:
        raise decode_error(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise decode_error(400, f"malformed envelope item: the check-in is not JSON: {exc}") from None


def _log_records(item: Item) -> list[dict[str, Any]]:
    """The records of a ``log`` container item (``{"items": [record, …]}``), each becoming a ``log`` line.

    A record that is not an object is still passed on, so the ingest service rejects it alone, naming it.
    """
    try:
        payload = json.loads(item.get_bytes())
    except ValueError as exc:
        raise decode_error(400, f"malformed envelope item: log item is not JSON: {exc}") from None
    records = payload.get("items") if isinstance(payload, dict) else None
    if not isinstance(records, list):
        raise decode_error(400, 'malformed envelope item: a log item is {"items": [log records]}')
    if len(records) > MAX_LOG_RECORDS:
        raise decode_error(
            413, f"the log item carries {len(records)} records; at most {MAX_LOG_RECORDS} are accepted"
        )
    return records


def store_lines(raw: bytes, app_key: str, received: datetime) -> EnvelopeLines:
    """The legacy ``/store/`` body: one event as JSON (a transaction when its ``type`` says so)."""
    try:
        payload = loads(raw, MAX_JSON_DEPTH, where="the event")
    except JsonTooDeep as exc:
        raise decode_error(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise decode_error(400, f"the body is not a JSON event: {exc}") from None
    if not isinstance(payload, dict):
        raise decode_error(400, "the body is not a JSON object")
    kind = "transaction" if payload.get("type") == "transaction" else "event"
    envelope = Envelope(headers={"event_id": payload.get("event_id")})
    envelope.add_item(Item(payload=PayloadRef(json=payload), type=kind))
    return envelope_lines(envelope, app_key, received)


def _json_payload(item: Item) -> dict[str, Any] | None:
    """An event-like item's JSON object read by orjson (several times faster than ``json``, and what the
    line is parsed with next); ``None`` when orjson cannot read it as an object, so the SDK's item rules read
    it and name what is wrong (or keep what only ``json`` reads: NaN, integers beyond 64 bits)."""
    if item.payload.json is not None:
        return None
    try:
        payload = orjson.loads(item.get_bytes())
    except orjson.JSONDecodeError:
        return None
    return payload if isinstance(payload, dict) else None


# Event-like items whose line is made of the item's own bytes (see _spliceable).
_SPLICED = frozenset({"event", "transaction"})
# Room a line's own fields take beside its payload (a key, a time, the field names).
_LINE_FIELDS_BYTES = 512


def _spliceable(item: Item) -> bytes | None:
    """The item's bytes when they can be the line's ``payload`` as they are: a JSON object on one line.

    The line is parsed next anyway (the ingest service reads every line); parsing the item here only to write
    it out again cost about a tenth of an envelope's admission. What is not an object on one line, or too
    long to fit a line, goes the long way (:func:`_json_payload`), which names what is wrong with it. An
    object that is not valid JSON inside is refused by the line's parser, which says where it breaks."""
    if item.payload.json is not None:
        return None
    raw = item.get_bytes()
    if raw[:1] != b"{" or raw[-1:] != b"}" or len(raw) > MAX_LINE_BYTES - _LINE_FIELDS_BYTES:
        return None
    if b"\n" in raw or b"\r" in raw:  # a line holds no line break (JSON allows them between tokens)
        return None
    return raw


def _spliced_line(kind: str, app_key: str, ts: str, payload: bytes) -> bytes:
    """The line :func:`_line` writes, with the payload's bytes as sent (the same fields in the same order)."""
    return b"".join(
        (
            b'{"v":1,"type":',
            orjson.dumps(kind),
            b',"app_key":',
            orjson.dumps(app_key),
            b',"ts":',
            orjson.dumps(ts),
            b',"payload":',
            payload,
            b"}",
        )
    )


def _line(kind: str, app_key: str, ts: str, payload: Any) -> bytes:
    line = {"v": 1, "type": kind, "app_key": app_key, "ts": ts, "payload": payload}
    try:
        return orjson.dumps(line)
    except TypeError:  # what only json writes (an integer beyond 64 bits): the line parser refuses it alone
        return json.dumps(line, separators=(",", ":")).encode("utf-8")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
