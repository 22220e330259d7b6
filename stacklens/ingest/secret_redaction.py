"""Secret shapes in event strings at ingest: which raw lines may hold one, and every string of those redacted.

The shapes and their redaction are the contract's (:mod:`stacklens_contract.secret_shapes`, which the SDK
applies before an event leaves the application); this module adds what the service needs per line. Each
shape starts with a fixed marker, so one substring search per marker over the raw line decides whether any
string of the event can hold one (nearly never), and only then is every string looked at
(:mod:`stacklens.ingest.scrub` drives this per line)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from stacklens_contract.secret_shapes import redact_secrets
from stacklens_contract.secret_shapes import redactor_for as redactor_for  # re-exported: scrub walks with it

try:  # True in the module Cython compiled (setup.py), False when it runs interpreted
    import cython

    COMPILED: bool = cython.compiled
except ImportError:
    COMPILED = False

# Deeper values are left as they are (lines are capped at the ingest limit, and so is their depth).
_MAX_DEPTH = 64

# Raw-line check, the cost every line pays: a substring search costs about its line length divided by the
# needle's length, so it holds the long prefixes and only the three short ones that leak most (AWS access
# keys, GitHub personal tokens, Slack tokens): about four card hints on a 12 KB browser line (measured). The
# rarer short shapes (ASIA, AIza, gho_/ghs_/ghu_/ghr_, glpat-, JWTs whose header does not start with "alg" or
# "typ") are filtered when the line has any marker, and always by the SDK.
_OWN_KEY_MARKER = b"stacklens_ap"  # first below: a line's own key is counted apart (secret_hint)
_SECRET_MARKERS_RAW = (
    _OWN_KEY_MARKER,
    b"PRIVATE KEY",
    b"eyJhbGci",  # a JWT's header, {"alg": …} or {"typ": …} in base64
    b"eyJ0eXAi",
    b"k_live_",
    b"github_pat_",
    b"AKIA",
    b"ghp_",
    b"xox",
)
_OTHER_MARKERS_RAW = _SECRET_MARKERS_RAW[1:]  # a line whose own key is its only marker-bearing text
# URLs fill browser events, so "://" alone says little: on the raw line a search that starts at each "://"
# (the expression begins with that literal, so the engine jumps between occurrences) decides.
_URL_PASSWORD_RAW = re.compile(rb"://[^\s/:@\"']+:[^\s/@\"']+@")


def secret_hint(raw: bytes, line_key: str | None = None) -> bool:
    """Whether the raw JSON text may hold a secret shape: substring searches, and for URL passwords one
    search anchored on "://" when the line holds an "@" at all.

    ``line_key``: the app key of the line's envelope (its ``app_key`` field, read by the service and never
    stored). Every line an SDK writes or an envelope becomes carries one, so its single occurrence is no
    hint — counted as one, every line paid the walk over all its strings (1,100 of a typical event); any
    other occurrence (the same key in ``sys.argv``, a key in a variable) still is."""
    markers: tuple[bytes, ...] = _SECRET_MARKERS_RAW
    if line_key is not None and line_key.startswith("stacklens_ap"):
        if raw.count(_OWN_KEY_MARKER) > 1:
            return True
        markers = _OTHER_MARKERS_RAW
    if holds_marker(raw, markers):
        return True
    return b"@" in raw and b"://" in raw and _URL_PASSWORD_RAW.search(raw) is not None


def holds_marker(raw: bytes, markers: tuple[bytes, ...]) -> bool:
    """Whether any of ``markers`` (three bytes long at least) occurs in ``raw``: once compiled, one pass in C
    that compares a position with the markers only where its byte starts one, and a whole marker only where
    three bytes agree (a substring search per marker took 70 µs on a 17 KB event, as long as parsing it);
    interpreted, a substring search per marker."""
    if not COMPILED:
        return any(marker in raw for marker in markers)
    starts, three = _marker_tables(markers)
    first: cython.p_uchar = starts
    heads: cython.p_uchar = three
    end: cython.Py_ssize_t = len(raw) - 2
    count: cython.Py_ssize_t = len(markers)
    i: cython.Py_ssize_t
    j: cython.Py_ssize_t
    byte: cython.uchar
    for i in range(end):
        byte = raw[i]
        if not first[byte]:
            continue
        for j in range(count):
            if (
                heads[3 * j] == byte
                and heads[3 * j + 1] == raw[i + 1]
                and heads[3 * j + 2] == raw[i + 2]
                and raw.startswith(markers[j], i)
            ):
                return True
    return False


# Built once per tuple of markers rather than for every line: the service passes two tuples; a caller passing
# tuples of its own keeps only the last few.
@lru_cache(maxsize=16)
def _marker_tables(markers: tuple[bytes, ...]) -> tuple[bytes, bytes]:
    """Which bytes start a marker (256 flags) and each marker's first three bytes, in order."""
    starts = bytearray(256)
    three = bytearray()
    for marker in markers:
        starts[marker[0]] = 1
        three += marker[:3]
    return bytes(starts), bytes(three)


def redact_everywhere(value: Any, depth: int = 0, redact: Callable[[str], str] = redact_secrets) -> Any:
    """Every string of a JSON value with secrets redacted (keys too) by ``redact`` (for a value read from a
    raw line, :func:`~stacklens_contract.secret_shapes.redactor_for` it: only the markers the line holds are
    searched for); copy-on-write like :func:`scrub_value`."""
    kind = type(value)
    if kind is str:
        return redact(value)
    if depth > _MAX_DEPTH:
        return value
    if kind is dict:
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            new_key = redact(key) if type(key) is str else key
            new = redact_everywhere(item, depth + 1, redact)
            if new is not item or new_key is not key:
                if out is None:
                    out = dict(value)
                if new_key is not key:
                    del out[key]
                out[new_key] = new
        return value if out is None else out
    if kind is list:
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = redact_everywhere(item, depth + 1, redact)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value
