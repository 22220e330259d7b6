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

from stacklens_contract.secret_shapes import (
    SECRET_MARKERS,
    escapes_ascii,
    redact_secrets,
    redactor_with,
)

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
    b"stacklens_pat_",  # agent tokens (personal, OAuth access and refresh): long prefixes, cheap to look for
    b"stacklens_oat_",
    b"stacklens_ort_",
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
    """Whether any of ``markers`` (two bytes long at least) occurs in ``raw`` (:func:`_scan`, stopping at the
    first: a substring search per marker took 70 µs on a 17 KB event, as long as parsing it)."""
    if not COMPILED:
        return any(marker in raw for marker in markers)
    return bool(_scan(raw, markers, False))


_MARKERS_RAW = tuple(marker.encode() for marker in SECRET_MARKERS)


def redact_line(value: Any, raw: bytes | None) -> Any:
    """:func:`redact_everywhere` for a value read from the raw JSON line ``raw``: only the markers ``raw``
    holds are searched for (as :func:`~stacklens_contract.secret_shapes.redactor_for` does), found in one
    pass (:func:`markers_in`: 20 µs on a 17 KB event against 95 µs of a substring search per marker), and
    a string holding none of them (nor a URL's "@" and "://") is passed over in C without a call. Seven in
    ten events of an SDK that puts its key in ``sys.argv`` are walked."""
    if raw is None or escapes_ascii(raw):
        return redact_everywhere(value)
    markers = tuple(SECRET_MARKERS[j] for j in markers_in(raw, _MARKERS_RAW))
    return redact_everywhere(value, redact=redactor_with(markers), needles=markers)


def markers_in(raw: bytes, markers: tuple[bytes, ...]) -> tuple[int, ...]:
    """The indexes of ``markers`` (two bytes long at least) found in ``raw``, in order (:func:`_scan`)."""
    if not COMPILED:
        return tuple(j for j, marker in enumerate(markers) if marker in raw)
    return _scan(raw, markers, True)


def _scan(raw: bytes, markers: tuple[bytes, ...], every: bool) -> tuple[int, ...]:
    """Compiled: the indexes of ``markers`` found in ``raw`` in one pass in C — all of them with ``every``,
    else the first found. A position is compared with the markers only where its byte starts one (256
    flags) and its two bytes do too (65,536 flags, read only there), and a whole marker only where its first
    three bytes (two for a two-byte marker) agree."""
    count: cython.Py_ssize_t = len(markers)
    first_bytes, first_pairs, three = _marker_tables(markers)  # held here: the pointers below are into them
    starts: cython.p_uchar = first_bytes
    pairs: cython.p_uchar = first_pairs
    heads: cython.p_uchar = three
    size: cython.Py_ssize_t = len(raw)
    found = bytearray(count) if every else None
    left: cython.Py_ssize_t = count
    i: cython.Py_ssize_t
    j: cython.Py_ssize_t
    byte: cython.uchar
    for i in range(size - 1):
        byte = raw[i]
        if not starts[byte] or not pairs[(byte << 8) | raw[i + 1]]:
            continue
        for j in range(count):
            if (
                heads[3 * j] == byte
                and heads[3 * j + 1] == raw[i + 1]
                and (heads[3 * j + 2] == 0 or (i + 2 < size and heads[3 * j + 2] == raw[i + 2]))
                and raw.startswith(markers[j], i)
            ):
                if found is None:
                    return (j,)
                if not found[j]:
                    found[j] = 1
                    left -= 1
        if left == 0:
            break
    return () if found is None else tuple(j for j in range(count) if found[j])


# Built once per tuple of markers rather than for every line: the service passes three tuples; a caller
# passing tuples of its own keeps only the last few.
@lru_cache(maxsize=16)
def _marker_tables(markers: tuple[bytes, ...]) -> tuple[bytes, bytes, bytes]:
    """Which bytes start a marker (256 flags), which pairs of bytes do (65,536 flags, ``(first << 8) |
    second``) and each marker's first three bytes in order (a two-byte marker's third is 0)."""
    starts = bytearray(256)
    pairs = bytearray(65_536)
    three = bytearray()
    for marker in markers:
        starts[marker[0]] = 1
        pairs[(marker[0] << 8) | marker[1]] = 1
        three += marker[:3].ljust(3, b"\0")
    return bytes(starts), bytes(pairs), bytes(three)


def redact_everywhere(
    value: Any,
    depth: int = 0,
    redact: Callable[[str], str] = redact_secrets,
    needles: tuple[str, ...] | None = None,
) -> Any:
    """Every string of a JSON value with secrets redacted (keys too) by ``redact`` (for a value read from a
    raw line, :func:`redact_line`); copy-on-write like :func:`scrub_value`. With ``needles`` (the markers
    ``redact`` searches for), a string holding none of them and no URL is left without calling it."""
    kind = type(value)
    if kind is str:
        return redact(value) if _may_hold(value, needles) else value
    if depth > _MAX_DEPTH:
        return value
    if kind is dict:
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            new_key = redact(key) if type(key) is str and _may_hold(key, needles) else key
            new = redact_everywhere(item, depth + 1, redact, needles)
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
            new = redact_everywhere(item, depth + 1, redact, needles)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value


def _may_hold(text: str, needles: tuple[str, ...] | None) -> bool:
    """Whether ``redact`` could change ``text``: it holds one of ``needles`` (None: any may be there) or a
    URL's "@" and "://" (URL passwords are looked for in every string)."""
    if needles is None:
        return True
    for needle in needles:
        if needle in text:
            return True
    return "@" in text and "://" in text
