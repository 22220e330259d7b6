"""Merging issues and splitting them again: a recorded grouping override on top of the frozen versions.

Grouping never changes: an event keeps the fingerprint its version gave it, and a fingerprint's own issue id is
derived from it (:func:`stacklens.ingest.grouping.issue_id_for`). A merge records, per fingerprint of the merged
issues, the issue that now holds it (``issue_merges`` in the control store). Ingest reads a project's overrides
with its DSN key (:func:`overrides_of`), so new events and re-ingested ones land on the target; the stored events
are moved by a warehouse mutation of their ``issue_id`` and every insert-time table keyed by issue is fed again
from them (:func:`regroup`), so the list, the page, the API, charts, tags, Explore and alert measures all read one
issue. A split deletes overrides: those fingerprints fall back to their own derived issue, with the same regroup.

Every function is scoped by ``org_id``: an issue of another organization is "not found", never merged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.issue_merges import overrides_of
from stacklens.control.models import IssueAction, IssueMerge, Project, utcnow
from stacklens.errors import InvalidInput, NotFound
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.reads import issue_summary
from stacklens.warehouse.queries import load_query, run_query

MERGED = "merged"  # issue_actions.action on the surviving issue
MERGED_AWAY = "merged_into"  # on each issue merged into another
SPLIT = "split"  # on the issue split and on each issue split out
MAX_MERGE = 100  # issues merged at once: the list's page at most

__all__ = ["merge", "merged_into", "overrides_of", "split"]


@dataclass(frozen=True)
class Fingerprint:
    """One fingerprint of an issue: its events and the exception type they raise."""

    fingerprint: str
    own_issue_id: int  # the issue the fingerprint gives by itself
    exception_type: str
    events: int


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
    """Every fingerprint whose events are in the issue: its own (``own``, when it still holds it) and the merged
    ones. What event reads filter on (the events' sort key)."""
    merged = [m.fingerprint for m in merged_fingerprints(session, org_id, project_id, issue_id)]
    return sorted({*merged, *([own] if own else [])})


def _project_ids(session: Session, org_id: int) -> list[int]:
    return list(session.scalars(select(Project.id).where(Project.org_id == org_id)))


def _find(session: Session, client: Client, org_id: int, issue_id: int) -> int:
    """The project of the organization's issue ``issue_id``; :class:`NotFound` otherwise."""
    for project_id in _project_ids(session, org_id):
        if issue_summary(client, org_id, project_id, issue_id) is not None:
            return project_id
    raise NotFound(f"no issue {issue_id} in this organization")


def _fingerprints(client: Client, org_id: int, project_id: int, issue_ids: list[int]) -> list[Fingerprint]:
    rows = run_query(
        client,
        "issues/merges/fingerprints",
        {"org_id": org_id, "project_id": project_id, "issue_ids": issue_ids},
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


def fingerprints_in(client: Client, org_id: int, project_id: int, issue_id: int) -> list[Fingerprint]:
    """The fingerprints of the issue's stored events, most events first (the page's "Merged issues")."""
    return _fingerprints(client, org_id, project_id, [issue_id])


@dataclass(frozen=True)
class MergedGroup:
    """A row of the issue page's "Merged issues": one fingerprint merged in, with its stored events."""

    fingerprint: str
    own_issue_id: int
    exception_type: str
    events: int
    merged_at: Any
    merged_by: str


def merged_groups(
    session: Session, client: Client, org_id: int, project_id: int, issue_id: int
) -> list[MergedGroup]:
    """The fingerprints merged into the issue, each with its events now (most first); [] for most issues (no
    warehouse read then)."""
    rows = merged_fingerprints(session, org_id, project_id, issue_id)
    if not rows:
        return []
    counts = {f.fingerprint: f for f in fingerprints_in(client, org_id, project_id, issue_id)}
    groups = [
        MergedGroup(
            r.fingerprint,
            issue_id_for(project_id, r.fingerprint),
            counts[r.fingerprint].exception_type if r.fingerprint in counts else r.exception_type,
            counts[r.fingerprint].events if r.fingerprint in counts else 0,
            r.merged_at,
            r.merged_by,
        )
        for r in rows
    ]
    return sorted(groups, key=lambda g: (-g.events, g.fingerprint))


def merge(
    session: Session,
    client: Client,
    org_id: int,
    issue_ids: Iterable[int | str],
    *,
    into: int | str | None = None,
    actor: str,
    actor_user_id: int | None = None,
) -> MergeResult:
    """Merge the organization's issues ``issue_ids`` (at least two, one project) into one.

    The surviving issue is ``into`` when given (it must be one of them), else the one with the most events
    (ties: the first listed), as Sentry keeps the largest. Its id stays; the others' fingerprints move to it
    and their ids redirect to it (:func:`merged_into`).
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
    projects = {issue_id: _find(session, client, org_id, issue_id) for issue_id in ids}
    project_id = projects[ids[0]]
    if any(p != project_id for p in projects.values()):
        raise InvalidInput("ids: issues of different projects cannot be merged")
    found = _fingerprints(client, org_id, project_id, ids)
    if into is not None:
        target = int(str(into))
    else:
        events = {i: (issue_summary(client, org_id, project_id, i) or {"events": 0})["events"] for i in ids}
        target = max(ids, key=lambda i: (int(events[i]), -ids.index(i)))
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
    for row in session.scalars(
        select(IssueMerge).where(IssueMerge.project_id == project_id, IssueMerge.target_issue_id.in_(merged))
    ):
        row.target_issue_id = target
    fingerprints = [f.fingerprint for f in moving]
    _history(
        session,
        org_id,
        project_id,
        target,
        MERGED,
        actor,
        actor_user_id,
        {"merged": [str(i) for i in merged]},
    )
    for issue_id in merged:
        _history(
            session, org_id, project_id, issue_id, MERGED_AWAY, actor, actor_user_id, {"into": str(target)}
        )
    # Committed before the warehouse moves anything: events ingested from here on land on the target.
    session.commit()
    regroup(client, org_id, project_id, {f: target for f in fingerprints}, [target, *merged])
    return MergeResult(project_id, target, merged, fingerprints)


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
) -> SplitResult:
    """Give the chosen merged fingerprints of ``issue_id`` (or every merged fingerprint raising one of
    ``exception_types``) their own issue back; the issue keeps the rest."""
    project_id = _find(session, client, org_id, issue_id)
    chosen_fps = {str(f) for f in fingerprints}
    chosen_types = {str(t) for t in exception_types}
    if not chosen_fps and not chosen_types:
        raise InvalidInput("fingerprints: name the fingerprints (or exception_types) to split out")
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
    _history(session, org_id, project_id, issue_id, SPLIT, actor, actor_user_id, detail)
    for new in new_issues:
        _history(session, org_id, project_id, new, SPLIT, actor, actor_user_id, {"from": str(issue_id)})
    session.commit()
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


def _history(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    action: str,
    actor: str,
    actor_user_id: int | None,
    detail: dict[str, Any],
) -> None:
    session.add(
        IssueAction(
            org_id=org_id,
            project_id=project_id,
            issue_id=issue_id,
            at=utcnow(),
            actor=actor,
            action=action,
            detail=detail,
        )
    )
    record_activity(
        session,
        org_id,
        f"issue.{action}",
        "issue",
        None,  # issue ids are 52-bit: they go in the detail, the target column is 32-bit
        actor_user_id,
        {**detail, "issue_id": str(issue_id), "project_id": project_id, "actor": actor},
    )


# The view's SELECT reads `events`; a regroup runs the same SELECT over the moved issues' events only.
_FROM_EVENTS = re.compile(r"\bFROM\s+(`?\w+`?\.)?`?events`?(?=[\s)]|$)")
_NAME = re.compile(r"^\w+$")


def regroup(
    client: Client, org_id: int, project_id: int, moves: dict[str, int], issue_ids: list[int]
) -> None:
    """Move the stored events of ``moves`` (fingerprint → issue) and rebuild every insert-time table keyed by
    issue for ``issue_ids`` (every issue that lost or gained events) from the stored events.

    Each table is fed by the very SELECT of its materialized view (read from the engine, so no aggregation is
    written twice), over ``events`` narrowed to the project's issues. An event landing on one of these issues
    in the milliseconds between a table's clearing and its feed is counted twice there (its own insert and the
    feed); a merge is a rare act, and docs/decisions.md records the limit.
    """
    if moves:
        fps = sorted(moves)
        client.command(
            load_query("issues/merges/regroup_events"),
            parameters={
                "org_id": org_id,
                "project_id": project_id,
                "fingerprints": fps,
                "issue_ids": [moves[f] for f in fps],
            },
        )
    regrouped = sorted({int(i) for i in issue_ids})
    scope = {"org_id": org_id, "project_id": project_id, "issue_ids": regrouped}
    # The narrowing is a named text with server-side parameters; only the view's own SELECT is spliced around it.
    narrowed = " ".join(
        line for line in load_query("issues/merges/narrowed_events").splitlines() if not line.startswith("--")
    )
    for view in run_query(client, "issues/merges/fed_tables"):
        target = str(view["target"])
        if not _NAME.match(target):
            continue
        client.command(load_query("issues/merges/clear_table"), parameters={**scope, "table": target})
        feed = _FROM_EVENTS.sub(lambda _: narrowed, str(view["query"]), count=1)
        # A view's TO table takes the SELECT's columns by name; an INSERT … SELECT by position: name them.
        fed = {str(r[0]) for r in client.query(f"DESCRIBE TABLE ({feed})", parameters=scope).result_rows}
        table_columns = [
            str(r["name"]) for r in run_query(client, "issues/merges/columns", {"table": target})
        ]
        names = ", ".join(f"`{c}`" for c in table_columns if c in fed)
        # The table and column names are the engine's own (system tables), the view's SELECT its definition.
        client.command(f"INSERT INTO `{target}` ({names}) SELECT {names} FROM ({feed})", parameters=scope)  # noqa: S608
    _refresh_marts(client, org_id, project_id, regrouped)


# The marts built on schedule from the insert-time tables that keep a row per regrouped issue: each is cleared for
# those issues, then rebuilt for them at once by the asset's own statement (pipelines/assets/issues.py), so the
# release pages, trends and the issues mart say what the list says from the merge on, not from the next tick.
# (related_issues pairs follow on the asset's next run that sees new elements of the issues.)
_MARTS = ("issues", "issue_users", "issue_daily_counts")


def _refresh_marts(client: Client, org_id: int, project_id: int, issue_ids: list[int]) -> None:
    scope = {"org_id": org_id, "project_id": project_id, "issue_ids": issue_ids}
    for table in _MARTS:
        client.command(load_query("issues/merges/clear_table"), parameters={**scope, "table": table})
    client.command(load_query("issues/merges/issue_user_members"), parameters=scope)
    version = datetime.now(UTC)
    client.command(
        load_query("pipelines/issues_refresh"),
        parameters={**scope, "since": version, "materialized_at": version},
    )
    days = run_query(client, "issues/merges/issue_days", scope)[0]
    if int(days["days"]):
        first, last = days["first_day"], days["last_day"]
        client.command(
            load_query("pipelines/issue_daily_counts"),
            parameters={
                "start": datetime(first.year, first.month, first.day, tzinfo=UTC),
                "end": datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1),
                "materialized_at": version,
            },
        )
