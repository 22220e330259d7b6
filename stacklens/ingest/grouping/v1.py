"""Grouping v1: which issue an error event belongs to.

Rules, first that applies wins (the rule name is the first component, so two rules never collide):

1. ``fingerprint`` sent by the SDK: its strings, ``{{ default }}`` expanded to what rules 2–4 give.
2. ``exception`` with frames: the raised exception's type + the crash site — the innermost in-app frame,
   as ``<module or file basename>:<function>:<context line>``. Line numbers never take part (they move with
   every edit above the crash), nor do the callers: the same bug reached through two views, a middleware
   chain of any depth or a recursion of any depth is one issue, while the same type raised in two
   functions is two.
3. ``exception`` without frames: type + the value with volatile parts (numbers, hex, UUIDs, e-mails, URLs,
   IPs, dates) replaced.
4. A message: the log template when the SDK kept it (``logentry.message``), else the normalised message.

The version is stored beside each fingerprint. This module is frozen, and so are the blocks it is made of
(:mod:`stacklens.ingest.grouping.blocks`): a change to grouping is a new module (``v2.py``) registered in
:mod:`stacklens.ingest.grouping`, so the issues v1 made keep their fingerprints;
``tests/stacklens/ingest/grouping/test_v1.py`` pins its output for recorded sentry-sdk payloads.
"""

from __future__ import annotations

from typing import Any

from stacklens.ingest.grouping.blocks import (
    DEFAULT_PLACEHOLDERS,
    Grouping,
    collapse_repeats,
    exception_values,
    fingerprint_with,
    frames_of,
    message_template,
    module_or_file_label,
    normalise_message,
    raised_type,
)
from stacklens.ingest.grouping.blocks import crash_site as _crash_site

GROUPING_VERSION = "v1"

__all__ = [
    "DEFAULT_PLACEHOLDERS",
    "GROUPING_VERSION",
    "Grouping",
    "collapse_repeats",
    "crash_site",
    "default_components",
    "exception_values",
    "fingerprint_event",
    "frame_label",
    "frames_of",
    "normalise_message",
]

frame_label = module_or_file_label


def crash_site(frames: list[dict[str, Any]]) -> str | None:
    """The innermost in-app frame (else not marked vendor, else innermost) with its context line."""
    return _crash_site(frames, frame_label)


def default_components(payload: dict[str, Any]) -> list[str]:
    """Rules 2–4 (what ``{{ default }}`` expands to)."""
    chain = exception_values(payload)
    if chain:
        raised = chain[-1]
        # The raised exception's own frames; a re-raise without frames borrows the nearest cause's.
        site = next((crash_site(frames_of(v)) for v in reversed(chain) if frames_of(v)), None)
        if site is not None:
            return ["exception", raised_type(raised), site]
        return ["exception-message", raised_type(raised), normalise_message(str(raised.get("value") or ""))]
    message = message_template(payload)
    if message:
        return ["message", normalise_message(message)]
    return ["empty", str(payload.get("level") or "error")]


def fingerprint_event(payload: dict[str, Any]) -> Grouping:
    """The grouping of one error event (payload as the SDK sent it)."""
    return fingerprint_with(payload, default_components, GROUPING_VERSION)
