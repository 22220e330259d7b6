"""The one Dagster ``Definitions`` of StackLens: marts by domain, resources, schedules and sensors.

Scaled mode: ``dagster dev -w workspace.yaml`` loads ``defs`` (set STACKLENS_WAREHOUSE_URL,
STACKLENS_WAREHOUSE_DATABASE and STACKLENS_DATABASE_URL; the resources read them when a run starts).
Embedded mode: ``stacklens serve`` runs the same schedules in-process over :func:`definitions_for` its
settings.

Loading is import-pure: nothing here reads the control store, the warehouse or the environment, so the code
location is the same whatever the databases hold. Budgets change while the service runs; each one's verdict
is a row of the ``budget_status`` mart, and the one asset check ``budgets_evaluated`` fails when one could not
be evaluated (over budget is a verdict, not a failed check).
"""

from __future__ import annotations

import threading
from typing import Any

import dagster as dg

from pipelines.assets import (
    alerts,
    budgets,
    event_counters,
    integrations,
    interactions,
    issues,
    live_tables,
    monitors,
    performance,
    sessions,
)
from pipelines.jobs import ALL_JOBS
from pipelines.resources import env_resources, resources_for
from pipelines.schedules import schedules
from pipelines.sensors import sensors
from stacklens.settings import Settings

_modules = [
    event_counters,
    issues,
    performance,
    interactions,
    sessions,
    budgets,
    alerts,
    integrations,
    monitors,
]


def build_definitions(resources: dict[str, dg.ConfigurableResource[Any]]) -> dg.Definitions:
    """Every asset, job, schedule and sensor, over ``resources``."""
    return dg.Definitions(
        assets=[
            *live_tables.specs,
            *dg.load_assets_from_modules(_modules),
        ],
        jobs=ALL_JOBS,
        schedules=schedules,
        sensors=sensors,
        resources=resources,
    )


defs = build_definitions(env_resources())

_lock = threading.Lock()
_bound: dict[tuple[str, str, str], dg.Definitions] = {}


def definitions_for(settings: Settings) -> dg.Definitions:
    """The definitions with resources bound to ``settings`` (built once per installation, then reused)."""
    key = (settings.resolved_warehouse_url, settings.warehouse_database, settings.resolved_database_url)
    with _lock:
        found = _bound.get(key)
        if found is None:
            found = _bound[key] = build_definitions(resources_for(settings))
        return found
