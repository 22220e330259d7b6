"""Release-health items → rows of ``sessions``: Sentry's ``session`` updates and ``sessions`` aggregates.

Read as Relay reads them (relay-event-schema ``protocol/session.rs``, relay-server ``processor/session.rs``):

- a ``session`` item is one update of one session: ``sid``, ``did`` (the user), ``seq``, ``init``,
  ``started``, ``timestamp``, ``duration``, ``status`` (``ok``, then one of ``exited``, ``errored``,
  ``crashed``, ``abnormal``, ``unhandled``), ``errors`` and ``attrs`` (``release``, ``environment``,
  ``user_agent``). It becomes one row of quantity 1. ``status`` defaults to ``ok``, ``errors`` to 0, ``init``
  to false, ``timestamp`` to the line's time; a missing ``seq`` becomes the update's time in milliseconds, as
  Relay's default (which is its receive clock) orders updates, but reproducible, so a resent update is the
  same row;
- a ``sessions`` item is ``{"attrs": …, "aggregates": [{"started", "did", "exited", "errored", "abnormal",
  "unhandled", "crashed"}, …]}`` (sentry-python's request mode, @sentry/node): each bucket and status with a
  count becomes one row with that count as its quantity, the nil session id and ``init`` 1 (every session of
  a bucket started in it).

A release is required (an item without one is rejected, naming it); an invalid environment is dropped and
the item kept, as Relay does. Times follow the events' clock (:mod:`stacklens.ingest.clock`): an update more
than a minute ahead of the receiving clock is moved back to it, ``started`` with it (Relay's clock-drift
correction); a ``timestamp`` before ``started`` becomes ``started``; a session that started before the
warehouse's retention is rejected, as Relay drops sessions older than its window (moved to today it would be
counted on the wrong day). An aggregate keeps its buckets within the window and names those it dropped.

Every row carries a ``dedup_key`` (see :func:`session_rows`): ingest drops rows whose key is stored, so an
update sent again (another batch, a resent envelope) lands once.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from stacklens.ingest import timeparse
from stacklens.ingest.fields import Origin, text

SESSION_TYPES = frozenset({"session", "sessions"})
STATUSES = ("ok", "exited", "errored", "crashed", "abnormal", "unhandled")
# The statuses an aggregate bucket counts, in the order its rows are made.
AGGREGATE_STATUSES = ("exited", "errored", "abnormal", "unhandled", "crashed")
NIL_SESSION = "00000000-0000-0000-0000-000000000000"
MAX_RELEASE = 200  # Relay's limit on a release name
MAX_ENVIRONMENT = 64  # Relay's limit on an environment name
_U32 = 2**32 - 1
_U64 = 2**64 - 1
_MAX_DID = 256
_MAX_USER_AGENT = 512

# The columns of `sessions` (migration 0011), in the order a row lists them.
COLUMNS = (
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
)


class BadSession(ValueError):
    """Why a session item is rejected; the message names the field and goes to the sender as is."""


@dataclass(frozen=True)
class SessionRows:
    """What one item became: its rows, and a note about aggregate buckets it dropped (else '')."""

    rows: list[dict[str, Any]]
    dropped: str = ""


def session_rows(item_type: str, payload: dict[str, Any], origin: Origin) -> SessionRows:
    """The rows of one ``session`` or ``sessions`` payload; raises :class:`BadSession` naming the field.

    ``dedup_key``: a session update is identified by what it says (sha-256 of the project and the payload as
    sent, keys sorted): the same update sent again is the same row, and two updates of one session differ
    (the SDK stamps each with its time). An aggregate says nothing that tells two flushes apart — a quiet
    minute may be flushed twice with the same counts — so its key adds the line's time (the SDK's write time
    in a log file, the envelope's ``sent_at`` or receive time through the DSN), then the bucket and status.
    """
    digest = hashlib.sha256(f"{origin.project_id}\n".encode())
    digest.update(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))
    attrs = _attributes(payload.get("attrs"))
    if item_type == "session":
        return SessionRows([_update_row(payload, attrs, origin, digest.hexdigest()[:32])])
    digest.update(f"\n{origin.line_ts or ''}".encode())
    return _aggregate_rows(payload, attrs, origin, digest.hexdigest()[:32])


@dataclass(frozen=True)
class _Attributes:
    release: str
    environment: str
    user_agent: str


def _attributes(value: Any) -> _Attributes:
    if value is None:
        raise BadSession("`attrs.release` is required (the release the session ran)")
    if not isinstance(value, dict):
        raise BadSession("`attrs` must be an object with the session's release and environment")
    release = value.get("release")
    if release is None:
        raise BadSession("`attrs.release` is required (the release the session ran)")
    if not isinstance(release, str) or not release.strip():
        raise BadSession("`attrs.release` must be a non-empty text")
    if len(release) > MAX_RELEASE:
        raise BadSession(f"`attrs.release` is {len(release)} characters; at most {MAX_RELEASE} are accepted")
    if any(ord(c) < 32 or c == "\x7f" for c in release) or release in (".", ".."):
        raise BadSession("`attrs.release` holds a control character or is '.' or '..'")
    environment = value.get("environment")
    # An environment Relay would not accept is removed and the session kept (relay-server's session rules).
    if not (
        isinstance(environment, str)
        and 0 < len(environment) <= MAX_ENVIRONMENT
        and "/" not in environment
        and all(ord(c) >= 32 and c != "\x7f" for c in environment)
    ):
        environment = ""
    return _Attributes(release, environment, text(value.get("user_agent"), _MAX_USER_AGENT))


def _update_row(payload: dict[str, Any], attrs: _Attributes, origin: Origin, key: str) -> dict[str, Any]:
    started = _time(payload.get("started"), "started")
    if started is None:
        raise BadSession("`started` is required (when the session started)")
    timestamp = _time(payload.get("timestamp"), "timestamp")
    if timestamp is None:
        timestamp = timeparse.to_epoch(origin.line_ts) if origin.line_ts else None
        timestamp = origin.received_at if timestamp is None else timestamp
    timestamp = max(timestamp, started)  # Relay: an update before its session's start happened at the start
    if timestamp > origin.latest:
        shift = origin.received_at - timestamp
        started, timestamp = started + shift, origin.received_at
    _check_kept(started, origin)
    status = payload.get("status", "ok")
    if status is None:
        status = "ok"
    if status not in STATUSES:
        raise BadSession(f"`status` must be one of {', '.join(STATUSES)}, not {_shown(status)}")
    errors = _count(payload.get("errors"), "errors", _U64)
    seq = payload.get("seq")
    if seq is None:
        seq = round(timestamp * 1000)
    elif not _is_int(seq) or not 0 <= seq < _U64:
        # u64::MAX is Relay's "sequence overflow": such an update is dropped.
        raise BadSession("`seq` must be a whole number from 0 to 2^64 - 2")
    init = payload.get("init", False)
    if init is None:
        init = False
    if not isinstance(init, bool) and init not in (0, 1):
        raise BadSession("`init` must be true or false")
    return _row(
        origin,
        session_id=_session_id(payload.get("sid"), key),
        distinct_id=_distinct_id(payload.get("did"), "did"),
        status=status,
        errors=min(errors, _U32),
        init=int(bool(init)),
        seq=int(seq),
        quantity=1,
        started=started,
        timestamp=timestamp,
        duration=_duration(payload.get("duration")),
        attrs=attrs,
        source="session",
        dedup_key=key,
    )


def _aggregate_rows(payload: dict[str, Any], attrs: _Attributes, origin: Origin, key: str) -> SessionRows:
    buckets = payload.get("aggregates")
    if not isinstance(buckets, list) or not buckets:
        raise BadSession("`aggregates` must be a non-empty list of buckets ({started, exited, errored, …})")
    rows: list[dict[str, Any]] = []
    too_old = 0
    for index, bucket in enumerate(buckets):
        where = f"aggregates[{index}]"
        if not isinstance(bucket, dict):
            raise BadSession(f"`{where}` must be an object")
        started = _time(bucket.get("started"), f"{where}.started")
        if started is None:
            raise BadSession(f"`{where}.started` is required (the minute its sessions started)")
        if started > origin.latest:
            started = origin.received_at  # a clock ahead: the bucket is now (Relay corrects the drift)
        if started < origin.earliest:
            too_old += 1
            continue
        did = _distinct_id(bucket.get("did"), f"{where}.did")
        for status in AGGREGATE_STATUSES:
            quantity = _count(bucket.get(status), f"{where}.{status}", _U32)
            if quantity:
                rows.append(
                    _row(
                        origin,
                        session_id=NIL_SESSION,
                        distinct_id=did,
                        status=status,
                        errors=0,
                        init=1,
                        seq=round(started * 1000),
                        quantity=quantity,
                        started=started,
                        timestamp=started,
                        duration=None,
                        attrs=attrs,
                        source="sessions",
                        dedup_key=f"{key}:{index}:{status}",
                    )
                )
    if too_old == len(buckets):
        raise BadSession(_too_old_words(origin, "every bucket of `aggregates` started"))
    if not rows:  # a valid item with nothing to count: said, so every line of a batch is accounted for
        raise BadSession(
            "no bucket of `aggregates` counts a session (exited, errored, abnormal, unhandled, crashed are 0)"
        )
    dropped = _too_old_words(origin, f"{too_old} of {len(buckets)} buckets started") if too_old else ""
    return SessionRows(rows, dropped)


def _row(
    origin: Origin,
    *,
    session_id: str,
    distinct_id: str,
    status: str,
    errors: int,
    init: int,
    seq: int,
    quantity: int,
    started: float,
    timestamp: float,
    duration: float | None,
    attrs: _Attributes,
    source: str,
    dedup_key: str,
) -> dict[str, Any]:
    return {
        "org_id": origin.org_id,
        "project_id": origin.project_id,
        "session_id": session_id,
        "distinct_id": distinct_id,
        "status": status,
        "errors": errors,
        "init": init,
        "seq": seq,
        "quantity": quantity,
        "started": timeparse.format_ms(started),
        "timestamp": timeparse.format_ms(timestamp),
        "duration": duration,
        "release": attrs.release,
        "environment": attrs.environment,
        "user_agent": attrs.user_agent,
        "source": source,
        "received": timeparse.format_ms(origin.received_at),
        "batch_id": origin.batch_id,
        "dedup_key": dedup_key,
    }


def _time(value: Any, field: str) -> float | None:
    """Epoch seconds of an RFC 3339 text or epoch number; ``None`` when absent; a bad value is rejected."""
    if value is None:
        return None
    seconds = timeparse.to_epoch(value)
    if seconds is None:
        raise BadSession(
            f"`{field}` is not a time (RFC 3339 text such as 2025-01-31T12:00:00Z): {_shown(value)}"
        )
    return seconds


def _check_kept(started: float, origin: Origin) -> None:
    if started < origin.earliest:
        raise BadSession(_too_old_words(origin, "the session started"))


def _too_old_words(origin: Origin, what: str) -> str:
    return (
        f"{what} before {timeparse.format_ms(origin.earliest)[:19]} UTC, longer ago than the warehouse keeps "
        "data (STACKLENS_RETENTION_DAYS): not stored"
    )


def _count(value: Any, field: str, limit: int) -> int:
    if value is None:
        return 0
    if not _is_int(value) or value < 0:
        raise BadSession(f"`{field}` must be a whole number of at least 0, not {_shown(value)}")
    return min(int(value), limit)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _session_id(value: Any, key: str) -> str:
    """The ``sid`` as a dashed UUID. Relay gives a session without one a new id; here the id is derived from
    the update's key, so the same update sent again keeps it. The nil UUID marks aggregate rows: a session
    sent with it is treated as sent without one."""
    if value is None:
        return str(uuid.UUID(key))
    if isinstance(value, str):
        try:
            parsed = uuid.UUID(value.strip())
        except ValueError:
            parsed = None
        if parsed is not None:
            return str(uuid.UUID(key)) if parsed.int == 0 else str(parsed)
    raise BadSession(f"`sid` must be a UUID, not {_shown(value)}")


def _distinct_id(value: Any, field: str) -> str:
    """The user: text (a number is taken as its digits); '' for none or the nil UUID (Relay's
    ``nil_to_none``)."""
    if value is None:
        return ""
    if _is_int(value):
        value = str(value)
    if not isinstance(value, str):
        raise BadSession(f"`{field}` must be text (the user's id, e-mail or name), not {_shown(value)}")
    try:
        if uuid.UUID(value).int == 0:
            return ""
    except ValueError:
        pass
    return value[:_MAX_DID]


def _duration(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadSession(f"`duration` must be a number of seconds, not {_shown(value)}")
    seconds = float(value)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _shown(value: Any) -> str:
    shown = orjson.dumps(value).decode() if not isinstance(value, int) or abs(value) < 2**63 else str(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
