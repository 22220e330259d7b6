"""Opaque page cursors: one codec for every list that pages (issues, an issue's events, projects, activity).

A cursor is the position after the last row of a page, as URL-safe base64 of a compact JSON array, so it can
travel in a query string unescaped. It is opaque to clients, not secret: :func:`decode_cursor` checks its
shape and types, and every query binds its parts as parameters, so a forged cursor can only move the page.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.ingest import jsondepth

# What a cursor part may be (bool is not an int here: JSON true/false is never a position).
Part = str | int | float


class InvalidCursor(InvalidInput):
    """A cursor this server did not hand out for this list."""

    def __init__(self) -> None:
        super().__init__(
            "invalid cursor; pass the next_cursor of the previous page, or none for the first page"
        )


def encode_cursor(*parts: Part) -> str:
    """The cursor of a position given as its parts (sort value, tie-breaking id, ...)."""
    raw = json.dumps(list(parts), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *kinds: type[Part]) -> tuple[Any, ...]:
    """The parts of ``cursor``, one per kind (``int``, ``float`` — an int is accepted — or ``str``), else
    :class:`InvalidCursor`."""
    try:
        parts = jsondepth.loads(base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidCursor() from None
    if not isinstance(parts, list) or len(parts) != len(kinds):
        raise InvalidCursor()
    for part, kind in zip(parts, kinds, strict=True):
        accepted = (int, float) if kind is float else (kind,)
        if isinstance(part, bool) or not isinstance(part, accepted):
            raise InvalidCursor()
    return tuple(parts)
