"""Merging issues and splitting them again: a recorded grouping override on top of the frozen versions.

Grouping never changes: an event keeps the fingerprint its version gave it, and a fingerprint's own issue id
is derived from it (:func:`stacklens.ingest.grouping.issue_id_for`). A merge records, per fingerprint of the
merged issues, the issue that now holds it (``issue_merges`` in the control store). Ingest reads a project's
overrides with its DSN key (:func:`overrides_of`), so new events and re-ingested ones land on the target; the
stored events are moved by a warehouse mutation of their ``issue_id`` and every insert-time table keyed by
issue is fed again from them (:func:`~stacklens.issues.regroup.regroup`), so the list, the page, the API,
charts, tags, Explore and alert measures all read one issue. A split deletes overrides: those fingerprints
fall back to their own derived issue, with the same regroup.

Merges and splits of one project run one at a time, across processes
(:mod:`stacklens.control.grouping_claims`: a second one while the first runs answers 409), and read the
grouping only once they hold it. The project's events are held at the front door while the moved issues'
tables are fed again, and those answered before the merge committed land on the issue that holds their
fingerprint now (``hold_landing``, :mod:`stacklens.ingest.project_holds`). An override never names its
fingerprint's own issue, and never an issue merged away (chains are followed to the end).

Every function is scoped by ``org_id``: an issue of another organization is "not found", never merged. What
the merges recorded is read back by :mod:`stacklens.issues.merge_reads`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.grouping_claims import grouping_claimed
from stacklens.control.issue_merges import overrides_of
from stacklens.control.models import IssueMerge, Project, utcnow
from stacklens.errors import InvalidInput, NotFound
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.history import append_history
from stacklens.issues.merge_reads import fingerprints_in, merged_fingerprints
from stacklens.issues.reads import IssueSummary, issue_summary
from stacklens.issues.regroup import regroup
from stacklens.warehouse.queries import run_query

MERGED = "merged"  # issue_actions.action on the surviving issue
MERGED_AWAY = "merged_into"  # on each issue merged into another
SPLIT = "split"  # on the issue split and on each issue split out
MAX_MERGE = 100  # issues merged at once: the list's page at most

__all__ = ["merge", "split"]


class LandingHold(Protocol):
    """A hold of one project's event landing
    (:meth:`stacklens.ingest.front_door.door.FrontDoor.landing_held`)."""

    def redirect(self, moves: Mapping[str, int]) -> None:
        """Land the events of these fingerprints on the issue each names from now on."""


# Given the project, holds its landing for the block (the API and the pages pass the front door's).
HoldLanding = Callable[[int], AbstractContextManager[LandingHold]]


class _NoHold:
    def redirect(self, moves: Mapping[str, int]) -> None:
        """Nothing is held: events land as they are stamped."""


@contextlib.contextmanager
def _regrouping(session: Session, project_id: int, hold_landing: HoldLanding | None) -> Iterator[LandingHold]:
    """The project's grouping claimed and its landing held, for a merge or a split."""
    with grouping_claimed(session, project_id):
        # Read what the grouping is once the claim is held, not a snapshot from before it.
        session.commit()
        if hold_landing is None:
            yield _NoHold()
            return
        with hold_landing(project_id) as hold:
            yield hold


@dataclass(frozen=True)
class MergeResult:
    project_id: int
    target: int
    merged: list[int]  # the issues merged into the target
    fingerprints: list[str]


@dataclass(frozen=True)
class SplitResult:
    project_id: int
    issue_id: int
    new_issues: list[int]
    fingerprints: list[str]


def _project_ids(session: Session, org_id: int) -> list[int]:
    return list(session.scalars(select(Project.id).where(Project.org_id == org_id)))


def _located(session: Session, client: Client, org_id: int, issue_id: int) -> tuple[int, IssueSummary]:
    """The project and the summary of the organization's issue ``issue_id``; :class:`NotFound` otherwise."""
    for project_id in _project_ids(session, org_id):
        summary = issue_summary(client, org_id, project_id, issue_id)
        if summary is not None:
            return project_id, summary
    raise NotFound(f"no issue {issue_id} in this organization")


def _find(session: Session, client: Client, org_id: int, issue_id: int) -> int:
    """The project of the organization's issue ``issue_id``; :class:`NotFound` otherwise."""
    return _located(session, client, org_id, issue_id)[0]


