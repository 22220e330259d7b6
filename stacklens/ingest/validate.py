"""One log line → a checked :class:`Line`, or a plain-words error for the batch's ``rejected`` list."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

from stacklens.ingest.decode import MAX_INT_DIGITS, MAX_LINE_BYTES
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, nests_within

# Item types the service stores; others (client_report, …) are counted as skipped (docs/architecture.md
# §11.1).
STORED_TYPES = frozenset(
    {"event", "transaction", "replay_event", "replay_recording", "session", "sessions", "log"}
)
REPLAY_TYPES = frozenset({"replay_event", "replay_recording"})
_TYPE = re.compile(r"^[a-z][a-z_]{0,31}$")


class LineError(ValueError):
    """Why one line was rejected; the message goes to the client as is."""


class LineTooLarge(LineError):
    """The line is over :data:`MAX_LINE_BYTES` (its outcome is ``too_large``, not ``invalid``)."""


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, as editors count
    item_type: str
    app_key: str | None
    ts: str | None
    payload: dict[str, Any]
    raw: bytes
    # The line's digit shape (see SHAPE): the long-number check and the card search share one pass over it.
    shape: bytes = b""


# The digit shape of a line: every ASCII digit → "0", space and dash → "-", any other byte → "x" (one
# bytes.translate, memory speed). orjson reads integers exactly only within 64 bits (signed or unsigned) and
# turns larger ones into floats silently: such a number is a run of at least 20 "0" (19 after a minus sign).
# Lines with such a run take the standard-library parser, whose hooks keep every number exactly (as text
# where no 64-bit type holds it); a regex would take ~250 µs a line. The scrubber's card search reads the
# same shape.
SHAPE = bytes(ord("0") if 48 <= b <= 57 else ord("-") if b in b" -" else ord("x") for b in range(256))
_LONG_RUN = b"0" * 20
_LONG_NEGATIVE_RUN = b"-" + b"0" * 19
_INT_MIN, _UINT_MAX = -(2**63), 2**64 - 1
# A UTF-8 byte order mark: Windows editors and some loggers start a file with one. It belongs to no line.
_BOM = b"\xef\xbb\xbf"


def _exact_int(text: str) -> int | str:
    """An integer a 64-bit column can hold, else its text as written (never a float that changed it).

    Over :data:`MAX_INT_DIGITS` digits it is text without ``int()``, whose cost grows with the digits."""
    if len(text) > MAX_INT_DIGITS + 1:
        return text
    number = int(text)
    return number if _INT_MIN <= number <= _UINT_MAX else text


def _exact_float(text: str) -> float | str:
    """A float, or its text when no double holds it (``1e400`` would otherwise become null)."""
    number = float(text)
    return number if math.isfinite(number) else text


def _reject_constant(name: str) -> float:
    raise LineError(f"{name} is not valid JSON")


def _strict_loads(text: str) -> Any:
    """The standard-library parser with the int and NaN hooks: exact messages for the rare bad line.

    It also accepts lone surrogate escapes (``"\\ud800"``, e.g. a JavaScript string cut between the two
    halves of an emoji), which no UTF-8 writer can store: those become ``?``, so every later step (orjson,
    the warehouse) sees valid text and the event is kept.
    """
    try:
        obj = json.loads(
            text, parse_int=_exact_int, parse_float=_exact_float, parse_constant=_reject_constant
        )
    except LineError:
        raise
    except (ValueError, RecursionError) as exc:
        raise LineError(f"the line is not valid JSON: {str(exc).splitlines()[0][:200]}") from exc
    try:
        orjson.dumps(obj)
    except orjson.JSONEncodeError:
        obj = orjson.loads(json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace"))
    return obj


def parse_line(raw: bytes, number: int) -> Line | None:
    """The checked line, or ``None`` for a blank line; raises :class:`LineError`."""
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    if len(raw) > MAX_LINE_BYTES:
        raise LineTooLarge(f"the line is {len(raw)} bytes; at most {MAX_LINE_BYTES} are accepted")
    if not raw or raw.isspace():
        return None
    # Bounded before parsing (Python parsers recurse per level), brackets inside strings not counted: the line
    # alone is refused, its batch's other lines are kept.
    if not nests_within(raw, MAX_JSON_DEPTH):
        raise LineError(
            f"the line is nested deeper than {MAX_JSON_DEPTH} levels (brackets inside strings not counted)"
        )
    shape = raw.translate(SHAPE)
    if _LONG_RUN in shape or _LONG_NEGATIVE_RUN in shape:
        # Long digit runs are mostly inside strings; the hooks see numbers only.
        obj = _strict_loads(_text(raw))
    else:
        try:
            obj = orjson.loads(raw)  # also checks the UTF-8
        except orjson.JSONDecodeError:
            # orjson's messages name no token ("unexpected character"); the strict parser's do ("NaN").
            # A line only the standard library accepts (a lone surrogate escape, a number beyond a double
            # such as 1e400) is read with it.
            obj = _strict_loads(_text(raw))
    return check_fields(obj, number, raw, shape)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LineError(f"the line is not valid UTF-8 (byte {exc.start})") from exc


def check_fields(obj: Any, number: int, raw: bytes, shape: bytes = b"") -> Line:
    """The envelope fields of docs/architecture.md §11.1 (``v``, ``type``, ``app_key``, ``ts``, ``payload``),
    type-checked."""
    if not isinstance(obj, dict):
        raise LineError("the line must be a JSON object")
    version = obj.get("v", 1)
    if not (isinstance(version, int) and not isinstance(version, bool) and version == 1):
        raise LineError(_version_problem(version))
    item_type = obj.get("type")
    if not isinstance(item_type, str) or not _TYPE.match(item_type):
        raise LineError('`type` must be a Sentry item type such as "event" or "transaction"')
    app_key = obj.get("app_key")
    if app_key is not None and not isinstance(app_key, str):
        raise LineError("`app_key` must be a string")
    ts = obj.get("ts")
    if ts is not None and not isinstance(ts, str):
        raise LineError("`ts` must be an ISO 8601 string")
    payload = obj.get("payload")
    if item_type in STORED_TYPES and not isinstance(payload, dict):
        raise LineError(f"`payload` must be a JSON object (the Sentry {item_type} payload)")
    return Line(number, item_type, app_key, ts, payload if isinstance(payload, dict) else {}, raw, shape)


def _version_problem(version: Any) -> str:
    """Why ``v`` is refused, with the value spelled as JSON (``true``, ``null``, ``"1"``), not Python."""
    if isinstance(version, int | float) and not isinstance(version, bool):
        return f"unsupported line version {_json_text(version)}; this service reads version 1"
    kind = "text" if isinstance(version, str) else "value"
    return f"`v` must be the number 1, not the {kind} {_json_text(version)}"


def _json_text(value: Any) -> str:
    text = orjson.dumps(value).decode() if not isinstance(value, int) or abs(value) < 2**63 else str(value)
    return text if len(text) <= 40 else text[:37] + "..."
