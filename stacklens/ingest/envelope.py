"""The Sentry protocol (docs/sdk.md): DSN auth, and envelope bodies read into items within bounds.

A Sentry SDK pointed at a StackLens DSN (``http(s)://<app key>@<host>/<project id>``) posts envelopes to
``/api/<project id>/envelope/`` (or, older SDKs, one event to ``/store/``). Each item becomes the same log
line the SDK's file transport writes (docs/sdk.md; :mod:`stacklens.ingest.envelope_lines`), so the envelope
lands through the ingest service's one code path: the same validation, scrubbing, grouping, tables and
exactly-once rule as ``/api/ingest``.

Items are split as sentry-sdk's envelope parser splits them and read with the SDK's item rules
(``stacklens_sdk.items``), which the browser tunnel uses too, so an envelope means the same thing on both
roads. Unlike that parser, this one bounds what an envelope may make the server do: the body inflates as a
bounded stream (:mod:`stacklens.ingest.inflate`), every JSON part passes the depth guard
(:mod:`stacklens.ingest.jsondepth`) before it is parsed, and each kind of item is bounded per envelope as
Relay bounds it (:data:`ITEM_BOUNDS`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sentry_sdk.envelope import Envelope, Item

from stacklens.ingest.decode import decode_error
from stacklens.ingest.inflate import DecodedBody
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, JsonTooDeep, check_depth, loads
from stacklens_sdk.items import WRITTEN_TYPES

# A compressed envelope over 20 MiB, or one that inflates past 64 MiB, is refused whole (413). Relay's
# defaults are 20 MiB per API request and 100 MiB per envelope; attachments are counted, never stored, so
# an envelope may carry them up to the same 64 MiB the inflated body may reach.
MAX_ENVELOPE_BYTES = 20 * 1024 * 1024
MAX_DECODED_BYTES = 64 * 1024 * 1024
MAX_ATTACHMENT_BYTES = MAX_DECODED_BYTES
# 64 KiB for the envelope header (the first line): an SDK's is under 2 KB (event id, dsn, sdk, sent_at,
# trace context). An envelope whose key is in its header is authenticated once this line is read, before
# the rest is inflated.
MAX_HEADER_BYTES = 64 * 1024
# 1,000 items per envelope, whatever their type: the bounds below add up to ~320, and a body of 64 MiB
# could otherwise hold millions of two-byte items, each a Python object.
MAX_ITEMS = 1000

_SENTRY_KEY = re.compile(r"sentry_key\s*=\s*([^,\s]+)")


@dataclass(frozen=True)
class ItemBound:
    """How many items of a kind one envelope may carry (Relay's per-envelope limits, relay-server
    ``utils/sizes.rs``); an envelope over one is refused whole (413), as Relay refuses it."""

    kind: str  # what the refusal calls the items
    count: int
    advice: str


_EVENT_LIKE = ItemBound(
    "event-like item (event, transaction, security report, replay event, feedback)",
    1,
    "send each event in an envelope of its own, as Sentry SDKs do",
)
_ATTACHMENTS = ItemBound("attachment", 100, "send the rest with another event")
_SESSIONS = ItemBound("session item", 100, "send the rest in another envelope")  # Relay's max_session_count
_CLIENT_REPORTS = ItemBound("client report", 10, "an SDK sends one per envelope")
_SPANS = ItemBound("standalone span", 100, "send the rest in another envelope")
# Log records in one `log` container item: sentry-python flushes its log buffer at 100 records and drops past
# 1,000; a container of more is refused whole, as an envelope over a bound is.
MAX_LOG_RECORDS = 1000


def _one(kind: str) -> ItemBound:
    return ItemBound(kind, 1, "send each in an envelope of its own")


ITEM_BOUNDS: dict[str, ItemBound] = {
    **dict.fromkeys(
        ("event", "transaction", "security", "raw_security", "replay_event", "feedback", "user_report_v2"),
        _EVENT_LIKE,
    ),
    **dict.fromkeys(("attachment", "user_report", "unreal_report"), _ATTACHMENTS),
    **dict.fromkeys(("session", "sessions"), _SESSIONS),
    "client_report": _CLIENT_REPORTS,
    "span": _SPANS,
    "replay_recording": _one("replay recording"),
    "replay_video": _one("replay video"),
    "check_in": _one("check-in"),
    "profile": _one("profile"),
    "profile_chunk": _one("profile"),
    "statsd": _one("statsd item"),
    "metric_buckets": _one("metric buckets item"),
    "log": _one("log container"),
}


def auth_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The DSN public key, from the places Relay reads it: ``X-Sentry-Auth``, ``Authorization: Sentry …``
    or ``Authorization: DSN <dsn>``, then the ``sentry_key`` query parameter (browsers, which cannot set
    headers without a preflight)."""
    sentry_auth = headers.get("x-sentry-auth") or ""
    authorization = (headers.get("authorization") or "").strip()
    scheme, _, rest = authorization.partition(" ")
    if scheme.lower() == "dsn":
        return dsn_key({"dsn": rest.strip()})
    for value in (sentry_auth, authorization if scheme.lower() == "sentry" else ""):
        match = _SENTRY_KEY.search(value)
        if match:
            return match.group(1)
    return query.get("sentry_key") or None


def dsn_key(envelope_headers: Mapping[str, Any]) -> str | None:
    """The public key of the envelope header's ``dsn``, if any."""
    dsn = envelope_headers.get("dsn")
    if not isinstance(dsn, str):
        return None
    try:
        return urlsplit(dsn).username or None
    except ValueError:
        return None


