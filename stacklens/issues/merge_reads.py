"""What the merges recorded, read back: the issue a merged-away id leads to, the fingerprints an issue holds
through merges, and the issue page's "Merged issues" with their events now.

The overrides are written by :mod:`stacklens.issues.merges` (``issue_merges`` in the control store); these
reads never change them, so the issue pages, the API's redirects and the event reads can use them without
taking the project's grouping claim. Every function is scoped by ``org_id``: another organization's merge
reads as none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import IssueMerge
from stacklens.ingest.grouping import issue_id_for
from stacklens.warehouse.queries import run_query


@dataclass(frozen=True)
class Fingerprint:
    """One fingerprint of an issue: its events and the exception type they raise."""

    fingerprint: str
    own_issue_id: int  # the issue the fingerprint gives by itself
    exception_type: str
    events: int


@dataclass(frozen=True)
class MergedGroup:
    """A row of the issue page's "Merged issues": one fingerprint merged in, with its stored events."""

    fingerprint: str
    own_issue_id: int
    exception_type: str
    events: int
    merged_at: Any
    merged_by: str


def merged_into(session: Session, org_id: int, issue_id: int) -> tuple[int, int] | None:
    """``(project_id, target)`` when ``issue_id`` is an issue of the organization merged into another."""
    row = session.execute(
        select(IssueMerge.project_id, IssueMerge.target_issue_id)
        .where(IssueMerge.org_id == org_id, IssueMerge.source_issue_id == issue_id)
        .order_by(IssueMerge.merged_at.desc(), IssueMerge.id.desc())
        .limit(1)
    ).first()
    # Targets are kept current (a merge of a target moves its rows on): no chain to follow.
    return (int(row[0]), int(row[1])) if row is not None else None


def merged_fingerprints(session: Session, org_id: int, project_id: int, issue_id: int) -> list[IssueMerge]:
    """The overrides that put fingerprints into ``issue_id`` (its "Merged issues"), oldest first."""
    return list(
        session.scalars(
            select(IssueMerge)
            .where(
                IssueMerge.org_id == org_id,
                IssueMerge.project_id == project_id,
                IssueMerge.target_issue_id == issue_id,
            )
            .order_by(IssueMerge.merged_at, IssueMerge.id)
        )
    )


def fingerprints_of(session: Session, org_id: int, project_id: int, issue_id: int, own: str) -> list[str]:
    """Every fingerprint whose events are in the issue: its own (``own``, when it still holds it) and the
    merged ones. What event reads filter on (the events' sort key)."""
    merged = [m.fingerprint for m in merged_fingerprints(session, org_id, project_id, issue_id)]
    return sorted({*merged, *([own] if own else [])})


def fingerprints_in(
    client: Client, org_id: int, project_id: int, issue_ids: Sequence[int]
) -> list[Fingerprint]:
    """The fingerprints of the issues' stored events, most events first (what a merge moves, and the page's
    "Merged issues" counts)."""
    rows = run_query(
        client,
        "issues/merges/fingerprints",
        {"org_id": org_id, "project_id": project_id, "issue_ids": list(issue_ids)},
    )
    return [
        Fingerprint(
            str(r["fingerprint"]),
            issue_id_for(project_id, str(r["fingerprint"])),
            str(r["exception_type"]),
            int(r["events"]),
        )
        for r in rows
    ]


def merged_groups(
    session: Session, client: Client, org_id: int, project_id: int, issue_id: int
) -> list[MergedGroup]:
    """The fingerprints merged into the issue, each with its events now (most first); [] for most issues (no
    warehouse read then)."""
    rows = merged_fingerprints(session, org_id, project_id, issue_id)
    if not rows:
        return []
    counts = {f.fingerprint: f for f in fingerprints_in(client, org_id, project_id, [issue_id])}
    groups = [
        MergedGroup(
            r.fingerprint,
            issue_id_for(project_id, r.fingerprint),
            # A fingerprint whose events are all gone keeps the type recorded when it was merged.
            counts[r.fingerprint].exception_type if r.fingerprint in counts else r.exception_type,
            counts[r.fingerprint].events if r.fingerprint in counts else 0,
            r.merged_at,
            r.merged_by,
        )
        for r in rows
    ]
    return sorted(groups, key=lambda g: (-g.events, g.fingerprint))
