"""Grouping v3: v2's rules over the original frames that uploaded source maps give a minified stack.

Ingest uses v3 only for a JavaScript error event that arrives after a map for it was uploaded (its release
and dist, or a debug id of its ``debug_meta``) and whose frames the map resolves. The server then records,
in the stored payload's :data:`GROUPING_FRAMES` field, one entry per frame of the raised exception's stack
(the frames v2 groups by, outermost first): ``null`` where the frame stays as sent, else
``{"filename", "function", "in_app", "context_line"}`` from the map (the original path, the original name of
the enclosing function, else the name as reported, in-app from the original path, the original source
line or ``null``). v3 is v2 applied to the stack with those entries in place of the minified frames, so two
builds with different minification, or a minifier renaming a function, give one fingerprint.

Every other event keeps v2 (:data:`stacklens.ingest.grouping.DEFAULT_VERSION`): an event without a map pays
nothing and keeps its fingerprint. The field travels with the payload, so ``GROUPERS["v3"]`` recomputes a
stored event's fingerprint from the payload alone; on a payload without the field (or one whose entries do
not match its frames) v3 gives v2's fingerprint under the name v3.

Frozen once released, like v1 and v2.
"""

from __future__ import annotations

from typing import Any

from stacklens.ingest.grouping import v2
from stacklens.ingest.grouping.v1 import Grouping, exception_values, frames_of

GROUPING_VERSION = "v3"
GROUPING_FRAMES = "grouping_frames"

__all__ = ["GROUPING_FRAMES", "GROUPING_VERSION", "fingerprint_event", "grouped_frames", "original_payload"]


def _original(frame: dict[str, Any], entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        return frame
    context = entry.get("context_line")
    return {
        **frame,
        # `module` and `symbol` would take precedence in the frame's label: they describe the minified file.
        "module": None,
        "symbol": None,
        "filename": str(entry.get("filename") or ""),
        "abs_path": str(entry.get("filename") or ""),
        "function": str(entry.get("function") or ""),
        "in_app": entry.get("in_app") is True,
        "context_line": context if isinstance(context, str) else None,
    }


def original_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the raised exception's frames replaced by :data:`GROUPING_FRAMES` (a shallow copy;
    the payload itself is left as it is), or ``payload`` when the field is missing or does not fit."""
    entries = payload.get(GROUPING_FRAMES)
    if not isinstance(entries, list):
        return payload
    chain = exception_values(payload)
    for at in range(len(chain) - 1, -1, -1):
        frames = frames_of(chain[at])
        if frames:
            if len(frames) != len(entries):
                return payload
            stack = {
                **chain[at]["stacktrace"],
                "frames": [_original(f, e) for f, e in zip(frames, entries, strict=True)],
            }
            values = [*chain[:at], {**chain[at], "stacktrace": stack}, *chain[at + 1 :]]
            return {**payload, "exception": {"values": values}}
    return payload


def grouped_frames(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The frames v3 groups by, outermost first (the issue's in-app frames and culprit come from these)."""
    return v2.stack_frames(original_payload(payload))


def fingerprint_event(payload: dict[str, Any]) -> Grouping:
    """The grouping of one error event whose payload carries the original frames."""
    grouping = v2.fingerprint_event(original_payload(payload))
    return Grouping(hash=grouping.hash, version=GROUPING_VERSION, components=grouping.components)
