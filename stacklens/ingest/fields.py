"""Field extraction shared by the event and transaction normalisers: text limits, maps, users, clients,
times."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from stacklens.ingest import timeparse
from stacklens.ingest.useragent import parse_user_agent

_MAX_TEXT = 8192
_HEX32 = re.compile(r"[0-9a-f]{32}")
_NIL_ID = "0" * 32
# Measurements arrive as {"lcp": {"value": 1234.5, "unit": "millisecond"}}; store ms (cls has no unit).
UNIT_TO_MS = {
    "millisecond": 1.0,
    "second": 1000.0,
    "microsecond": 0.001,
    "nanosecond": 1e-6,
    "minute": 60000.0,
}


@dataclass(frozen=True)
class Origin:
    """Where a line comes from: filled in by the ingest service, never by the payload."""

    org_id: int
    project_id: int
    service: str | None  # a per-service app key's service wins over the event's tag
    batch_id: str
    received_at: float  # epoch seconds
    line_ts: str | None = None
    # The times the warehouse keeps (see :func:`time_window`): outside them a time is replaced by the
    # receive time. The defaults accept every plausible time (callers without a retention).
    earliest: float = 0.0
    latest: float = float("inf")


def text(value: Any, limit: int = _MAX_TEXT) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:limit]
    as_text = (
        json.dumps(value, separators=(",", ":"), default=str)
        if isinstance(value, dict | list)
        else str(value)
    )
    return as_text[:limit]


def dict_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def string_map(value: Any) -> dict[str, str]:
    """Tags and span data as ``Map(String, String)``; Sentry sends tags as a dict or as ``[[k, v], ...]``."""
    if isinstance(value, list):
        value = {pair[0]: pair[1] for pair in value if isinstance(pair, list | tuple) and len(pair) == 2}
    if not isinstance(value, dict):
        return {}
    return {str(k)[:200]: text(v, 1024) for k, v in value.items() if v is not None}


def given_event_id(value: Any) -> str | None:
    """The payload's ``event_id`` as 32 lower-case hex digits, or ``None`` when it is not a usable id.

    Usable: 32 hex digits, bare (what the SDKs send) or in the dashed UUID form, in either case. The nil
    UUID (all zeros) is what some clients send for "no id": taken as a real id it would make every later
    event with it a duplicate, so it counts as missing, like any other text.
    """
    if not isinstance(value, str):
        return None
    hex_id = value
    if len(hex_id) == 36 and hex_id[8] == hex_id[13] == hex_id[18] == hex_id[23] == "-":
        hex_id = hex_id.replace("-", "")
    if len(hex_id) != 32:
        return None
    hex_id = hex_id.lower()
    if not _HEX32.fullmatch(hex_id) or hex_id == _NIL_ID:
        return None
    return hex_id


def event_uuid(payload: dict[str, Any], raw_line: bytes) -> str:
    """The event's id in UUID form: the payload's own (see :func:`given_event_id`), else one derived from
    the line's bytes, so a resend of the same line is still a duplicate."""
    raw = given_event_id(payload.get("event_id"))
    if raw is None:
        raw = assigned_event_id(raw_line)
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def assigned_event_id(raw_line: bytes) -> str:
    """The id a line without a usable ``event_id`` gets: 32 hex digits derived from its bytes."""
    return uuid.uuid5(uuid.NAMESPACE_OID, raw_line.hex()).hex


def service_of(origin: Origin, tags: dict[str, str]) -> str:
    return origin.service or tags.get("service", "")[:31]


def user_of(payload: dict[str, Any]) -> tuple[str, str, str, str, str]:
    user = dict_of(payload.get("user"))
    uid, email = text(user.get("id"), 200), text(user.get("email"), 320)
    name = text(user.get("username") or user.get("name"), 200)
    ip = text(user.get("ip_address"), 64)
    return uid, email, name, ip, uid or email or name or ip


def client_of(payload: dict[str, Any]) -> tuple[str, str, str, str]:
    """Browser and OS: the SDK's contexts when sent, else parsed from the request's User-Agent."""
    contexts = dict_of(payload.get("contexts"))
    browser, os_ctx = dict_of(contexts.get("browser")), dict_of(contexts.get("os"))
    headers = string_map(dict_of(payload.get("request")).get("headers"))
    ua = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
    ua_browser, ua_browser_version, ua_os, ua_os_version = parse_user_agent(ua)
    return (
        text(browser.get("name"), 64) or ua_browser,
        text(browser.get("version"), 64) or ua_browser_version,
        text(os_ctx.get("name"), 64) or ua_os,
        text(os_ctx.get("version"), 64) or ua_os_version,
    )


def message_of(payload: dict[str, Any]) -> str:
    logentry = dict_of(payload.get("logentry"))
    message = logentry.get("formatted") or logentry.get("message") or payload.get("message")
    if isinstance(message, dict):
        message = message.get("formatted") or message.get("message")
    return text(message)


def timestamp_of(value: Any, origin: Origin) -> float:
    """The time a row is stored and partitioned under: the payload's, else the line's ``ts``; the receive
    time when neither is readable or the one given is outside the kept window (:func:`time_window`)."""
    parsed = timeparse.to_epoch(value)
    if parsed is None and origin.line_ts:
        parsed = timeparse.to_epoch(origin.line_ts)
    if parsed is None or not origin.earliest <= parsed <= origin.latest:
        return origin.received_at
    return parsed


# The columns ``events`` and ``transactions`` share (migrations 0001 and 0002), filled the same way from a
# Sentry payload: the row's identity and landing, and where the event came from.
COMMON_COLUMNS = (
    "org_id",
    "project_id",
    "event_id",
    "received_at",
    "batch_id",
    "platform",
    "release",
    "environment",
    "service",
    "server_name",
    "transaction",
    "user_key",
    "tags",
    "payload",
)


def common_columns(
    payload: dict[str, Any], origin: Origin, raw_line: bytes, tags: dict[str, str], payload_json: Any
) -> dict[str, Any]:
    """The :data:`COMMON_COLUMNS` of an event's or a transaction's row (``tags`` as :func:`string_map` read
    them; ``payload_json`` the scrubbed payload's JSON text or an ``orjson.Fragment`` of it)."""
    return {
        "org_id": origin.org_id,
        "project_id": origin.project_id,
        "event_id": event_uuid(payload, raw_line),
        "received_at": timeparse.format_ms(origin.received_at),
        "batch_id": origin.batch_id,
        "platform": text(payload.get("platform"), 64),
        "release": text(payload.get("release"), 256),
        "environment": text(payload.get("environment"), 128),
        "service": service_of(origin, tags),
        "server_name": text(payload.get("server_name"), 256),
        "transaction": text(payload.get("transaction"), 1024),
        "user_key": user_of(payload)[4],
        "tags": tags,
        "payload": payload_json,
    }
