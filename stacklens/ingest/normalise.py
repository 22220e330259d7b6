"""Sentry payloads → raw warehouse rows: ``events``, ``transactions`` and ``spans``.

Input is a scrubbed payload as sentry-sdk (Python) or @sentry/browser produced it. Output rows are dicts
keyed by the columns of ``warehouse_sql/migrations/0001–0003`` with JSON-ready values (times as
``YYYY-MM-DD hh:mm:ss.fff`` UTC text), written as ``JSONEachRow``. Transactions live in
:mod:`stacklens.ingest.transactions` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orjson import Fragment

from stacklens.ingest import timeparse
from stacklens.ingest.fields import (
    Origin,
    client_of,
    common_columns,
    dict_of,
    message_of,
    string_map,
    text,
    timestamp_of,
    user_of,
)
from stacklens.ingest.grouping import DEFAULT_VERSION, SOURCEMAPPED_VERSION, fingerprint_event, issue_id_for

# The row's in-app frame list reads the exception chain the way grouping v1 does; it is a display column,
# not part of the fingerprint, so it stays on v1's helpers whichever version groups the event.
from stacklens.ingest.grouping.v1 import exception_values
from stacklens.ingest.grouping.v2 import collapse_repeats, frame_label, stack_frames, title_of
from stacklens.ingest.grouping.v3 import grouped_frames
from stacklens.ingest.in_app import NO_RULES, InAppRules, culprit_of, frame_in_app
from stacklens.ingest.transactions import spans_rows, transaction_row

__all__ = ["Origin", "event_row", "spans_rows", "transaction_row"]


def event_row(
    payload: dict[str, Any],
    origin: Origin,
    raw_line: bytes,
    payload_json: str | Fragment,
    grouping_version: str = DEFAULT_VERSION,
    in_app_rules: InAppRules = NO_RULES,
    issue_overrides: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One ``events`` row for an error event.

    ``payload_json`` is the scrubbed payload as JSON text, or an :class:`orjson.Fragment` of it, which
    ``orjson.dumps`` embeds without escaping it again (the insert reads it into the ``String`` column as that
    text, ``input_format_json_read_objects_as_strings``). ``grouping_version`` is the default, or
    ``SOURCEMAPPED_VERSION`` when ingest recorded the original frames of the event's stack in the payload.

    Which frames are in-app is inferred (:mod:`stacklens.ingest.in_app`, with the project's
    ``in_app_rules``) for the culprit and the in-app frame list only; the payload is left as sent, so the
    frozen grouping versions fingerprint what the SDK marked, now and whenever the event is grouped again.

    ``issue_overrides`` (the project's merged fingerprints → their issue, :mod:`stacklens.issues.merges`)
    moves the event to the issue a person merged its fingerprint into; the fingerprint stays the version's."""
    grouping = fingerprint_event(payload, grouping_version)
    chain = exception_values(payload)
    raised = chain[-1] if chain else {}
    # The exception's frames, else the thread it was raised on, else a thread's or a top-level stack (Java log
    # events and native crashes carry theirs under `threads`).
    frames = grouped_frames(payload) if grouping_version == SOURCEMAPPED_VERSION else stack_frames(payload)
    platform = text(payload.get("platform"), 64)
    app_frames = [f for f in reversed(frames) if frame_in_app(f, in_app_rules, platform)]
    in_app = collapse_repeats([frame_label(f) for f in app_frames])
    mechanism = dict_of(raised.get("mechanism"))
    tags = string_map(payload.get("tags"))
    request = dict_of(payload.get("request"))
    contexts = dict_of(payload.get("contexts"))
    runtime, sdk = dict_of(contexts.get("runtime")), dict_of(payload.get("sdk"))
    uid, email, name, ip, _ = user_of(payload)
    browser, browser_version, os_name, os_version = client_of(payload)
    exc_type, exc_value = text(raised.get("type"), 512), text(raised.get("value"))
    message = message_of(payload)
    title = title_of(payload, exc_type, exc_value, message)
    row = common_columns(payload, origin, raw_line, tags, payload_json)
    row.update(
        {
            "issue_id": (issue_overrides or {}).get(grouping.hash)
            or issue_id_for(origin.project_id, grouping.hash),
            "fingerprint": grouping.hash,
            "grouping_version": grouping.version,
            "timestamp": timeparse.format_ms(timestamp_of(payload.get("timestamp"), origin)),
            "level": text(payload.get("level") or "error", 32),
            "logger": text(payload.get("logger"), 256),
            "title": title[:1024],
            "culprit": text(
                culprit_of(app_frames[0], platform)
                if app_frames
                else payload.get("culprit") or payload.get("transaction"),
                1024,
            ),
            "message": message,
            "exception_type": exc_type,
            "exception_value": exc_value,
            "exception_types": [text(v.get("type"), 512) for v in chain],
            "exception_values": [text(v.get("value")) for v in chain],
            "handled": 0 if mechanism.get("handled") is False else 1,
            "in_app_frames": in_app[:64],
            "frame_count": min(len(frames), 65535),
            "request_method": text(request.get("method"), 16).upper(),
            "request_url": text(request.get("url"), 2048),
            "user_id": uid,
            "user_email": email,
            "user_name": name,
            "user_ip": ip,
            "browser_name": browser,
            "browser_version": browser_version,
            "os_name": os_name,
            "os_version": os_version,
            "runtime_name": text(runtime.get("name"), 64),
            "runtime_version": text(runtime.get("version"), 64),
            "sdk_name": text(sdk.get("name"), 64),
            "sdk_version": text(sdk.get("version"), 64),
        }
    )
    return row