def read_header(body: DecodedBody) -> dict[str, Any]:
    """The envelope header: the first line of the body, inflated alone (400 when it is not a JSON object)."""
    return _json_object(body.first_line(MAX_HEADER_BYTES), "the envelope header")


def read_envelope(body: DecodedBody, headers: dict[str, Any]) -> Envelope:
    """The envelope whose header :func:`read_header` read: the rest of the body inflated, its items read."""
    return envelope_of(body.rest(), headers)


def envelope_of(rest: bytes, headers: dict[str, Any]) -> Envelope:
    """The envelope of ``headers`` (read by :func:`read_header`) and the inflated ``rest`` of its body."""
    return Envelope(headers=headers, items=read_items(rest))


def parse_envelope(raw: bytes) -> Envelope:
    """The envelope of a decoded body, or :class:`~stacklens.ingest.decode.DecodeError` in words the sender
    can act on (unreadable 400, over a limit 413)."""
    header, _, rest = raw.partition(b"\n")
    return Envelope(headers=_json_object(header, "the envelope header"), items=read_items(rest))


def read_items(data: bytes) -> list[Item]:
    """The items, read as sentry-sdk reads them (a ``length`` header, else up to the end of the line; a blank
    line ends the envelope), each JSON part through the depth guard and each kind within its
    :data:`ITEM_BOUNDS`: a refusal comes before any payload past the bound is parsed."""
    items: list[Item] = []
    seen: Counter[str] = Counter()
    position, end = 0, len(data)
    while position < end:
        newline = data.find(b"\n", position)
        stop = end if newline == -1 else newline
        header_line = data[position:stop].rstrip()
        if not header_line:
            break
        number = len(items) + 1
        if number > MAX_ITEMS:
            raise decode_error(413, f"the envelope carries more than {MAX_ITEMS} items")
        headers = _json_object(header_line, f"item {number}'s header")
        kind = headers.get("type")
        if not isinstance(kind, str) or not kind:
            raise decode_error(400, f"malformed envelope: item {number}'s header names no type")
        payload, position = _payload(data, stop + 1, headers.get("length"), number)
        bound = ITEM_BOUNDS.get(kind)
        if bound is not None:
            seen[bound.kind] += 1
            if seen[bound.kind] > bound.count:
                raise decode_error(
                    413,
                    f"the envelope carries more than {bound.count} {bound.kind}"
                    f"{'' if bound.count == 1 else 's'} (item {number} is {kind!r}); {bound.advice}",
                )
        if kind in WRITTEN_TYPES or kind == "log":
            # Only what is read as JSON is measured: the replay recording's first line, the others whole.
            json_part = payload.partition(b"\n")[0] if kind == "replay_recording" else payload
            try:
                check_depth(json_part, MAX_JSON_DEPTH, f"item {number}: the JSON")
            except JsonTooDeep as exc:
                raise decode_error(400, str(exc)) from None
        items.append(Item(payload=payload, headers=headers))
    return items


def item_kinds(data: bytes) -> Counter[str]:
    """The items of an envelope body that :func:`read_items` refused, by type, as far as their headers can be
    read (stopping at the first that cannot): what its outcomes count. Bounded as ``read_items`` is."""
    kinds: Counter[str] = Counter()
    position, end = 0, len(data)
    headers_read = 0
    while position < end and headers_read < MAX_ITEMS:
        newline = data.find(b"\n", position)
        stop = end if newline == -1 else newline
        header_line = data[position:stop].rstrip()
        if not header_line:
            break
        try:
            headers = _json_object(header_line, "an item's header")
        except ValueError:
            break
        kind = headers.get("type")
        if not isinstance(kind, str) or not kind:
            break
        headers_read += 1
        # A log item holds many records, each a line and an item of its own: counted by the header's
        # `item_count` (as SDKs write it), else one; never more than one log item may hold, all log items
        # together (a refused envelope may carry more than the one it may).
        count = 1
        if kind == "log":
            said = headers.get("item_count")
            records = said if isinstance(said, int) and not isinstance(said, bool) and said > 0 else 1
            count = min(records, MAX_LOG_RECORDS - kinds[kind])
        kinds[kind] += count
        length = headers.get("length")
        if isinstance(length, int) and not isinstance(length, bool) and length >= 0:
            following = data.find(b"\n", stop + 1 + length)
        else:
            following = data.find(b"\n", stop + 1)
        position = end if following == -1 else following + 1
    return kinds


def _payload(data: bytes, start: int, length: Any, number: int) -> tuple[bytes, int]:
    """The item's payload and where the next item starts."""
    if length is None:  # up to the end of the line
        newline = data.find(b"\n", start)
        stop = len(data) if newline == -1 else newline
        return data[start:stop], stop + 1
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise decode_error(400, f"malformed envelope: item {number}'s length is not a byte count")
    payload = data[start : start + length]
    if len(payload) < length:
        raise decode_error(
            400, f"malformed envelope: item {number} is {len(payload)} bytes, its header says {length}"
        )
    newline = data.find(
        b"\n", start + length
    )  # the rest of the payload's line is skipped, as sentry-sdk does
    return payload, len(data) if newline == -1 else newline + 1


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = loads(raw, MAX_JSON_DEPTH, where=what)
    except JsonTooDeep as exc:
        raise decode_error(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise decode_error(400, f"malformed envelope: {what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise decode_error(400, f"malformed envelope: {what} is not a JSON object")
    return value
