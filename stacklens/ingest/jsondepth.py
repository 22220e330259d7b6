"""The one JSON depth guard: nesting is measured on the raw bytes before any parser sees them.

Python's parsers recurse once per level (``json`` raises ``RecursionError`` near 1,000 levels, which a
server turns into a 500 and a reset connection; ``orjson`` stops at 1,024), and so does most code that walks
a parsed value. Every JSON body the service reads — ``/api/ingest`` lines, Sentry envelopes and ``/store/``
events, the JSON API's request bodies, uploaded files — is measured here first and refused with one message
that names the limit.

The measure is exact: brackets inside strings do not count, in either direction (``"]]]"`` can hide no
depth, ``"[[["`` adds none). It costs a few byte-wide C passes (``bytes.replace``/``translate``/``split``) and
a loop over what is left, the structure's brackets alone: a 14 KB Sentry event leaves ~200 of them.
"""

from __future__ import annotations

import json
from typing import Any

from stacklens.errors import InvalidInput

try:  # True in the module Cython compiled (setup.py), False when it runs interpreted
    import cython

    COMPILED: bool = cython.compiled
except ImportError:
    COMPILED = False

# 64 levels: a Sentry event needs about 12 (a frame's variables nest a few more), the API's bodies fewer;
# 64 leaves room for any honest payload while every recursive walker (parsers, scrubber, encoders) stays
# far from Python's 1,000-frame limit.
MAX_JSON_DEPTH = 64

# "{}" count as "[]" (the kind of bracket does not change the depth); every other byte but '"' is deleted.
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")


class JsonTooDeep(InvalidInput):
    """A JSON text nests deeper than the limit (answered 400)."""

    def __init__(self, limit: int = MAX_JSON_DEPTH, where: str = "the JSON") -> None:
        super().__init__(too_deep_message(limit, where))
        self.limit = limit


def too_deep_message(limit: int = MAX_JSON_DEPTH, where: str = "the JSON") -> str:
    """The words every refusal uses: they name the limit."""
    return f"{where} nests deeper than {limit} levels"


def nests_within(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests at most ``limit`` levels deep, strings not counted.

    Text that is not JSON gets an answer too (the parser refuses it afterwards); it never nests deeper for a
    parser than it does here, as a parser stops at the first byte it cannot read.

    Always the exact measure: a count of every bracket, strings included, looked cheaper for the per-line path
    of ``/api/ingest``, but closing brackets inside strings hid real depth from it (``["]",`` repeated 100
    times nests 100 levels and counted 1), so a 100-level line was stored and deeper ones met the parsers' own
    limits with their own words ("maximum recursion depth exceeded").
    """
    if COMPILED:
        return scanned_within(raw, limit)
    return _brackets_within(structure(raw), limit)


def scanned_within(raw: bytes, limit: int) -> bool:
    """The same measure in one pass over the text, strings skipped as a parser skips them: a C loop once
    compiled (three times faster than the passes of :func:`structure` on a 17 KB event, which made the
    guard cost more than parsing the event), far too slow interpreted (a Python step per byte).

    On a text that is not JSON it counts exactly as a parser would up to the first byte that is not JSON,
    and past it no deeper than the structure does; the parser refuses such a text afterwards."""
    depth: cython.Py_ssize_t = 0
    top: cython.Py_ssize_t = limit
    in_string: cython.bint = False
    escaped: cython.bint = False
    char: cython.uchar
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == 92:  # a backslash escapes the next byte, whatever it is
                escaped = True
            elif char == 34:
                in_string = False
        elif char == 34:
            in_string = True
        elif char == 91 or char == 123:  # "[" or "{"
            depth += 1
            if depth > top:
                return False
        elif (char == 93 or char == 125) and depth:  # a closing bracket before any opening: a parser stops
            depth -= 1
    return True


def structure(raw: bytes) -> bytes:
    """The brackets of ``raw`` that lie outside strings, braces written as square brackets."""
    if b'\\"' in raw:  # without a backslash before a quote, every quote opens or closes a string
        # Escapes pair left to right: after the "\\\\" pairs go, every '\\"' left is an escaped quote, and
        # the quotes that remain are exactly the ones that open and close strings.
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = raw.translate(_BRACES_AS_BRACKETS, _NOT_STRUCTURE)
    if b'"' not in marks:
        return marks
    # Most strings hold no bracket: their two quotes are now adjacent. Deleting any two adjacent quotes
    # keeps every other quote's parity (opening or closing), so it changes nothing the split below sees.
    marks = marks.replace(b'""', b"")
    if b'"' not in marks:
        return marks
    return b"".join(marks.split(b'"')[::2])  # even pieces lie outside strings


def _brackets_within(brackets: bytes, limit: int) -> bool:
    if len(brackets) <= limit or brackets.count(b"[") <= limit:
        return True  # cannot open more levels than it has opening brackets
    return counted_within(brackets, limit) if COMPILED else rounds_within(brackets, limit)


def counted_within(brackets: bytes, limit: int) -> bool:
    """One pass counting the depth: a C loop once compiled, slow interpreted."""
    depth = 0
    for char in brackets:
        if char == 91:  # "["
            depth += 1
            if depth > limit:
                return False
        elif depth:
            depth -= 1
    return True


def rounds_within(brackets: bytes, limit: int) -> bool:
    """Interpreted, pair-deleting rounds beat a Python loop: each round is one ``bytes.replace`` in C.

    Each round deletes the innermost "[]" pairs, exactly one level (replace does not rescan what it produced),
    so a structure nested d deep is empty after d rounds. What no round can reduce has no adjacent pair left:
    closing brackets, then opening ones that never close — each of those opens a level a parser enters.
    """
    for done in range(limit + 1):
        reduced = brackets.replace(b"[]", b"")
        if reduced == brackets:
            return done + brackets.count(b"[") <= limit
        brackets = reduced
    return False  # limit + 1 levels deleted


def check_depth(raw: bytes, limit: int = MAX_JSON_DEPTH, where: str = "the JSON") -> None:
    """Raise :class:`JsonTooDeep` when ``raw`` nests deeper than ``limit``."""
    if not nests_within(raw, limit):
        raise JsonTooDeep(limit, where)


def loads(raw: bytes | str, limit: int = MAX_JSON_DEPTH, where: str = "the JSON") -> Any:
    """``json.loads`` behind the guard: :class:`JsonTooDeep` for a text too deep, ``ValueError`` (as
    ``json.loads`` raises it) for one that is not JSON."""
    check_depth(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw, limit, where)
    return json.loads(raw)
