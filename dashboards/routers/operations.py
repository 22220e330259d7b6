"""The operators' page (`/admin/operations`, docs/operations.md): storage, backups, migrations, retention
runs and
the front door's queue of the whole installation.

Instance-wide, so not an organization's page: only people the operator made operators
(`stacklens admin grant-operator --email …`) see it; anyone else gets the page that says there is nothing
here, as for an organization they are not in. The actions themselves run from the command line (`stacklens
backup`, `restore`, `migrate`, `retention run`), which records each in the maintenance log shown here."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentUser, Db, app_settings
from dashboards.rendering import render
from dashboards.usage_figures import OUTCOME_LABELS
from stacklens.control.maintenance_log import list_runs
from stacklens.control.project_retention import retentions
from stacklens.ingest.front_door import RATE_WINDOW_SECONDS, door_status
from stacklens.operations.retention_schedule import next_slot, run_at
from stacklens.operations.storage import measure_storage, outcome_totals
from stacklens.operations.storage_lines import days_until_full_text
from stacklens.outcomes.tally import write_pending
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import migration_status

router = APIRouter(include_in_schema=False)
PAGE = "/admin/operations"
KIND_TITLES = {"backup": "Backups and restores", "migrate": "Migrations", "retention": "Retention runs"}


@router.get(PAGE, response_class=HTMLResponse)
def operations_page(request: Request, user: CurrentUser, db: Db) -> Response:
    if not user.is_operator:
        raise HTTPException(status_code=404, detail="Not Found")
    settings = app_settings(request)
    report = measure_storage(settings)
    kept = {r.project_id: r for r in retentions(db)}
    at = run_at(settings)
    runs = list_runs(db, limit=200)
    by_kind: dict[str, list[Any]] = {kind: [] for kind in KIND_TITLES}
    for run in runs:
        by_kind["backup" if run.kind == "restore" else run.kind].append(run)
    migrations = migration_status(settings)
    pending = [m.name for m in migrations if m.applied_at is None]
    context: dict[str, Any] = {
        "user": user,
        "report": report,
        "days_text": days_until_full_text(report.days_until_full),
        "used_share": (1 - report.free_bytes / report.total_bytes) * 100 if report.total_bytes else None,
        "retention": kept,
        "installation_days": settings.retention_days,
        "retention_run_at": at.strftime("%H:%M") if at else "",
        "next_retention": next_slot(at, datetime.now(UTC)) if at else None,
        "runs": by_kind,
        "titles": KIND_TITLES,
        "applied": len(migrations) - len(pending),
        "pending": pending,
        "latest": max((m.name for m in migrations if m.applied_at is not None), default=""),
        "door": door_status(settings),
        "rate_window": RATE_WINDOW_SECONDS,
        "outcomes": _outcomes(settings),
        "outcome_labels": OUTCOME_LABELS,
    }
    return render(request, "operations.html", context)


def _outcomes(settings: Any) -> list[tuple[str, int]]:
    write_pending(settings)  # the counts this process holds, as the usage page does
    return outcome_totals(get_warehouse(settings))
