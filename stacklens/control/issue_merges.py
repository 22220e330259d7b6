"""Reads of the recorded merges (``issue_merges``) that ingest needs: a project's overrides.

Kept in the control layer, beside the table, so the DSN look-up (:mod:`stacklens.control.auth`) reads them in
its session without importing the issue workflow (:mod:`stacklens.issues.merges` writes them).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import IssueMerge


def overrides_of(session: Session, project_id: int) -> dict[str, int]:
    """The project's merged fingerprints → the issue each belongs to (what ingest stamps on new events)."""
    rows = session.execute(
        select(IssueMerge.fingerprint, IssueMerge.target_issue_id).where(IssueMerge.project_id == project_id)
    )
    return {str(fingerprint): int(target) for fingerprint, target in rows}


def has_merges(session: Session, org_id: int, project_id: int, issue_id: int) -> bool:
    """Whether fingerprints were merged into the issue (its event reads then cover all of its
    fingerprints)."""
    found = session.scalar(
        select(IssueMerge.id)
        .where(
            IssueMerge.org_id == org_id,
            IssueMerge.project_id == project_id,
            IssueMerge.target_issue_id == issue_id,
        )
        .limit(1)
    )
    return found is not None
