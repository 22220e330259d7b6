"""The one Dagster ``Definitions`` of StackLens: marts by domain, resources, schedules and sensors.

Scaled mode: ``dagster dev -w workspace.yaml`` (set STACKLENS_WAREHOUSE_URL, STACKLENS_WAREHOUSE_DATABASE and
STACKLENS_DATABASE_URL). Embedded mode: ``stacklens serve`` runs the same schedules in-process.
"""

from __future__ import annotations

import dagster as dg

from pipelines.assets import budgets, issues, performance, releases
from pipelines.assets.common import raw_sources
from pipelines.jobs import ALL_JOBS
from pipelines.resources import default_resources
from pipelines.schedules import schedules
from pipelines.sensors import sensors

_modules = [issues, performance, releases, budgets]

defs = dg.Definitions(
    assets=[*raw_sources, *dg.load_assets_from_modules(_modules)],
    asset_checks=dg.load_asset_checks_from_modules(_modules),
    jobs=ALL_JOBS,
    schedules=schedules,
    sensors=sensors,
    resources=default_resources(),
)
