"""Domain errors of alerting; the API and the pages map them to 400 / 404 with the field named."""

from __future__ import annotations


class AlertInputError(ValueError):
    """Bad input: ``field`` names the request-body field, the message says what is wrong and what to do."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class AlertNotFound(LookupError):
    """A rule or channel that does not exist in this organization (another organization's looks the same)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
