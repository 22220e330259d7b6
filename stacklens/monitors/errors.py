"""Domain errors of monitors (kinds of :mod:`stacklens.errors`): 400 naming the field, 404."""

from __future__ import annotations

from stacklens.errors import InvalidInput, NotFound


class MonitorInputError(InvalidInput):
    """Bad input: ``field`` names the body field (``schedule``, ``timezone``, ``checkin_margin`` …); the
    message says what is wrong and what to write instead."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class MonitorNotFound(NotFound):
    """No monitor of that slug in the project (another organization's looks the same)."""
