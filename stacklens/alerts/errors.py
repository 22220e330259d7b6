"""Domain errors of alerting (kinds of :mod:`stacklens.errors`): 400 / 404 with the field named."""

from __future__ import annotations

from stacklens.errors import InvalidInput, NotFound


class AlertInputError(InvalidInput):
    """Bad input: ``field`` names the request-body field, the message says what is wrong and what to do."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class AlertNotFound(NotFound):
    """A rule or channel that does not exist in this organization (another organization's looks the same)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
