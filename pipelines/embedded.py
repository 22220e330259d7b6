"""Embedded mode: evaluate and execute the schedules of ``pipelines.definitions`` inside this process.

``stacklens serve`` starts :class:`~pipelines.runner.EmbeddedRunner` (re-exported here), whose thread calls
these functions when a pass has work: they evaluate each due schedule (the same evaluation the Dagster daemon
performs) and execute the requested runs in-process against the Dagster instance under
``<data_dir>/dagster``, so ``dagster dev`` or ``stacklens pipelines ui`` over that instance shows them. All
the requests of one tick execute as a single run (``pipelines/execution.py``): Dagster's per-run overhead is
paid once per tick, not once per due job. The resources are bound to the runner's settings
(``definitions_for``), so the warehouse resource resolves to this process's own client (same URL, same cached
client).
"""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from pipelines.execution import Planned, RunOutcome, execute_planned, execute_request
from pipelines.instance import write_instance_config
from pipelines.runner import EmbeddedRunner
from stacklens.control.db import ALEMBIC_LOCK
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


def crons_of(schedule: dg.ScheduleDefinition) -> list[str]:
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


__all__ = [
    "EmbeddedRunner",
    "RunOutcome",
    "crons_of",
    "dagster_instance",
    "materialize_now",
    "plan_schedules",
    "run_schedules",
    "tick_schedule",
]
