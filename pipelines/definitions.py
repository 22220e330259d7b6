"""The one Dagster ``Definitions`` of StackLens: marts by domain, resources, schedules and sensors.

Scaled mode: ``dagster dev -w workspace.yaml`` (set STACKLENS_WAREHOUSE_URL, STACKLENS_WAREHOUSE_DATABASE and
STACKLENS_DATABASE_URL). Embedded mode: ``stacklens serve`` runs the same schedules in-process.

Budgets live in the control store and change while the service runs; each gets its own asset check
(``budget_<id>``), built from the budgets held when the definitions load. ``defs`` (what ``dagster dev``
loads) is built at import; the embedded runner asks :func:`current_definitions` on every tick, which
rebuilds them when the budgets changed. The aggregate check ``budgets_within_limits`` always covers every
budget, including ones added after a code location loaded.
"""

from __future__ import annotations

import logging
import threading

import dagster as dg

from pipelines.assets import budgets, issues, performance, releases
from pipelines.assets.budgets import build_budget_status
from pipelines.assets.common import raw_sources
from pipelines.jobs import ALL_JOBS
from pipelines.resources import default_resources
from pipelines.schedules import schedules
from pipelines.sensors import sensors
from stacklens.control.budgets import BudgetRow

logger = logging.getLogger("stacklens.pipelines")
_modules = [issues, performance, releases, budgets]


def load_budgets() -> list[BudgetRow]:
    """Every budget in the control store; none when the store does not exist yet or is not migrated."""
    import os
    from pathlib import Path

    from sqlalchemy import inspect
    from sqlalchemy.exc import SQLAlchemyError

    from stacklens.control.budgets import all_budgets
    from stacklens.control.db import get_engine, session_scope
    from stacklens.settings import get_settings

    settings = get_settings()
    url = os.environ.get("STACKLENS_DATABASE_URL") or settings.resolved_database_url
    if url != settings.resolved_database_url:
        settings = settings.model_copy(update={"database_url": url})
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).exists():
        return []  # never create a database file just by loading the definitions
    try:
        if not inspect(get_engine(settings)).has_table("budgets"):
            return []
        with session_scope(settings) as session:
            return all_budgets(session)
    except SQLAlchemyError:
        logger.exception("budgets could not be read; their asset checks are left out this time")
        return []


def build_definitions(budget_rows: list[BudgetRow]) -> dg.Definitions:
    return dg.Definitions(
        assets=[*raw_sources, *dg.load_assets_from_modules(_modules), build_budget_status(budget_rows)],
        jobs=ALL_JOBS,
        schedules=schedules,
        sensors=sensors,
        resources=default_resources(),
    )


def _fingerprint(budget_rows: list[BudgetRow]) -> tuple:  # type: ignore[type-arg]
    return tuple((b.id, b.project, b.metric, b.scope, b.value, b.unit) for b in budget_rows)


_lock = threading.Lock()
_budgets = load_budgets()
defs = build_definitions(_budgets)
_current: tuple[tuple, dg.Definitions] = (_fingerprint(_budgets), defs)  # type: ignore[type-arg]


def current_definitions() -> dg.Definitions:
    """The definitions with one check per budget as the control store holds them now (rebuilt on change)."""
    global _current
    rows = load_budgets()
    key = _fingerprint(rows)
    with _lock:
        if _current[0] != key:
            _current = (key, build_definitions(rows))
        return _current[1]
