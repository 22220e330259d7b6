"""StackLens SDK: sentry-sdk's event capture, written to the daily log files the shipper delivers.

    import stacklens_sdk
    stacklens_sdk.init(app_key="stacklens_app_…", storage_path="/var/log/stacklens", traces_sample_rate=0.2)

The browser tunnel (``stacklens_sdk.tunnel``) lets ``@sentry/browser`` write into the same files.
"""

from __future__ import annotations

from sentry_sdk import (
    add_breadcrumb,
    capture_exception,
    capture_message,
    flush,
    set_context,
    set_extra,
    set_tag,
    set_user,
    start_span,
    start_transaction,
)

from stacklens_contract.words import FILTERED
from stacklens_sdk import tunnel
from stacklens_sdk.client import current, init
from stacklens_sdk.keys import ConfigurationError, is_app_key, service_of


def close(timeout: float | None = None) -> None:
    """Flush pending data and shut the SDK down (sentry-sdk's ``Client.close`` semantics)."""
    import sentry_sdk

    sentry_sdk.get_client().close(timeout=timeout)


__all__ = [
    "FILTERED",
    "ConfigurationError",
    "add_breadcrumb",
    "capture_exception",
    "capture_message",
    "close",
    "current",
    "flush",
    "init",
    "is_app_key",
    "service_of",
    "set_context",
    "set_extra",
    "set_tag",
    "set_user",
    "start_span",
    "start_transaction",
    "tunnel",
]
