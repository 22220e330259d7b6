"""The control store's one user-facing error type."""

from __future__ import annotations


class AccountError(ValueError):
    """Bad input or a missing/duplicate record; the message is one plain line for people."""