def merge(
    session: Session,
    client: Client,
    org_id: int,
    issue_ids: Iterable[int | str],
    *,
    into: int | str | None = None,
    actor: str,
    actor_user_id: int | None = None,
    hold_landing: HoldLanding | None = None,
) -> MergeResult:
    """Merge the organization's issues ``issue_ids`` (at least two, one project) into one.

    The surviving issue is ``into`` when given (it must be one of them), else the one with the most events
    (ties: the first listed), as Sentry keeps the largest. Its id stays; the others' fingerprints move to it
    and their ids redirect to it (:func:`~stacklens.issues.merge_reads.merged_into`).
    """
    ids: list[int] = []
    for raw in issue_ids:
        text = str(raw).strip()
        if not text.isdigit():
            raise InvalidInput(f"ids: {str(raw)[:40]!r} is not an issue id")
        if int(text) not in ids:
            ids.append(int(text))
    if len(ids) < 2:
        raise InvalidInput("ids: name at least two different issues to merge")
    if len(ids) > MAX_MERGE:
        raise InvalidInput(f"ids: at most {MAX_MERGE} issues at once")
    if into is not None and (not str(into).isdigit() or int(str(into)) not in ids):
        raise InvalidInput("into: must be one of ids")
    with _regrouping(session, _find(session, client, org_id, ids[0]), hold_landing) as hold:
        return _merge(session, client, org_id, ids, into, actor, actor_user_id, hold)


def _merge(
    session: Session,
    client: Client,
    org_id: int,
    ids: list[int],
    into: int | str | None,
    actor: str,
    actor_user_id: int | None,
    hold: LandingHold,
) -> MergeResult:
    # Each issue's project and summary read once, after the claim: the summary's events choose the survivor.
    located = {issue_id: _located(session, client, org_id, issue_id) for issue_id in ids}
    project_id = located[ids[0]][0]
    if any(p != project_id for p, _ in located.values()):
        raise InvalidInput("ids: issues of different projects cannot be merged")
    found = fingerprints_in(client, org_id, project_id, ids)
    if into is not None:
        target = int(str(into))
    else:
        events = {i: int(located[i][1]["events"]) for i in ids}
        target = max(ids, key=lambda i: (events[i], -ids.index(i)))
    merged = [i for i in ids if i != target]
    current = _current_issue(client, org_id, project_id, [f.fingerprint for f in found])
    moving = [f for f in found if current.get(f.fingerprint) in merged]
    now = utcnow()
    for f in moving:
        row = session.scalar(
            select(IssueMerge).where(
                IssueMerge.project_id == project_id, IssueMerge.fingerprint == f.fingerprint
            )
        )
        if f.own_issue_id == target:  # merged back into its own issue: no override needed
            if row is not None:
                session.delete(row)
            continue
        if row is None:
            row = IssueMerge(org_id=org_id, project_id=project_id, fingerprint=f.fingerprint)
            session.add(row)
        row.source_issue_id = f.own_issue_id  # the id that redirects: the fingerprint's own issue
        row.target_issue_id = target
        row.exception_type = f.exception_type[:512]
        row.merged_at, row.merged_by = now, actor
    # Fingerprints merged into a merged issue earlier follow it to the target (their overrides named it).
    touched = {f.fingerprint for f in moving}
    for row in session.scalars(
        select(IssueMerge).where(IssueMerge.project_id == project_id, IssueMerge.target_issue_id.in_(merged))
    ):
        row.target_issue_id = target
        touched.add(row.fingerprint)
    touched |= _resolve_chains(session, project_id)
    fingerprints = [f.fingerprint for f in moving]
    by: dict[str, Any] = {"actor": actor, "actor_user_id": actor_user_id}
    append_history(
        session, org_id, project_id, target, MERGED, **by, detail={"merged": [str(i) for i in merged]}
    )
    for issue_id in merged:
        append_history(session, org_id, project_id, issue_id, MERGED_AWAY, **by, detail={"into": str(target)})
    # Committed before the warehouse moves anything: events prepared from here on land on the target, and the
    # hold stamps those prepared before it so as they land. Inside the hold no event of the project lands
    # while the moved issues' tables are cleared and fed again: one landing then would be counted twice.
    session.commit()
    hold.redirect(_now_holding(session, project_id, touched))
    regroup(client, org_id, project_id, {f: target for f in fingerprints}, [target, *merged])
    return MergeResult(project_id, target, merged, fingerprints)


