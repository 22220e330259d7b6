"""The Sentry protocol (DESIGN §7.3): DSN auth, and envelope or store bodies turned into log lines.

A Sentry SDK pointed at a StackLens DSN (``http(s)://<app key>@<host>/<project id>``) posts envelopes to
``/api/<project id>/envelope/`` (or, older SDKs, one event to ``/store/``). Each item becomes the same log
line the SDK's file transport writes (DESIGN §4.1), so the envelope lands through the ingest service's one
code path: the same validation, scrubbing, grouping, tables and exactly-once rule as ``/api/ingest``.

Items are read with sentry-sdk's own envelope parser and the SDK's item rules (``stacklens_sdk.items``), which
the browser tunnel uses too, so an envelope means the same thing on both roads.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import uuid
import zlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import zstandard
from sentry_sdk.envelope import Envelope, Item, PayloadRef

from stacklens.ingest.decode import DecodeError, decode_error
from stacklens_sdk.items import WRITTEN_TYPES, UnreadableItem, item_payload

# A compressed envelope over 20 MiB, or one that inflates past 64 MiB, is refused whole (413). Relay's
# defaults are 20 MiB per envelope and 100 MiB per attachment; attachments are counted, never stored, so
# an envelope may carry them up to the same 64 MiB the inflated body may reach.
MAX_ENVELOPE_BYTES = 20 * 1024 * 1024
MAX_DECODED_BYTES = 64 * 1024 * 1024
MAX_ATTACHMENT_BYTES = MAX_DECODED_BYTES

ENCODINGS = ("gzip", "deflate", "br", "zstd")
_SENTRY_KEY = re.compile(r"sentry_key\s*=\s*([^,\s]+)")


@dataclass
class EnvelopeLines:
    """What one envelope becomes: NDJSON log lines to land, and what was only counted."""

    lines: bytes
    event_id: str
    written: Counter[str] = field(default_factory=Counter)
    counted: Counter[str] = field(default_factory=Counter)  # item types kept out of the warehouse

    @property
    def idempotency_key(self) -> str:
        """The same envelope sent again lands nothing again (the shipper's Idempotency-Key rule)."""
        return "env-" + hashlib.sha256(self.lines).hexdigest()[:40]


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


def decode(body: bytes, content_encoding: str | None) -> bytes:
    """Undo ``Content-Encoding`` (gzip, deflate, br, zstd, or several in order) within the size limits."""
    if len(body) > MAX_ENVELOPE_BYTES:
        raise decode_error(413, f"the body exceeds {MAX_ENVELOPE_BYTES // (1024 * 1024)} MiB")
    data = body
    encodings = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
    for encoding in reversed(encodings):  # the last one applied is undone first (RFC 9110 §8.4)
        if encoding == "identity":
            continue
        if encoding not in ENCODINGS:
            raise decode_error(
                415, f"unsupported Content-Encoding {encoding!r}; send gzip, deflate, br or zstd"
            )
        try:
            data = _inflate(encoding, data)
        except DecodeError:  # already in the sender's words
            raise
        except Exception as exc:  # each codec has its own error type; all mean the same to the sender
            raise decode_error(400, f"the body is not valid {encoding}: {exc}") from None
    return data


def _inflate(encoding: str, data: bytes) -> bytes:
    limit = MAX_DECODED_BYTES
    if encoding == "gzip":
        out = gzip.GzipFile(fileobj=io.BytesIO(data)).read(limit + 1)
    elif encoding == "deflate":
        # HTTP "deflate" is zlib-wrapped by the spec, raw DEFLATE by some clients: accept both.
        try:
            out = zlib.decompressobj().decompress(data, limit + 1)
        except zlib.error:
            out = zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, limit + 1)
    elif encoding == "br":
        import brotli

        out = brotli.decompress(data)
    else:
        out = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(limit + 1)
    if len(out) > limit:
        raise decode_error(413, f"the decompressed body exceeds {limit // (1024 * 1024)} MiB")
    return out


def parse_envelope(raw: bytes) -> Envelope:
    """The envelope, or :class:`~stacklens.ingest.decode.DecodeError` in words the sender can act on (bodies fail as shipper bodies do: unreadable 400, too large 413, an unknown encoding 415)."""
    try:
        envelope = Envelope.deserialize(raw)
    except (ValueError, UnicodeDecodeError, AttributeError, TypeError, IndexError) as exc:
        raise decode_error(400, f"malformed envelope: {exc}") from None
    if not isinstance(envelope.headers, dict):
        raise decode_error(400, "malformed envelope: the header is not a JSON object")
    return envelope


def envelope_lines(envelope: Envelope, app_key: str, received: datetime) -> EnvelopeLines:
    """The log lines of every item the service keeps; other item types are counted.

    Every item is read before any line is made, so a malformed item refuses the envelope whole (400) and
    nothing of it lands half.
    """
    ts = _iso(received)
    lines: list[bytes] = []
    written: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    event_id = envelope.headers.get("event_id")
    for item in envelope.items:
        kind = item.type or "unknown"
        if kind == "attachment":
            size = len(item.get_bytes())
            if size > MAX_ATTACHMENT_BYTES:
                raise decode_error(413, f"an attachment exceeds {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB")
            counted[kind] += 1
            continue
        if kind not in WRITTEN_TYPES:
            counted[kind if kind in ("check_in", "profile", "statsd", "log") else "unknown"] += 1
            continue
        try:
            payload = item_payload(item, envelope.headers)
        except UnreadableItem as exc:
            raise decode_error(400, f"malformed envelope item: {exc}") from None
        if kind in ("event", "transaction") and not isinstance(event_id, str):
            event_id = payload.get("event_id")
        lines.append(_line(kind, app_key, ts, payload))
        written[kind] += 1
    if not isinstance(event_id, str) or not event_id:
        event_id = uuid.uuid4().hex  # an empty answer breaks some SDKs: always name an id
    return EnvelopeLines(b"\n".join(lines), event_id, written, counted)


def store_lines(raw: bytes, app_key: str, received: datetime) -> EnvelopeLines:
    """The legacy ``/store/`` body: one event as JSON (a transaction when its ``type`` says so)."""
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise decode_error(400, f"the body is not a JSON event: {exc}") from None
    if not isinstance(payload, dict):
        raise decode_error(400, "the body is not a JSON object")
    kind = "transaction" if payload.get("type") == "transaction" else "event"
    envelope = Envelope(headers={"event_id": payload.get("event_id")})
    envelope.add_item(Item(payload=PayloadRef(json=payload), type=kind))
    return envelope_lines(envelope, app_key, received)


def _line(kind: str, app_key: str, ts: str, payload: Any) -> bytes:
    return json.dumps(
        {"v": 1, "type": kind, "app_key": app_key, "ts": ts, "payload": payload},
        separators=(",", ":"),
    ).encode("utf-8")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
