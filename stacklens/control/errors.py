"""The control store's one user-facing error type."""

from __future__ import annotations

from stacklens.errors import StackLensError


class AccountError(StackLensError, ValueError):
    """Bad input or a missing/duplicate record; the message is one plain line for people."""
