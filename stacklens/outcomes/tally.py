"""Outcome counts added up in memory and written to the warehouse's `outcomes` table every few seconds.

One insert per request would cost the embedded engine ~10 ms and more each (every insert is a part and a
write); a request's counts are a handful of numbers. So they are added up here per (organization, project,
hour, category, outcome, reason) and written together by a background thread every
:data:`WRITE_EVERY_SECONDS`, one insert per warehouse (the table is a SummingMergeTree: a key written twice
adds up). A reader in this process writes what is pending first (:func:`write_pending`), so the API and the
usage page see every item answered so far. A process killed outright loses at most the last few seconds of
counts (never an event). As key use (stacklens.control.keys.use_tally), with the warehouse instead of the
control store.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

from stacklens.outcomes.counting import DISCARDS_OVER_BOUND, SDK_MARK, Outcomes
from stacklens.settings import Settings
from stacklens.warehouse.client import inserting_client

log = logging.getLogger(__name__)

WRITE_EVERY_SECONDS = 2.0
# What client reports may add per project and minute in this process, all their entries together (the bounds
# of one report are in stacklens.outcomes.counting): about 16,000 items a second that the project's SDKs say
# they dropped. Past it a report adds nothing more that minute and counts under DISCARDS_OVER_BOUND.
MAX_DISCARDS_PER_MINUTE = 1_000_000
COLUMNS = ["org_id", "project_id", "hour", "category", "outcome", "reason", "quantity"]

# (org id, project id, hour, category, outcome, reason)
_Key = tuple[int, int, datetime, str, str, str]

_lock = threading.Lock()
# Held while counts are written: a reader's write_pending waits for a tick's insert already under way.
_write_lock = threading.Lock()
# (warehouse URL, database) → (settings to reach it with, counts waiting to be written).
_pending: dict[tuple[str, str], tuple[Settings, Counter[_Key]]] = {}
_writer: threading.Thread | None = None
# (org id, project id) → (minute, quantities client reports added in it): MAX_DISCARDS_PER_MINUTE.
_reported: dict[tuple[int, int], tuple[int, int]] = {}


def _warehouse_of(settings: Settings) -> tuple[str, str]:
    return (settings.resolved_warehouse_url, settings.warehouse_database)


def count_outcomes(settings: Settings, org_id: int, outcomes: Outcomes, at: datetime | None = None) -> None:
    """Add one request's outcomes of ``org_id`` (see the module doc); written within a few seconds."""
    global _writer
    if not outcomes:
        return
    moment = at or datetime.now(UTC)
    hour = moment.replace(minute=0, second=0, microsecond=0, tzinfo=None)
    over: set[int] | None = None  # projects whose reported discards were cut (see _within_minute)
    with _lock:
        _, counts = _pending.setdefault(_warehouse_of(settings), (settings, Counter()))
        for (project_id, category, outcome, reason), quantity in outcomes.items():
            if quantity <= 0:
                continue
            if reason[:1] == SDK_MARK:  # what an SDK says it dropped: within the project's minute
                if over is None:
                    over = set()
                quantity = _within_minute(org_id, project_id, int(moment.timestamp() // 60), quantity, over)
                reason = reason[1:]
                if quantity <= 0:
                    continue
            counts[(org_id, project_id, hour, category, outcome, reason)] += quantity
        for project_id in over or ():  # a report of the request is counted over the bound, not accepted
            if outcomes.get((project_id, "client_report", "accepted", ""), 0) > 0:
                accepted = (org_id, project_id, hour, "client_report", "accepted", "")
                counts[accepted] -= 1
                if counts[accepted] <= 0:
                    del counts[accepted]
                counts[(org_id, project_id, hour, "client_report", "invalid", DISCARDS_OVER_BOUND)] += 1
        if _writer is None:
            _writer = threading.Thread(target=_write_loop, name="outcome-writer", daemon=True)
            _writer.start()


def _within_minute(org_id: int, project_id: int, minute: int, quantity: int, over: set[int]) -> int:
    """What of ``quantity`` reported discards the project's minute still takes (called holding ``_lock``);
    ``over`` gets the project when some is cut."""
    then, used = _reported.get((org_id, project_id), (minute, 0))
    if then != minute:
        used = 0
        if len(_reported) > 10_000:  # projects that reported in earlier minutes: forgotten
            for key in [k for k, (m, _) in _reported.items() if m != minute]:
                del _reported[key]
    taken = max(0, min(quantity, MAX_DISCARDS_PER_MINUTE - used))
    if taken < quantity:
        over.add(project_id)
    _reported[(org_id, project_id)] = (minute, used + taken)
    return taken


def write_pending(settings: Settings) -> None:
    """Write the counts waiting for ``settings``' warehouse now (a reader of `outcomes` calls this first)."""
    with _write_lock:
        with _lock:
            found = _pending.pop(_warehouse_of(settings), None)
        if found is not None:
            _write(*found)


def flush_all() -> None:
    """Write every count waiting, one insert per warehouse (the writer's tick, shutdown, tests)."""
    with _write_lock:
        with _lock:
            batches = list(_pending.values())
            _pending.clear()
        for settings, counts in batches:
            _write(settings, counts)


def _write(settings: Settings, counts: Counter[_Key]) -> None:
    rows = [[*key, quantity] for key, quantity in sorted(counts.items())]
    try:
        inserting_client(settings).insert("outcomes", rows, column_names=COLUMNS)
    except Exception as exc:  # noqa: BLE001 - outcome counts must never stop the server; say what was lost
        log.warning("outcomes: %d rows of outcome counts could not be written: %s", len(rows), exc)


def _write_loop() -> None:
    global _writer
    while True:
        threading.Event().wait(WRITE_EVERY_SECONDS)
        flush_all()
        with _lock:
            if not _pending:
                _writer = None
                return


atexit.register(flush_all)


@contextlib.contextmanager
def writes_held(settings: Settings) -> Iterator[None]:
    """A backup's cut-off for outcome counts: what is counted for ``settings``' warehouse is written now,
    and no count is written until the block ends (they keep adding up in memory and are written after it)."""
    with _write_lock:
        with _lock:
            found = _pending.pop(_warehouse_of(settings), None)
        if found is not None:
            _write(*found)
        yield
