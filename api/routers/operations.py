"""The operator's door to maintenance while `stacklens serve` owns the embedded warehouse
(docs/operations.md), and a
project's retention for its organization.

``POST /api/operations/backup``, ``GET /api/operations/storage`` and ``POST /api/operations/retention`` answer
local requests holding the server's token (``<data_dir>/pipelines_token``): `stacklens backup`, `status
--storage` and `retention run` call them, as the warehouse is open in this process only. Organization API keys
never reach them (a backup spans every organization). ``GET/PUT /api/projects/{slug}/retention`` take the
organization's API key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from api.deps import ApiAuth, AppSettings, DbSession, LocalOperator, OrgProject
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.project_retention import (
    ProjectRetention,
    retention_of,
    set_event_caps,
    set_project_retention,
)
from stacklens.operations.backup import BackupError, run_backup
from stacklens.operations.engine_backup import EngineBackupError
from stacklens.operations.retention import apply_retention
from stacklens.operations.storage import measure_storage
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["operations"])
OPERATOR_ONLY = [Depends(LocalOperator("the operations endpoint"))]


class BackupBody(BaseModel):
    to: str = Field(description="An absolute path on the server's host: a new or empty directory.")
    incremental_from: str | None = Field(default=None, description="A full backup's directory.")
    passphrase: str | None = Field(default=None, description="Seal the backup with it (never stored).")


@router.post("/operations/backup", include_in_schema=False, dependencies=OPERATOR_ONLY)
async def backup(body: BackupBody, settings: AppSettings) -> dict[str, Any]:
    """`stacklens backup` through the server that owns the warehouse: the manifest and the maintenance
    log's row."""
    for name, value in (("to", body.to), ("incremental_from", body.incremental_from)):
        if value is not None and not Path(value).is_absolute():
            raise ApiError(400, "Bad Request", f"{name}: must be an absolute path")
    base = Path(body.incremental_from) if body.incremental_from else None
    try:
        manifest, row = await run_in_threadpool(
            run_backup, settings, Path(body.to), base, body.passphrase or None
        )
    except (BackupError, EngineBackupError, OSError) as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    return {"manifest": manifest.as_json(), "run": row}


@router.get("/operations/storage", include_in_schema=False, dependencies=OPERATOR_ONLY)
async def storage(settings: AppSettings) -> dict[str, Any]:
    report = await run_in_threadpool(measure_storage, settings)
    return report.as_json()


@router.post("/operations/retention", include_in_schema=False, dependencies=OPERATOR_ONLY)
async def retention(settings: AppSettings) -> dict[str, Any]:
    outcome, row = await run_in_threadpool(apply_retention, settings)
    return {"outcome": outcome.as_json(), "run": row}


ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "Days out of 1..STACKLENS_RETENTION_DAYS, or a cap out of range",
    },
    404: {"model": ErrorBody, "description": "No project with this slug in the key's organization"},
}


class RetentionIn(BaseModel):
    days: int | None = Field(
        description="Days of raw data (events, transactions, spans, sessions, logs, replays) the project keeps, "
        "from 1 to the installation's STACKLENS_RETENTION_DAYS; null: the installation's."
    )
    max_events_per_issue: int | None = Field(
        default=None,
        description="Most error events kept per issue, the oldest removed first by the retention run; null: no "
        "cap. Left out: unchanged. The issue counters keep counting every event received.",
    )
    max_events_per_project: int | None = Field(
        default=None,
        description="Most error events kept in the whole project, the oldest removed first; null: no cap. Left "
        "out: unchanged.",
    )


class RetentionOut(BaseModel):
    project: str = Field(description="The project's slug.")
    days: int | None = Field(description="The project's own days; null: the installation's.")
    installation_days: int = Field(description="What the installation keeps (the most a project keeps).")
    max_events_per_issue: int | None = Field(description="Most error events kept per issue; null: no cap.")
    max_events_per_project: int | None = Field(
        description="Most error events kept in the project; null: no cap."
    )


def _out(slug: str, kept: ProjectRetention, settings: Settings) -> RetentionOut:
    return RetentionOut(
        project=slug,
        days=kept.days,
        installation_days=settings.retention_days,
        max_events_per_issue=kept.max_events_per_issue,
        max_events_per_project=kept.max_events_per_project,
    )


@router.get("/projects/{slug}/retention", response_model=RetentionOut, responses=ERRORS)
def get_retention(project: OrgProject, session: DbSession, settings: AppSettings) -> RetentionOut:
    """How many days of raw data the project keeps, and its event caps."""
    return _out(project.slug, retention_of(session, project.id), settings)


@router.put("/projects/{slug}/retention", response_model=RetentionOut, responses=ERRORS)
def put_retention(
    project: OrgProject, body: RetentionIn, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> RetentionOut:
    """Set the days of raw data the project keeps (and, when given, its event caps); the next retention run
    (daily at STACKLENS_RETENTION_RUN_AT, or `stacklens retention run`) deletes what is older or over a cap
    and frees the disk."""
    kept = set_project_retention(session, identity.org_id, project.id, body.days, settings.retention_days)
    given = body.model_fields_set
    if given & {"max_events_per_issue", "max_events_per_project"}:
        kept = set_event_caps(
            session,
            identity.org_id,
            project.id,
            body.max_events_per_issue if "max_events_per_issue" in given else kept.max_events_per_issue,
            body.max_events_per_project if "max_events_per_project" in given else kept.max_events_per_project,
        )
    return _out(project.slug, kept, settings)
