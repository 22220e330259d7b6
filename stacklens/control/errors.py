"""The control store's user-facing errors: bad input, and records that do not exist (for the caller)."""

from __future__ import annotations

from stacklens.errors import InvalidInput, NotFound


class AccountError(InvalidInput):
    """Bad input or a duplicate record; the message is one plain line for people."""


class AccountNotFound(AccountError, NotFound):
    """The organization, project, member or key does not exist, or not in the caller's organization."""
