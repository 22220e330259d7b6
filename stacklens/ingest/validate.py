"""One log line → a checked :class:`Line`, or a plain-words error for the batch's ``rejected`` list."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from stacklens.ingest.decode import MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_LINE_BYTES

# Item types the service stores; others (replay_event, session, …) are counted as skipped (DESIGN §4.1).
STORED_TYPES = frozenset({"event", "transaction"})
_TYPE = re.compile(r"^[a-z][a-z_]{0,31}$")


class LineError(ValueError):
    """Why one line was rejected; the message goes to the client as is."""


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, as editors count
    item_type: str
    app_key: str | None
    ts: str | None
    payload: dict[str, Any]
    raw: bytes


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in "[]{}"))


def _depth_ok(text: str) -> bool:
    """Nesting depth at most :data:`MAX_JSON_DEPTH`, checked before any parser recurses into the text.

    Strings are cut out and everything but brackets dropped (all in C); then each round removes the
    innermost ``[]`` / ``{}`` pairs, so a structure of depth d empties in d rounds.
    """
    if _rounds_ok(text.translate(_NOT_BRACKET)):
        # Brackets inside strings can only hide depth the JSON parser then refuses itself (its own
        # recursion limit), so the quick answer is safe; the exact one runs only when it says "too deep".
        return True
    return _rounds_ok(_STRING.sub("", text).translate(_NOT_BRACKET))


def _rounds_ok(brackets: str) -> bool:
    brackets = "".join(c for c in brackets if c in "[]{}") if not brackets.isascii() else brackets
    for _ in range(MAX_JSON_DEPTH):
        reduced = brackets.replace("[]", "").replace("{}", "")
        if reduced == brackets:
            return True  # empty, or unbalanced (the JSON parser reports that)
        brackets = reduced
    return not brackets or brackets.replace("[]", "").replace("{}", "") == brackets


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise LineError(f"a number has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _reject_constant(name: str) -> float:
    raise LineError(f"{name} is not valid JSON")


def parse_line(raw: bytes, number: int) -> Line | None:
    """The checked line, or ``None`` for a blank line; raises :class:`LineError`."""
    if len(raw) > MAX_LINE_BYTES:
        raise LineError(f"the line is {len(raw)} bytes; at most {MAX_LINE_BYTES} are accepted")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LineError(f"the line is not valid UTF-8 (byte {exc.start})") from exc
    if not text.strip():
        return None
    # Cheap pre-check: the brackets can only nest deeper than the limit if there are that many of them.
    if (text.count("{") + text.count("[")) > MAX_JSON_DEPTH and not _depth_ok(text):
        raise LineError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        obj = json.loads(text, parse_int=_bounded_int, parse_constant=_reject_constant)
    except LineError:
        raise
    except (ValueError, RecursionError) as exc:
        raise LineError(f"the line is not valid JSON: {str(exc).splitlines()[0][:200]}") from exc
    return check_fields(obj, number, raw)


def check_fields(obj: Any, number: int, raw: bytes) -> Line:
    if not isinstance(obj, dict):
        raise LineError("the line must be a JSON object")
    version = obj.get("v", 1)
    if version != 1 or isinstance(version, bool):
        raise LineError(f"unsupported line version {version!r}; this service reads version 1")
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
        raise LineError("`payload` must be a JSON object (the Sentry event payload)")
    return Line(number, item_type, app_key, ts, payload if isinstance(payload, dict) else {}, raw)
