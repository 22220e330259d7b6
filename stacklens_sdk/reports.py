"""Client reports: the record of what the SDK could not write, as a ``client_report`` log line.

The transport (items captured in the application) and the tunnel (envelopes posted by browsers) both count
the items they drop by (data category, reason), the way sentry-sdk counts them, and write the counts in
sentry-sdk's ``client_report`` shape, so the loss is visible downstream whichever path lost it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping

from sentry_sdk.envelope import Item

from stacklens_sdk.items import lost_quantities
from stacklens_sdk.logfile import LineTooLarge, LogWriter, WriteFailed

# sentry-sdk's discard reasons for what the file path can lose.
REASON_TOO_LARGE = "buffer_overflow"  # the line is over the size limit
REASON_WRITE_FAILED = "send_error"  # the log directory cannot be written
REASON_UNSUPPORTED = "internal_sdk_error"  # an item type the files do not keep, or an unreadable item

Discarded = MutableMapping[tuple[str, str], int]


def count_lost(discarded: Discarded, item: Item, reason: str) -> None:
    """Add ``item``'s loss to ``discarded`` (a transaction counts itself and its spans)."""
    for category, quantity in lost_quantities(item):
        discarded[(category, reason)] = discarded.get((category, reason), 0) + quantity


def client_report(discarded: Mapping[tuple[str, str], int], now: float | None = None) -> dict[str, object]:
    """The ``client_report`` payload of ``discarded`` counts."""
    return {
        "timestamp": time.time() if now is None else now,
        "discarded_events": [
            {"reason": reason, "category": category, "quantity": quantity}
            for (category, reason), quantity in discarded.items()
        ],
    }


def write_client_report(writer: LogWriter, app_key: str, discarded: Mapping[tuple[str, str], int]) -> bool:
    """Write one ``client_report`` line of ``discarded``; ``False`` when it could not be written, so the
    caller can keep the counts for a later attempt. Nothing to report writes nothing."""
    if not discarded:
        return True
    try:
        writer.write("client_report", app_key, client_report(discarded))
    except (LineTooLarge, WriteFailed):
        return False
    return True