def _resolve_chains(session: Session, project_id: int) -> set[str]:
    """Make every override of the project name the issue its fingerprint's events are in at the end of the
    chain (an override naming an issue whose own fingerprint was merged away follows it), and delete those
    that would name the fingerprint's own issue; the fingerprints changed."""
    session.flush()
    rows = list(session.scalars(select(IssueMerge).where(IssueMerge.project_id == project_id)))
    away = {issue_id_for(project_id, r.fingerprint): int(r.target_issue_id) for r in rows}
    changed: set[str] = set()
    for row in rows:
        own = issue_id_for(project_id, row.fingerprint)
        end, seen = int(row.target_issue_id), {own}
        while end in away and end not in seen:
            seen.add(end)
            end = away[end]
        if end == own:
            session.delete(row)
            changed.add(row.fingerprint)
        elif end != row.target_issue_id:
            row.target_issue_id = end
            changed.add(row.fingerprint)
    session.flush()
    return changed


def _now_holding(session: Session, project_id: int, fingerprints: Iterable[str]) -> dict[str, int]:
    """The issue each of ``fingerprints`` belongs to now: its override's, else its own."""
    overrides = overrides_of(session, project_id)
    return {f: overrides.get(f) or issue_id_for(project_id, f) for f in fingerprints}


def split(
    session: Session,
    client: Client,
    org_id: int,
    issue_id: int,
    *,
    fingerprints: Iterable[str] = (),
    exception_types: Iterable[str] = (),
    actor: str,
    actor_user_id: int | None = None,
    hold_landing: HoldLanding | None = None,
) -> SplitResult:
    """Give the chosen merged fingerprints of ``issue_id`` (or every merged fingerprint raising one of
    ``exception_types``) their own issue back; the issue keeps the rest."""
    chosen_fps = {str(f) for f in fingerprints}
    chosen_types = {str(t) for t in exception_types}
    project_id = _find(session, client, org_id, issue_id)
    if not chosen_fps and not chosen_types:
        raise InvalidInput("fingerprints: name the fingerprints (or exception_types) to split out")
    with _regrouping(session, project_id, hold_landing) as hold:
        return _split(
            session,
            client,
            org_id,
            project_id,
            issue_id,
            chosen_fps,
            chosen_types,
            actor,
            actor_user_id,
            hold,
        )


def _split(
    session: Session,
    client: Client,
    org_id: int,
    project_id: int,
    issue_id: int,
    chosen_fps: set[str],
    chosen_types: set[str],
    actor: str,
    actor_user_id: int | None,
    hold: LandingHold,
) -> SplitResult:
    rows = merged_fingerprints(session, org_id, project_id, issue_id)
    by_fp = {r.fingerprint: r for r in rows}
    unknown = sorted(chosen_fps - set(by_fp))
    if unknown:
        raise InvalidInput(f"fingerprints: {unknown[0][:64]!r} was not merged into issue {issue_id}")
    chosen = [
        r for r in rows if r.fingerprint in chosen_fps or (chosen_types and r.exception_type in chosen_types)
    ]
    if not chosen:
        raise InvalidInput(f"exception_types: no fingerprint merged into issue {issue_id} raises them")
    moves = {r.fingerprint: issue_id_for(project_id, r.fingerprint) for r in chosen}
    for r in chosen:
        session.delete(r)
    new_issues = sorted(set(moves.values()))
    detail: dict[str, Any] = {"fingerprints": sorted(moves), "issues": [str(i) for i in new_issues]}
    by: dict[str, Any] = {"actor": actor, "actor_user_id": actor_user_id}
    append_history(session, org_id, project_id, issue_id, SPLIT, **by, detail=detail)
    for new in new_issues:
        append_history(session, org_id, project_id, new, SPLIT, **by, detail={"from": str(issue_id)})
    session.commit()  # as in merge
    hold.redirect(moves)
    regroup(client, org_id, project_id, moves, [issue_id, *new_issues])
    return SplitResult(project_id, issue_id, new_issues, sorted(moves))


def _current_issue(client: Client, org_id: int, project_id: int, fingerprints: list[str]) -> dict[str, int]:
    if not fingerprints:
        return {}
    rows = run_query(
        client,
        "issues/merges/current_issue",
        {"org_id": org_id, "project_id": project_id, "fingerprints": fingerprints},
    )
    return {str(r["fingerprint"]): int(r["issue_id"]) for r in rows}
