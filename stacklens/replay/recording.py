"""One replay segment's bytes: which compression the SDK used, the rrweb events inside, and the bytes to
store.

The browser SDK sends a segment as ``{"segment_id": n}\\n`` then the rrweb events, zlib-compressed by its
worker, gzip by some versions, plain JSON when compression is off. The compression is told by the first
bytes (gzip ``1f 8b``; zlib ``78 xx`` with the header checksum; JSON ``[`` or ``{``), never by a header,
because the SDKs do not send one. What is stored is the bytes as received (docs/architecture.md §2), unless
scrubbing
had to change the text (then zlib again), or the segment came as plain JSON (zlib once, to keep a 5-minute
session under a megabyte).
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from dataclasses import dataclass
from typing import Any

import orjson

from stacklens.ingest.card_numbers import card_hint
from stacklens.ingest.scrub import scrub_value
from stacklens.ingest.secret_redaction import redact_everywhere, secret_hint
from stacklens.scrubbing.apply import NO_RULES, ScrubRules

MAX_RECORDING_BYTES = 64 * 1024 * 1024  # inflated; a segment is a few seconds of DOM changes, rarely 1 MiB
FULL_SNAPSHOT = 2  # rrweb EventType.FullSnapshot: the player can start here
# Words of the key names ingest filters (stacklens.ingest.scrub): only then is the key walk worth its time.
_SENSITIVE_HINT = re.compile(
    rb"(?i)passw|secret|token|api.?key|credential|session|csrf|xsrf|cookie|auth|cvv|cvc"
)


def event_ms(timestamp: float) -> float:
    """An rrweb event's time in epoch milliseconds. rrweb writes milliseconds, but the browser SDK's own
    custom events (``performanceSpan``) carry seconds: a value below 10^11 (1973 in ms) is seconds."""
    return timestamp * 1000.0 if timestamp < 1e11 else float(timestamp)


class BadRecording(ValueError):
    """The segment cannot be read (truncated, corrupt, not rrweb); the message names what is wrong."""


@dataclass(frozen=True)
class Segment:
    encoding: str  # how `stored` is compressed: "zlib" or "gzip"
    stored: bytes
    events: list[dict[str, Any]]


def detect(body: bytes) -> str:
    """``"gzip"``, ``"zlib"`` or ``"json"`` by the first bytes; :class:`BadRecording` for anything else."""
    if body[:2] == b"\x1f\x8b":
        return "gzip"
    if len(body) >= 2 and body[0] & 0x0F == 8 and (body[0] << 8 | body[1]) % 31 == 0:
        return "zlib"
    if body.lstrip()[:1] in (b"[", b"{"):
        return "json"
    raise BadRecording("the recording is neither gzip, zlib nor JSON (first bytes " + body[:4].hex() + ")")


def inflate(body: bytes, encoding: str) -> bytes:
    """The JSON text of a stored or received segment."""
    if encoding == "json":
        return body
    try:
        if encoding == "gzip":
            out = gzip.GzipFile(fileobj=io.BytesIO(body)).read(MAX_RECORDING_BYTES + 1)
        else:
            inflater = zlib.decompressobj()
            out = inflater.decompress(body, MAX_RECORDING_BYTES + 1)
            if not inflater.eof:
                raise BadRecording("the zlib recording is truncated (its stream does not end)")
    except (OSError, EOFError, zlib.error) as exc:
        raise BadRecording(f"the {encoding} recording is truncated or corrupt ({exc})") from None
    if len(out) > MAX_RECORDING_BYTES:
        raise BadRecording(f"the recording inflates past {MAX_RECORDING_BYTES // (1024 * 1024)} MiB")
    return out


def events_of(text: bytes) -> list[dict[str, Any]]:
    """The rrweb events of a segment's JSON text (an array of objects with a numeric ``timestamp``)."""
    try:
        events = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadRecording(f"the recording is not valid JSON ({exc})") from None
    if isinstance(events, dict):  # a single event, as some hand-made clients send
        events = [events]
    if not isinstance(events, list) or not events:
        raise BadRecording("the recording holds no rrweb events (an array of events is expected)")
    for event in events:
        if not isinstance(event, dict) or not isinstance(event.get("timestamp"), int | float):
            raise BadRecording("an rrweb event of the recording has no numeric timestamp")
    return events


def read_segment(body: bytes, rules: ScrubRules = NO_RULES) -> Segment:
    """Decode, check and scrub one received segment (then the project's scrubbing ``rules``, which see it as
    ``recording.<index>…``); the bytes to store come back with it."""
    encoding = detect(body)
    text = inflate(body, encoding)
    events = events_of(text)
    scrubbed = _scrub(events, text)
    if rules.rules:
        ruled = rules.apply({"recording": scrubbed}).get("recording")
        scrubbed = ruled if isinstance(ruled, list) else scrubbed
    if scrubbed is not events:
        return Segment("zlib", zlib.compress(orjson.dumps(scrubbed), 6), scrubbed)
    if encoding == "json":
        return Segment("zlib", zlib.compress(text, 6), events)
    return Segment(encoding, body, events)


def _scrub(events: list[dict[str, Any]], text: bytes) -> list[dict[str, Any]]:
    """What ingest scrubs elsewhere (secrets in any string, card numbers, sensitive keys), on top of the
    SDK's own masking; the same list when nothing changed, so untouched segments keep their bytes."""
    out: Any = scrub_value(events) if card_hint(text) or _SENSITIVE_HINT.search(text) else events
    if secret_hint(text):
        out = redact_everywhere(out)
    return out if isinstance(out, list) else events
