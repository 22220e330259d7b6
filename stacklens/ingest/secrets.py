"""Secret shapes in event strings: keys, tokens and private keys that must never be shown, to ``[FILTERED]``.

StackLens keys (``stacklens_api_…``, ``stacklens_app_…``) and other common secret shapes can reach any string
of an event (``sys.argv``, a log message, a local variable). Each shape starts with a fixed marker, so one
substring search per marker over the raw line decides whether any string of the event can hold one (nearly
never), and only then is every string looked at (:mod:`stacklens.ingest.scrub` drives this per line).
"""

from __future__ import annotations

import re
from typing import Any

from stacklens_contract.words import FILTERED

# Deeper values are left as they are (lines are capped at the ingest limit, and so is their depth).
_MAX_DEPTH = 64

_SECRET_MARKERS = (
    "stacklens_ap",  # stacklens_api_ and stacklens_app_
    "PRIVATE KEY",
    "eyJhbGci",  # a JWT's header, {"alg": …} or {"typ": …} in base64
    "eyJ0eXAi",
    "k_live_",
    "github_pat_",
    "glpat-",
    "AKIA",
    "ASIA",
    "AIza",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "ghr_",
    "xox",
)
# Raw-line check, the cost every line pays: a substring search costs about its line length divided by the
# needle's length, so it holds the long prefixes and only the three short ones that leak most (AWS access
# keys, GitHub personal tokens, Slack tokens): about four card hints on a 12 KB browser line (measured). The
# rarer short shapes (ASIA, AIza,
# gho_/ghs_/ghu_/ghr_, glpat-) are filtered when the line has any marker, and always by the SDK.
_SECRET_MARKERS_RAW = (
    b"stacklens_ap",
    b"PRIVATE KEY",
    b"eyJhbGci",
    b"eyJ0eXAi",
    b"k_live_",
    b"github_pat_",
    b"AKIA",
    b"ghp_",
    b"xox",
)
_SECRET_RE = re.compile(
    r"stacklens_(?:api|app)_[A-Za-z0-9_-]{8,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"
    r"|\bxox[abposre]-[A-Za-z0-9-]{10,}"
    r"|\b[sr]k_live_[A-Za-z0-9]{16,}"
    r"|\bglpat-[A-Za-z0-9_-]{20,}"
    r"|\bAIza[0-9A-Za-z_-]{35}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.|\n)*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
)
# scheme://user:password@host — only the password goes.
_URL_PASSWORD_RE = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@\"']+:)[^\s/@\"']+(?=@)")
# URLs fill browser events, so "://" alone says little: on the raw line a search that starts at each "://"
# (the expression begins with that literal, so the engine jumps between occurrences) decides.
_URL_PASSWORD_RAW = re.compile(rb"://[^\s/:@\"']+:[^\s/@\"']+@")


def secret_hint(raw: bytes) -> bool:
    """Whether the raw JSON text may hold a secret shape: substring searches, and for URL passwords one
    search anchored on "://" when the line holds an "@" at all."""
    if any(marker in raw for marker in _SECRET_MARKERS_RAW):
        return True
    return b"@" in raw and b"://" in raw and _URL_PASSWORD_RAW.search(raw) is not None


def redact_secrets(text: str) -> str:
    """``text`` with every secret shape (see :data:`_SECRET_RE`) and URL password replaced by the marker."""
    if any(marker in text for marker in _SECRET_MARKERS):
        text = _SECRET_RE.sub(FILTERED, text)
    if "@" in text and "://" in text:
        text = _URL_PASSWORD_RE.sub(lambda m: m.group("head") + FILTERED, text)
    return text


def redact_everywhere(value: Any, depth: int = 0) -> Any:
    """Every string of a JSON value with secrets redacted (keys too); copy-on-write like :func:`scrub_value`."""
    kind = type(value)
    if kind is str:
        return redact_secrets(value)
    if depth > _MAX_DEPTH:
        return value
    if kind is dict:
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            new_key = redact_secrets(key) if type(key) is str else key
            new = redact_everywhere(item, depth + 1)
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
            new = redact_everywhere(item, depth + 1)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value
