"""Embedded mode: run the schedules of ``pipelines.definitions`` inside this process.

``stacklens serve`` starts :class:`EmbeddedRunner`: a daemon thread that wakes every few seconds, evaluates
each schedule whose cron minute has come (the same evaluation the Dagster daemon performs) and executes the
requested runs in-process against the Dagster instance under ``<data_dir>/dagster``, so ``dagster dev`` or
``stacklens pipelines ui`` over that instance shows them. The warehouse resource resolves to this process's
own client (same URL, same cached client). A failed run is logged and recorded; since watermarks only advance
on success, the next tick reads the same data again.

Start-up catch-up: right after start, and every ``catch_up_interval`` seconds for the first
``catch_up_seconds``, the runner evaluates every data-driven schedule at once (each plan skips when nothing
is new), so data loaded just after start (a fresh install's demo backfill) reaches the marts within
seconds instead of waiting for the hourly or 5-minute cron. The budgets job joins a pass when another job
ran in it (and on the first pass).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.cron import cron_due
from stacklens.settings import Settings

logger = logging.getLogger("stacklens.pipelines")


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    """The Dagster instance under ``<data_dir>/dagster`` (SQLite run and event storage)."""
    home: Path = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        # Telemetry off: the service must not call out. Run/event storage default to SQLite in this folder.
        config.write_text("telemetry:\n  enabled: false\n")
    return dg.DagsterInstance.from_config(str(home))


@dataclass
class RunOutcome:
    """One executed run: per asset the rows it wrote (``row_count`` metadata), per check whether it passed."""

    job: str
    run_id: str
    success: bool
    error: str = ""
    assets: dict[str, int | None] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _asset_results(result: Any) -> tuple[dict[str, int | None], dict[str, bool]]:
    assets: dict[str, int | None] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        count = materialization.metadata.get("row_count")
        assets[materialization.asset_key.to_user_string()] = int(count.value) if count is not None else None
    checks = {
        f"{e.asset_key.to_user_string()}:{e.check_name}": bool(e.passed)
        for e in result.get_asset_check_evaluations()
    }
    return assets, checks


def execute_request(
    defs: dg.Definitions,
    job_name: str,
    request: dg.RunRequest,
    instance: dg.DagsterInstance,
    extra_tags: dict[str, str] | None = None,
) -> RunOutcome:
    """Execute one run request in-process; failures are recorded in the instance and logged, never raised."""
    job = defs.resolve_job_def(job_name)
    tags = {**dict(request.tags or {}), **(extra_tags or {})}
    try:
        result = job.execute_in_process(
            instance=instance,
            tags=tags,
            raise_on_error=False,
            partition_key=request.partition_key,
            run_config=request.run_config or None,
        )
    except Exception as exc:  # a definition or storage fault: keep the runner alive, report it
        logger.exception("pipeline job %s could not start", job_name)
        return RunOutcome(job_name, "", False, str(exc))
    assets, checks = _asset_results(result)
    if result.success:
        return RunOutcome(job_name, result.run_id, True, "", assets, checks)
    errors = [_failure_text(e) for e in result.all_events if e.is_failure]
    error = errors[0] if errors else "run failed"
    logger.error("pipeline run %s of %s failed: %s", result.run_id, job_name, error)
    return RunOutcome(job_name, result.run_id, False, error, assets, checks)


def _failure_text(event: dg.DagsterEvent) -> str:
    """The underlying error of a failure event (the step's exception), else the event's message."""
    error = getattr(event.event_specific_data, "error", None)
    if error is not None:
        return f"{event.message}: {error.message.strip()}"
    return event.message or ""


def _requests(result: Any) -> list[dg.RunRequest]:
    if result is None or isinstance(result, dg.SkipReason):
        return []
    if isinstance(result, dg.RunRequest):
        return [result]
    if isinstance(result, Iterable):
        return [r for r in result if isinstance(r, dg.RunRequest)]
    return []


def tick_schedule(
    defs: dg.Definitions, schedule: dg.ScheduleDefinition, instance: dg.DagsterInstance, when: datetime
) -> list[RunOutcome]:
    """Evaluate one schedule at ``when`` and execute what it requests.

    The evaluation context is opened as a context manager: it opens its own handle on the instance, which
    Dagster makes the current definitions-state storage while it is open. Closed on exit, the handle leaves
    nothing behind, so a later run never meets a disposed instance remembered from this one.
    """
    resources = defs.resources or {}
    with dg.build_schedule_context(
        instance=instance, scheduled_execution_time=when, resources=resources
    ) as context:
        data = schedule.evaluate_tick(context)
    requests = list(data.run_requests or [])
    if data.skip_message:
        logger.debug("schedule %s skipped: %s", schedule.name, data.skip_message)
    tags = {"dagster/schedule_name": schedule.name}
    return [execute_request(defs, schedule.job_name, r, instance, tags) for r in requests]


def materialize_now(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    select: list[str] | None = None,
    follow_only: frozenset[str] = frozenset(),
) -> list[RunOutcome]:
    """Run every schedule's plan now (``select``: only jobs holding these asset keys); what `pipelines run` does.

    Jobs named in ``follow_only`` run only when an earlier job of this pass ran (the catch-up passes use it
    for the budgets job, which has no new-data plan of its own).
    """
    outcomes: list[RunOutcome] = []
    when = datetime.now(UTC)
    for schedule in defs.schedules or []:
        job = defs.resolve_job_def(schedule.job_name)
        keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
        if select and not keys.intersection(select):
            continue
        if schedule.job_name in follow_only and not outcomes:
            continue
        outcomes.extend(tick_schedule(defs, schedule, instance, when))
    return outcomes


class EmbeddedRunner:
    """Background thread executing due schedules in-process."""

    def __init__(
        self,
        settings: Settings,
        poll_seconds: float = 5.0,
        catch_up_seconds: float = 180.0,
        catch_up_interval: float = 10.0,
    ) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.catch_up_seconds = catch_up_seconds
        self.catch_up_interval = catch_up_interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._run_lock = threading.Lock()
        self._last_minute: datetime | None = None
        self._passes = 0
        self._instance: dg.DagsterInstance | None = None

    @property
    def instance(self) -> dg.DagsterInstance:
        """This runner's Dagster instance (one per runner, opened on first use)."""
        if self._instance is None:
            self._instance = dagster_instance(self.settings)
        return self._instance

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the schedules thread (its first act is a catch-up pass over every asset)."""
        from pipelines.resources import export_settings_env

        export_settings_env(self.settings)
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
        from pipelines.definitions import current_definitions
        from pipelines.jobs import budgets_job

        defs = current_definitions()
        follow = frozenset() if self._passes == 0 else frozenset({budgets_job.name})
        self._passes += 1
        with self._run_lock:
            return materialize_now(defs, self.instance, follow_only=follow)

    def run_due(self, now: datetime) -> list[RunOutcome]:
        """Execute the schedules due in the minute of ``now`` (each minute at most once)."""
        minute = now.astimezone(UTC).replace(second=0, microsecond=0)
        if self._last_minute is not None and minute <= self._last_minute:
            return []
        from pipelines.definitions import current_definitions

        defs = current_definitions()
        self._last_minute = minute
        outcomes: list[RunOutcome] = []
        with self._run_lock:
            instance = self.instance
            for schedule in defs.schedules or []:
                if cron_due(schedule.cron_schedule, minute):  # type: ignore[arg-type]
                    outcomes.extend(tick_schedule(defs, schedule, instance, minute))
        return outcomes

    def run_now(self, select: list[str] | None = None) -> list[RunOutcome]:
        """Materialize now (used by the server's pipelines endpoint)."""
        from pipelines.definitions import current_definitions

        defs = current_definitions()

        with self._run_lock:
            return materialize_now(defs, self.instance, select)

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
            try:
                if now >= next_catch_up and now - started <= self.catch_up_seconds:
                    next_catch_up = now + self.catch_up_interval
                    self.catch_up()
                if not self._stop.is_set():
                    self.run_due(datetime.now(UTC))
            except Exception:  # never let one bad tick end the schedules
                logger.exception("pipeline schedule tick failed")
            self._stop.wait(self.poll_seconds)


__all__ = ["EmbeddedRunner", "RunOutcome", "cron_due", "dagster_instance", "materialize_now"]
