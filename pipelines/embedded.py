"""Embedded mode: run the schedules of ``pipelines.definitions`` inside this process.

``stacklens serve`` starts :class:`EmbeddedRunner`: a daemon thread that wakes every few seconds, evaluates
each schedule whose cron minute has come (the same evaluation the Dagster daemon performs) and executes the
requested runs in-process against the Dagster instance under ``<data_dir>/dagster``, so ``dagster dev`` or
``stacklens pipelines ui`` over that instance shows them. All the requests of one tick execute as a single
run (``pipelines/execution.py``): Dagster's per-run overhead is paid once per tick, not once per due job. The
resources are bound to the runner's settings (``definitions_for``), so the warehouse resource resolves to
this process's own client (same URL, same cached client). A failed run is logged and recorded; since
watermarks only advance on success, the next tick reads the same data again.

Start-up catch-up: right after start, and every ``catch_up_interval`` seconds for the first
``catch_up_seconds``, the runner evaluates every data-driven schedule at once (each plan skips when nothing
is new), so data loaded just after start (a fresh install's demo backfill) reaches the marts within
seconds instead of waiting for the hourly or 5-minute cron. The budgets job joins a pass when another job
ran in it (and on the first pass).
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.cron import cron_due
from pipelines.execution import Planned, RunOutcome, execute_planned, execute_request
from pipelines.instance import write_instance_config
from stacklens.control.db import ALEMBIC_LOCK
from stacklens.self_watch.pipeline_ticks import PipelineTicks
from stacklens.settings import Settings

logger = logging.getLogger(__name__)


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    """The Dagster instance under ``<data_dir>/dagster``: SQLite run and event storage there, or PostgreSQL
    with ``STACKLENS_DAGSTER_DATABASE_URL`` (``pipelines/instance.py`` writes its ``dagster.yaml``).

    Opening is serialised across threads and processes: the first open of a SQLite home creates its
    databases and stamps each with its schema revision, and two opens racing there stamp a revision twice,
    after which every later open fails ("more than one head present")."""
    home: Path = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    # Each open() is its own file description, so the lock excludes threads of one process as well. Dagster
    # stamps new storages through Alembic, whose proxies are process-wide: no control-store migration at once.
    with ALEMBIC_LOCK, (home / ".opening.lock").open("a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        write_instance_config(settings, home)
        return dg.DagsterInstance.from_config(str(home))


def schedules_of(defs: dg.Definitions) -> list[dg.ScheduleDefinition]:
    """The definitions' schedules. Every schedule here is built on a job (``dg.ScheduleDefinition``); Dagster
    also allows schedules on partitioned asset selections, resolved later, which the runner cannot
    evaluate."""
    return [s for s in defs.schedules or [] if isinstance(s, dg.ScheduleDefinition)]


def _crons(schedule: dg.ScheduleDefinition) -> list[str]:
    """A schedule's cron expressions (Dagster allows one or several)."""
    cron = schedule.cron_schedule
    return [cron] if isinstance(cron, str) else list(cron)


def plan_schedules(
    defs: dg.Definitions,
    schedules: Iterable[dg.ScheduleDefinition],
    when: datetime,
    follow_only: frozenset[str] = frozenset(),
) -> list[Planned]:
    """Evaluate ``schedules`` at ``when``: the runs they request, not executed yet. Jobs named in
    ``follow_only`` are planned only when an earlier schedule requested a run.

    One evaluation context serves every schedule of the tick, and it is built without the Dagster instance:
    the plans read the warehouse through the resources only, and a context holding an instance opens a second
    handle on it (its storages) for every evaluation.
    """
    planned: list[Planned] = []
    resources = defs.resources or {}
    with dg.build_schedule_context(scheduled_execution_time=when, resources=resources) as context:
        for schedule in schedules:
            if schedule.job_name in follow_only and not planned:
                continue
            data = schedule.evaluate_tick(context)
            if data.skip_message:
                logger.debug("schedule %s skipped: %s", schedule.name, data.skip_message)
            planned += [Planned(schedule.name, schedule.job_name, r) for r in data.run_requests or []]
    return planned


def plan_schedule(defs: dg.Definitions, schedule: dg.ScheduleDefinition, when: datetime) -> list[Planned]:
    """Evaluate one schedule at ``when``: the runs it requests, not executed yet."""
    return plan_schedules(defs, [schedule], when)


def tick_schedule(
    defs: dg.Definitions, schedule: dg.ScheduleDefinition, instance: dg.DagsterInstance, when: datetime
) -> list[RunOutcome]:
    """Evaluate one schedule at ``when`` and execute what it requests (as its own job's runs)."""
    return [
        execute_request(defs, p.job, p.request, instance, {"dagster/schedule_name": p.schedule})
        for p in plan_schedule(defs, schedule, when)
    ]


