"""sentry-sdk transport that appends envelope items to the daily log file instead of sending them.

Each item becomes one log line, written synchronously from ``capture_envelope``: a local append costs a few
microseconds, so there is no queue to lose on a crash or to drain at exit, and ``flush()``/``close()`` find
nothing pending beyond the client report. Items that cannot be written (line over the limit, disk full) are
counted with ``record_lost_event`` and reported in a ``client_report`` line, the way sentry-sdk reports loss.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from sentry_sdk.envelope import Envelope, Item
from sentry_sdk.transport import Transport

from stacklens_sdk.items import WRITTEN_TYPES, UnreadableItem, item_payload
from stacklens_sdk.logfile import LineTooLarge, LogWriter, WriteFailed
from stacklens_sdk.reports import (
    REASON_TOO_LARGE,
    REASON_UNSUPPORTED,
    REASON_WRITE_FAILED,
    count_lost,
    write_client_report,
)
from stacklens_sdk.scrubbing import redact_everywhere

logger = logging.getLogger(__name__)

# sentry-sdk sends a pending client report at most once a minute, and always on flush/close.
CLIENT_REPORT_INTERVAL = 60.0


class FileTransport(Transport):
    """Writes every supported envelope item as one log line of ``writer``'s directory."""

    def __init__(
        self,
        app_key: str,
        writer: LogWriter,
        *,
        send_client_reports: bool = True,
        options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(options)
        self.app_key = app_key
        self.writer = writer
        self.send_client_reports = send_client_reports
        self._discarded: defaultdict[tuple[str, str], int] = defaultdict(int)
        self._discarded_lock = threading.Lock()
        self._last_report = time.time()
        self.lines_written = 0

    def capture_envelope(self, envelope: Envelope) -> None:
        """Write each item of ``envelope`` as a log line; never raises into the application."""
        for item in envelope.items:
            try:
                self._write_item(item, envelope.headers)
            except Exception:  # an SDK failure must never break the application
                logger.debug("Could not write a %s item", item.type, exc_info=True)
                self.record_lost_event(REASON_UNSUPPORTED, item=item)
        self._write_client_report(force=False)

    def _write_item(self, item: Item, headers: Any) -> None:
        if item.type not in WRITTEN_TYPES:
            self.record_lost_event(REASON_UNSUPPORTED, item=item)
            return
        try:
            if item.type == "log":
                self._write_log_records(item, headers)
                return
            self.writer.write(item.type or "event", self.app_key, item_payload(item, headers))
        except LineTooLarge as exc:
            logger.warning("Dropped a %s: %s", item.type, exc)
            self.record_lost_event(REASON_TOO_LARGE, item=item)
        except WriteFailed:
            # Already reported once by the writer; count each loss.
            self.record_lost_event(REASON_WRITE_FAILED, item=item)
        except UnreadableItem as exc:
            logger.debug("Dropped a %s: %s", item.type, exc)
            self.record_lost_event(REASON_UNSUPPORTED, item=item)
        else:
            self.lines_written += 1

    def _write_log_records(self, item: Item, headers: Any) -> None:
        """A ``log`` item holds a batch of records (``{"items": [...]}``, sentry-python's ``enable_logs``);
        each record becomes a line of its own, as the service stores one row per record: a line too large
        then costs one record, not the batch. Secret shapes in a record's body and attributes are filtered
        as in an event's strings (log records do not pass the event scrubber)."""
        records = item_payload(item, headers).get("items")
        if not isinstance(records, list):
            raise UnreadableItem("log item has no list of items")
        for record in records:
            if not isinstance(record, dict):
                self.record_lost_event(REASON_UNSUPPORTED, data_category="log_item")
                continue
            try:
                self.writer.write("log", self.app_key, redact_everywhere(record))
            except LineTooLarge as exc:
                logger.warning("Dropped a log record: %s", exc)
                self.record_lost_event(REASON_TOO_LARGE, data_category="log_item")
            else:
                self.lines_written += 1

    def record_lost_event(
        self,
        reason: str,
        data_category: str | None = None,
        item: Item | None = None,
        *,
        quantity: int = 1,
    ) -> None:
        """Count a dropped item the way sentry-sdk's HTTP transport does (item → its category and spans)."""
        if not self.send_client_reports:
            return
        if item is None and data_category is None:
            raise TypeError("data category not provided")
        with self._discarded_lock:
            if item is not None:
                count_lost(self._discarded, item, reason)
            else:
                self._discarded[(str(data_category), reason)] += quantity

    def pending_lost_events(self) -> dict[tuple[str, str], int]:
        """Losses counted since the last client report, keyed by (data category, reason)."""
        with self._discarded_lock:
            return dict(self._discarded)

    def _write_client_report(self, force: bool) -> None:
        if not self.send_client_reports:
            return
        with self._discarded_lock:
            if not self._discarded or not (
                force or time.time() - self._last_report >= CLIENT_REPORT_INTERVAL
            ):
                return
            discarded, self._discarded = self._discarded, defaultdict(int)
            self._last_report = time.time()
        if not write_client_report(self.writer, self.app_key, discarded):
            # Keep the counts for the next attempt rather than losing the record of the loss.
            with self._discarded_lock:
                for key, quantity in discarded.items():
                    self._discarded[key] += quantity

    def flush(self, timeout: float, callback: Callable[[int, float], None] | None = None) -> None:
        """Lines are written as they are captured; flushing writes the pending client report."""
        self._write_client_report(force=True)

    def kill(self) -> None:
        """Write the pending client report and close the file (sentry-sdk calls this from ``close()``)."""
        self._write_client_report(force=True)
        self.writer.close()

    def is_healthy(self) -> bool:
        return True
