"""One item's failure inside a loop over many organizations' items — a tracker link read back, a notification
sent, an alert rule or a budget evaluated — is that item's error, never the loop's.

Every such loop catches whatever one item raises, records :func:`failure_text` on the item (shown on its
page), and tries it again at :func:`retry_at`: the outbox's schedule
(:func:`stacklens.outbound.backoff.backoff_delay`, 30 s doubling to an hour, with jitter), so a broken item
costs one attempt an hour, not one per tick, and the other organizations' items go on. Only a failure of
what every item shares — the warehouse or the control store not answering (:func:`is_shared_outage`) —
fails the step: it is nobody's item, and the run's failure is what tells the operator."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from clickhouse_connect.driver.exceptions import OperationalError as WarehouseOperationalError
from sqlalchemy.exc import OperationalError as ControlStoreOperationalError

from stacklens.errors import StackLensError
from stacklens.outbound import backoff_delay
from stacklens.warehouse.client import WarehouseUnavailable

log = logging.getLogger(__name__)

ERROR_CHARS = 500  # the width of the error columns (external_links, alert_rules, budgets, alert_deliveries)


def failure_text(exc: BaseException, what: str = "") -> str:
    """The error as one plain line for the item's page.

    A domain error already speaks to the user; anything else is a defect or an answer of a shape nobody
    expected, so it is named as such (with its type, which is what a bug report needs) and logged with its
    traceback for the operator."""
    if isinstance(exc, StackLensError):
        text = str(exc)
    else:
        log.warning("unexpected failure of %s", what or "one item", exc_info=exc)
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = f"unexpected error ({type(exc).__name__}{': ' + detail if detail else ''}); retried later"
    return " ".join(text.split())[:ERROR_CHARS]


def is_shared_outage(exc: BaseException) -> bool:
    """The warehouse or the control store does not answer: every item would fail the same way."""
    return isinstance(exc, WarehouseOperationalError | ControlStoreOperationalError | WarehouseUnavailable)


def retry_at(failures: int, now: datetime) -> datetime:
    """When an item that has failed ``failures`` times in a row is tried again."""
    return now + timedelta(seconds=backoff_delay(max(failures, 1)))
