"""Secret shapes, written once: keys, tokens and private keys that no event string may show, and their
redaction.

StackLens keys (``stacklens_api_…``, ``stacklens_app_…``; sentry-sdk's ``sys.argv`` extra carries
``--app-key stacklens_app_…``), StackLens agent tokens (personal ``stacklens_pat_…``, OAuth access
``stacklens_oat_…`` and refresh ``stacklens_ort_…``), cloud and forge tokens, JWTs, private keys and URL
passwords can reach any string of an event (a log message, a local variable). The SDK redacts them before
an event leaves the application (``stacklens_sdk/scrubbing.py``) and the service again at ingest
(``stacklens/ingest/secret_redaction.py``), for events that did not come through the SDK: both use these
definitions."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from stacklens_contract.words import FILTERED

# Each shape of SECRET_RE begins with one of these fixed strings: a text holding none of them is left alone
# without running the expression.
SECRET_MARKERS = (
    "stacklens_ap",  # stacklens_api_ and stacklens_app_
    "stacklens_pat_",  # agent tokens: personal, OAuth access and refresh (stacklens/agents/tokens.py)
    "stacklens_oat_",
    "stacklens_ort_",
    "PRIVATE KEY",
    "eyJ",  # a JWT's header and payload, {"…": in base64
    "k_live_",
    "github_pat_",
    "glpat-",
    "AKIA",
    "ASIA",
    "AIza",
    "gh",
    "xox",
)
SECRET_RE = re.compile(
    r"stacklens_(?:api|app|pat|oat|ort)_[A-Za-z0-9_-]{8,}"
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
URL_PASSWORD_RE = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@\"']+:)[^\s/@\"']+(?=@)")


def redactor_for(raw: bytes | None) -> Callable[[str], str]:
    """:func:`redact_secrets` for the strings of one JSON text ``raw``: a string can hold a marker only where
    the whole text does, so only the markers ``raw`` holds are searched for (usually one: a key). A text that
    escapes a printable ASCII character (``\\u0041``) may spell a marker the raw bytes do not show, and a
    value without its text (``None``) may hold any: every marker is searched for then."""
    if raw is None or escapes_ascii(raw):
        return redact_secrets
    return redactor_with(tuple(m for m in SECRET_MARKERS if m.encode() in raw))


def redactor_with(markers: tuple[str, ...]) -> Callable[[str], str]:
    """:func:`redact_secrets` for strings that can hold only ``markers`` (of :data:`SECRET_MARKERS`): what
    :func:`redactor_for` returns once it knows which markers a text holds (the service finds them in one
    pass of its own)."""
    return functools.partial(_redact, _finder(markers))


def escapes_ascii(raw: bytes) -> bool:
    """Whether the JSON text ``raw`` escapes a printable ASCII character (``\\u0041``), which could spell a
    marker its bytes do not show."""
    return _ASCII_ESCAPE_RE.search(raw) is not None


def redact_secrets(text: str) -> str:
    """``text`` with every secret shape (:data:`SECRET_RE`) and URL password replaced by ``[FILTERED]``."""
    return _redact(_EVERY_MARKER, text)


def _redact(finder: re.Pattern[str] | None, text: str) -> str:
    # The markers are one expression: a string is searched once, in C, instead of once per marker (an event
    # whose raw line holds a key has each of its ~1,100 strings looked at).
    if finder is not None and finder.search(text) is not None:
        text = SECRET_RE.sub(FILTERED, text)
    if "@" in text and "://" in text:
        text = URL_PASSWORD_RE.sub(_password_filtered, text)
    return text


_ASCII_ESCAPE_RE = re.compile(rb"\\u00[2-7][0-9A-Fa-f]")


@functools.lru_cache(maxsize=256)
def _finder(markers: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(re.escape(marker) for marker in markers)) if markers else None


_EVERY_MARKER = _finder(SECRET_MARKERS)


def _password_filtered(match: re.Match[str]) -> str:
    return match.group("head") + FILTERED
