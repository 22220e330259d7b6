"""The embedded runner: the thread of ``stacklens serve`` that runs the schedules of ``pipelines.definitions``
in-process (``pipelines/embedded.py`` evaluates and executes them with Dagster).

:class:`EmbeddedRunner` is a daemon thread that wakes every few seconds, evaluates each schedule whose cron
minute has come (the same evaluation the Dagster daemon performs) and executes the requested runs in-process
against the Dagster instance under ``<data_dir>/dagster``, so ``dagster dev`` or ``stacklens pipelines ui``
over that instance shows them. All the requests of one tick execute as a single run
(``pipelines/execution.py``): Dagster's per-run overhead is paid once per tick, not once per due job. A failed
run is logged and recorded; since watermarks only advance on success, the next tick reads the same data
again.

Start-up catch-up: right after start, and every ``catch_up_interval`` seconds for the first
``catch_up_seconds``, the runner evaluates every data-driven schedule at once (each plan skips when nothing
is new), so data loaded just after start (a fresh install's demo backfill) reaches the marts within seconds
instead of waiting for the hourly or 5-minute cron. The budgets job joins a pass when another job ran in it
(and on the first pass that runs).

Backlogs: while the front door's worker processes prepare large batches (a shipper catching up, the demo's
history), a pass waits, at most :data:`BACKLOG_WAIT_SECONDS` in a row. On a small host the pass's statements
and the backlog's preparation and inserts compete for the same cores, and their memory added up: building the
demo's history, the server's tree peaked at 629–645 MiB with the passes beside the history's batches, 574–602
with them after (bench/footprint.py, issue 63). The rows such a pass would read are still arriving, so the
next pass reads them anyway. A catch-up pass that waited is still run once the backlog has landed, even past
the catch-up window, and the schedules due in the minutes it waited run with the first pass after it (as after
any pass that outlasted a minute: :meth:`EmbeddedRunner.run_due`).

Idle passes: before a catch-up pass or a minute's due schedules, :class:`pipelines.idle.IdleCheck` decides
without Dagster whether anything can be done (rows landed that a job has not read, or standing work in the
control store: monitors, alert rules, notifications waiting, budgets, reports, digests, linked tickets).
When nothing can, the pass is skipped: this module does not import Dagster, and a server on an empty
warehouse loads it (~54 MiB) only at the first pass that has work.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pipelines.cron import cron_due
from pipelines.idle import IdleCheck
from stacklens.control.db import ALEMBIC_LOCK
from stacklens.ingest.workers import preparing_large_batches
from stacklens.self_watch.pipeline_ticks import PipelineTicks
from stacklens.settings import Settings

if TYPE_CHECKING:
    import dagster as dg

    from pipelines.execution import RunOutcome

logger = logging.getLogger(__name__)

# The longest a pass waits for a backlog in a row: a steady stream of large batches still gets one a minute.
BACKLOG_WAIT_SECONDS = 60.0
# The most minutes a due tick looks back over (a pass or a wait longer than this drops the older ones).
_MISSED_MINUTES_MAX = 60


class EmbeddedRunner:
    """Background thread executing due schedules in-process."""

    def __init__(
        self,
        settings: Settings,
        poll_seconds: float = 5.0,
        catch_up_seconds: float = 180.0,
        catch_up_interval: float = 10.0,
        jobs: frozenset[str] | None = None,
        backlog: Callable[[], bool] = preparing_large_batches,
    ) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.catch_up_seconds = catch_up_seconds
        self.catch_up_interval = catch_up_interval
        # The jobs whose schedules the thread runs (catch-up passes and due ticks); None: every scheduled job,
        # as `stacklens serve` runs them. A narrower set lets a test of the thread itself (its ticks, their
        # failures) run one job per pass instead of building every asset each time.
        self.jobs = jobs
        # Whether a backlog is landing now (passes wait for it): the ingest workers of this process run.
        self.backlog = backlog
        self._waiting_since: float | None = None
        self._catch_up_owed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._run_lock = threading.Lock()
        self._last_minute: datetime | None = None
        self._passes = 0
        self._instance: dg.DagsterInstance | None = None
        self._instance_lock = threading.Lock()
        self.ticks = PipelineTicks(settings)
        self.idle = IdleCheck(settings)

    @property
    def instance(self) -> dg.DagsterInstance:
        """This runner's Dagster instance (one per runner, opened on first use)."""
        with self._instance_lock:  # the runner's thread and a status request may ask first at once
            if self._instance is None:
                from pipelines.embedded import dagster_instance

                self._instance = dagster_instance(self.settings)
            return self._instance

    @contextmanager
    def _running(self) -> Iterator[dg.DagsterInstance]:
        """The instance, with this runner's run lock held, and ALEMBIC_LOCK: Dagster creates each run's SQLite
        event-log shard and stamps it through Alembic (process-wide proxies) while the run goes on."""
        instance = self.instance  # opened first: opening takes ALEMBIC_LOCK under the instance lock
        with ALEMBIC_LOCK, self._run_lock:
            yield instance

    def definitions(self) -> dg.Definitions:
        """The definitions with resources bound to this runner's settings."""
        from pipelines.definitions import definitions_for

        return definitions_for(self.settings)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the schedules thread (its first act is a catch-up pass over every asset)."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="stacklens-schedules", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop after the run in progress (if any) ends; whether the thread ended within ``timeout``."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        if self._instance is not None:
            self._instance.dispose()
            self._instance = None
        return True

    def catch_up(self) -> list[RunOutcome]:
        """Every data-driven job whose plan finds new data, then the budgets (first pass that runs, or after a
        run); nothing, without loading Dagster, when the idle check finds nothing to do."""
        if not self.idle.has_work():
            return []
        from pipelines.embedded import run_schedules
        from pipelines.jobs import alerts_job, budgets_job

        defs = self.definitions()
        follow = frozenset() if self._passes == 0 else frozenset({budgets_job.name, alerts_job.name})
        self._passes += 1
        with self._running() as instance:
            return run_schedules(defs, self._schedules(defs), instance, datetime.now(UTC), follow)

    def run_due(self, now: datetime) -> list[RunOutcome]:
        """Execute the schedules due in the minute of ``now`` and in the minutes since the last one evaluated
        (each minute at most once; a long pass or a backlog's wait passed over them, and a schedule due then
        runs now rather than at its next time); nothing, without loading Dagster, when the idle check finds
        nothing to do."""
        minute = now.astimezone(UTC).replace(second=0, microsecond=0)
        previous = self._last_minute
        if previous is not None and minute <= previous:
            return []
        self._last_minute = minute
        minutes = _minutes_since(previous, minute)
        if not self.idle.has_work():
            return []
        from pipelines.embedded import crons_of, run_schedules

        defs = self.definitions()
        due = [s for s in self._schedules(defs) if any(cron_due(c, m) for c in crons_of(s) for m in minutes)]
        with self._running() as instance:
            return run_schedules(defs, due, instance, minute)

    def waits_for_backlog(self, now: float) -> bool:
        """Whether the pass due at ``now`` (monotonic seconds) waits for a backlog landing; a wait ends when
        the backlog has landed or after :data:`BACKLOG_WAIT_SECONDS`, and the pass then runs."""
        if not self.backlog():
            self._waiting_since = None
            return False
        if self._waiting_since is None:
            self._waiting_since = now
            logger.info(
                "pipelines: large batches are landing; the next pass waits until they have (at most %.0f s)",
                BACKLOG_WAIT_SECONDS,
            )
            return True
        if now - self._waiting_since < BACKLOG_WAIT_SECONDS:
            return True
        self._waiting_since = None  # waited long enough: this pass runs, and the next one may wait again
        return False

    def _schedules(self, defs: dg.Definitions) -> list[dg.ScheduleDefinition]:
        """The schedules this runner's thread runs, in the definitions' order."""
        from pipelines.embedded import schedules_of

        return [s for s in schedules_of(defs) if self.jobs is None or s.job_name in self.jobs]

    def asset_keys(self) -> set[str]:
        """Every asset key of the definitions (what ``run_now``'s ``select`` may name)."""
        return {spec.key.to_user_string() for spec in self.definitions().resolve_all_asset_specs()}

    def run_now(self, select: list[str] | None = None) -> list[RunOutcome]:
        """Materialize now (used by the server's pipelines endpoint)."""
        from pipelines.embedded import materialize_now

        defs = self.definitions()
        with self._running() as instance:
            return materialize_now(defs, instance, select)

    def backfill(self, first: str, last: str, select: list[str] | None = None) -> list[RunOutcome]:
        """Rebuild the daily-partitioned marts for the days ``first``…``last`` (the server's backfill
        endpoint); raises :class:`pipelines.backfill_range.BackfillError` naming a bad option."""
        from pipelines.backfill import run_backfill
        from pipelines.backfill_range import parse_range

        days = parse_range(first, last)
        defs = self.definitions()
        with self._running() as instance:
            return run_backfill(defs, instance, days, select)

    def status(self) -> dict[str, Any]:
        """Recent and failed runs and the marts' row counts (the server's pipelines status endpoint)."""
        from pipelines.status import pipeline_status
        from stacklens.warehouse.client import get_warehouse

        return pipeline_status(get_warehouse(self.settings), self.instance)

    def _loop(self) -> None:
        started = time.monotonic()
        next_catch_up = started
        while not self._stop.is_set():
            now = time.monotonic()
            ticked, failures = False, list[str]()
            try:
                catching_up = now - started <= self.catch_up_seconds or self._catch_up_owed
                if self.waits_for_backlog(now):
                    self._catch_up_owed = self._catch_up_owed or catching_up
                    self._stop.wait(self.poll_seconds)
                    continue
                if now >= next_catch_up and catching_up:
                    next_catch_up = now + self.catch_up_interval
                    self._catch_up_owed = False
                    ticked = True
                    failures += _failures(self.catch_up())
                if not self._stop.is_set():
                    minute = self._last_minute
                    outcomes = self.run_due(datetime.now(UTC))
                    ticked = ticked or self._last_minute != minute
                    failures += _failures(outcomes)
            except Exception as exc:  # never let one bad tick end the schedules
                logger.exception("pipeline schedule tick failed")
                ticked = True
                failures.append(f"the tick failed: {_first_line(exc)}")
            if ticked:
                # Three failed ticks in a row alert the operators (stacklens/self_watch/pipeline_ticks.py).
                self.ticks.record(failures)
            self._stop.wait(self.poll_seconds)


def _minutes_since(previous: datetime | None, minute: datetime) -> list[datetime]:
    """The minutes after ``previous`` up to ``minute``, oldest first (at most :data:`_MISSED_MINUTES_MAX`
    and ``minute``); ``minute`` alone when no minute was evaluated before."""
    if previous is None:
        return [minute]
    count = min(int((minute - previous).total_seconds() // 60) - 1, _MISSED_MINUTES_MAX)
    return [minute - timedelta(minutes=back) for back in range(count, -1, -1)]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _failures(outcomes: list[RunOutcome]) -> list[str]:
    """A tick's failed runs in words: ``job: error``."""
    return [
        f"{o.job}: {o.error.strip().splitlines()[0][:300] if o.error.strip() else 'failed'}"
        for o in outcomes
        if not o.success
    ]


__all__ = ["EmbeddedRunner"]
