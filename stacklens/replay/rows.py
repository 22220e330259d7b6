"""Replay log lines → warehouse rows: ``replays`` (the SDK's replay_event) and ``replay_segments``.

Both tables are keyed by (project, replay id, segment id); ingest's duplicate check reads that key as
``"<replay uuid>:<segment>"`` (:data:`stacklens.ingest.writer.STORED_KEYS`), so a segment sent twice,
through two batches or two roads (tunnel and envelope), lands once.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from stacklens.ingest.fields import Origin, client_of, dict_of, given_event_id, text, timestamp_of, user_of
from stacklens.ingest.timeparse import format_ms
from stacklens.replay.recording import FULL_SNAPSHOT, BadRecording, event_ms, read_segment
from stacklens.replay.timeline import segment_marks
from stacklens.scrubbing.apply import NO_RULES, ScrubRules

MAX_SEGMENT_ID = 100_000  # a replay of an hour cuts ~720 segments; anything past this is not a segment id
_MAX_LIST = 200  # urls / error ids / trace ids kept per replay event


def replay_key(replay_id: str, segment_id: int) -> str:
    """The duplicate-check key of a replay row (see the module doc)."""
    return f"{replay_id}:{segment_id}"


def _uuid(raw: str) -> str:
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def _replay_id(payload: dict[str, Any], field: str = "replay_id") -> str:
    raw = given_event_id(payload.get(field)) or given_event_id(payload.get("event_id"))
    if raw is None:
        raise BadRecording(f"the {field} is missing or not a 32-digit hex id")
    return _uuid(raw)


def _segment_id(payload: dict[str, Any]) -> int:
    value = payload.get("segment_id")
    if type(value) is not int or not 0 <= value <= MAX_SEGMENT_ID:
        raise BadRecording(f"segment_id must be an integer from 0 to {MAX_SEGMENT_ID}")
    return value


def _strings(value: Any, limit: int = 2048) -> list[str]:
    if not isinstance(value, list):
        return []
    return [text(v, limit) for v in value[:_MAX_LIST] if isinstance(v, str) and v]


def replay_event_row(payload: dict[str, Any], origin: Origin, payload_json: Any) -> dict[str, Any]:
    """One ``replays`` row from a scrubbed ``replay_event`` payload."""
    replay_id = _replay_id(payload)
    segment_id = _segment_id(payload)
    when = timestamp_of(payload.get("timestamp"), origin)
    started = timestamp_of(payload.get("replay_start_timestamp") or payload.get("timestamp"), origin)
    uid, email, name, ip, _ = user_of(payload)
    browser, browser_version, os_name, _ = client_of(payload)
    sdk = dict_of(payload.get("sdk"))
    device = dict_of(dict_of(payload.get("contexts")).get("device"))
    return {
        "org_id": origin.org_id,
        "project_id": origin.project_id,
        "replay_id": replay_id,
        "segment_id": segment_id,
        "timestamp": format_ms(when),
        "replay_start": format_ms(min(started, when)),
        "received_at": format_ms(origin.received_at),
        "batch_id": origin.batch_id,
        "replay_type": text(payload.get("replay_type"), 32) or "session",
        "environment": text(payload.get("environment"), 64),
        "release": text(payload.get("release"), 200),
        "urls": _strings(payload.get("urls")),
        "error_ids": [_uuid(i) for i in map(given_event_id, payload.get("error_ids") or []) if i][:_MAX_LIST],
        "trace_ids": _strings(payload.get("trace_ids"), 64),
        "user_id": uid,
        "user_email": email,
        "user_name": name,
        "user_ip": ip,
        "browser_name": browser,
        "browser_version": browser_version,
        "os_name": os_name,
        "device_family": text(device.get("family"), 64),
        "sdk_name": text(sdk.get("name"), 64),
        "sdk_version": text(sdk.get("version"), 64),
        "payload": payload_json,
    }


def segment_row(payload: dict[str, Any], origin: Origin, rules: ScrubRules = NO_RULES) -> dict[str, Any]:
    """One ``replay_segments`` row from a ``replay_recording`` line
    (:func:`stacklens_sdk.items.item_payload`).

    :class:`BadRecording` names what is wrong with a truncated or corrupt segment; the caller rejects that
    line alone.
    """
    replay_id = _replay_id(payload)
    segment_id = _segment_id(payload)
    if "recording_base64" in payload:
        encoded = payload["recording_base64"]
        if not isinstance(encoded, str):
            raise BadRecording("recording_base64 must be a base64 string")
        try:
            body = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise BadRecording("recording_base64 is not valid base64") from None
    elif "recording" in payload:  # lines written by SDK versions that parsed plain-JSON recordings
        body = orjson.dumps(payload["recording"])
    else:
        raise BadRecording("the replay_recording line has no recording")
    segment = read_segment(body, rules)
    times = [event_ms(e["timestamp"]) / 1000.0 for e in segment.events]
    first = timestamp_of(min(times), origin)
    last = max(first, timestamp_of(max(times), origin))
    return {
        "org_id": origin.org_id,
        "project_id": origin.project_id,
        "replay_id": replay_id,
        "segment_id": segment_id,
        "timestamp": format_ms(first),
        "end_timestamp": format_ms(last),
        "received_at": format_ms(origin.received_at),
        "batch_id": origin.batch_id,
        "encoding": segment.encoding,
        "event_count": len(segment.events),
        "has_full_snapshot": int(any(e.get("type") == FULL_SNAPSHOT for e in segment.events)),
        "size_bytes": len(segment.stored),
        "marks": orjson.dumps(segment_marks(segment.events)).decode(),
        "payload": base64.b64encode(segment.stored).decode("ascii"),
    }