def run_schedules(
    defs: dg.Definitions,
    schedules: Iterable[dg.ScheduleDefinition],
    instance: dg.DagsterInstance,
    when: datetime,
    follow_only: frozenset[str] = frozenset(),
) -> list[RunOutcome]:
    """Evaluate ``schedules`` at ``when`` and execute all they request as one run (one outcome per job).

    Jobs named in ``follow_only`` run only when another job of this pass has something to do.
    """
    return execute_planned(defs, plan_schedules(defs, schedules, when, follow_only), instance)


def materialize_now(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    select: list[str] | None = None,
    follow_only: frozenset[str] = frozenset(),
) -> list[RunOutcome]:
    """Run every schedule's plan now (``select``: only jobs holding these asset keys); what `pipelines run`
    does.

    Jobs named in ``follow_only`` run only when an earlier job of this pass has something to do (the catch-up
    passes use it for the budgets job, which has no new-data plan of its own).
    """
    chosen = []
    for schedule in schedules_of(defs):
        job = defs.resolve_job_def(schedule.job_name)
        keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
        if select and not keys.intersection(select):
            continue
        chosen.append(schedule)
    return run_schedules(defs, chosen, instance, datetime.now(UTC), follow_only)


class EmbeddedRunner:
    """Background thread executing due schedules in-process."""

    def __init__(
        self,
        settings: Settings,
        poll_seconds: float = 5.0,
        catch_up_seconds: float = 180.0,
        catch_up_interval: float = 10.0,
        jobs: frozenset[str] | None = None,
    ) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.catch_up_seconds = catch_up_seconds
        self.catch_up_interval = catch_up_interval
        # The jobs whose schedules the thread runs (catch-up passes and due ticks); None: every scheduled job,
        # as `stacklens serve` runs them. A narrower set lets a test of the thread itself (its ticks, their
        # failures) run one job per pass instead of building every asset each time.
        self.jobs = jobs
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._run_lock = threading.Lock()
        self._last_minute: datetime | None = None
        self._passes = 0
        self._instance: dg.DagsterInstance | None = None
        self._instance_lock = threading.Lock()
        self.ticks = PipelineTicks(settings)

    @property
    def instance(self) -> dg.DagsterInstance:
        """This runner's Dagster instance (one per runner, opened on first use)."""
        with self._instance_lock:  # the runner's thread and a status request may ask first at once
            if self._instance is None:
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
        """Every data-driven job whose plan finds new data, then the budgets (first pass, or after a run)."""
        from pipelines.jobs import alerts_job, budgets_job

        defs = self.definitions()
        follow = frozenset() if self._passes == 0 else frozenset({budgets_job.name, alerts_job.name})
        self._passes += 1
        with self._running() as instance:
            return run_schedules(defs, self._schedules(defs), instance, datetime.now(UTC), follow)

    def run_due(self, now: datetime) -> list[RunOutcome]:
        """Execute the schedules due in the minute of ``now`` (each minute at most once)."""
        minute = now.astimezone(UTC).replace(second=0, microsecond=0)
        if self._last_minute is not None and minute <= self._last_minute:
            return []
        defs = self.definitions()
        self._last_minute = minute
        due = [s for s in self._schedules(defs) if any(cron_due(c, minute) for c in _crons(s))]
        with self._running() as instance:
            return run_schedules(defs, due, instance, minute)

    def _schedules(self, defs: dg.Definitions) -> list[dg.ScheduleDefinition]:
        """The schedules this runner's thread runs, in the definitions' order."""
        return [s for s in schedules_of(defs) if self.jobs is None or s.job_name in self.jobs]

    def asset_keys(self) -> set[str]:
        """Every asset key of the definitions (what ``run_now``'s ``select`` may name)."""
        return {spec.key.to_user_string() for spec in self.definitions().resolve_all_asset_specs()}

    def run_now(self, select: list[str] | None = None) -> list[RunOutcome]:
        """Materialize now (used by the server's pipelines endpoint)."""
        defs = self.definitions()
        with self._running() as instance:
            return materialize_now(defs, instance, select)

    def backfill(self, first: str, last: str, select: list[str] | None = None) -> list[RunOutcome]:
        """Rebuild the daily-partitioned marts for the days ``first``…``last`` (the server's backfill
        endpoint); raises :class:`pipelines.backfill.BackfillError` naming a bad option."""
        from pipelines.backfill import parse_range, run_backfill

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
                if now >= next_catch_up and now - started <= self.catch_up_seconds:
                    next_catch_up = now + self.catch_up_interval
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


__all__ = [
    "EmbeddedRunner",
    "RunOutcome",
    "dagster_instance",
    "materialize_now",
    "plan_schedules",
    "run_schedules",
    "tick_schedule",
]
