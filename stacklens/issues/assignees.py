"""Who an issue is assigned to (a member or a team), changes of it, and the list's ``assigned:`` filters.

The assignee lives in the control store (``issue_assignees``) beside the people and teams it names; each
change appends a line to the issue's own history (``issue_actions``) and to the organization's activity
log. Callers check first that the issue exists in the caller's project (the warehouse knows issues); every
query here is scoped by ``org_id`` and ``project_id``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import IssueAssignee, Membership, Team, User, utcnow
from stacklens.control.teams import Assignee, resolve_assignee, teams_of_user
from stacklens.errors import InvalidInput
from stacklens.issues.history import append_history
from stacklens.issues.notifications import Notifier, assignee_people, notify

ASSIGNED = "assigned"
UNASSIGNED = "unassigned"
NOBODY = "none"  # the forms' choice that unassigns


@dataclass(frozen=True)
class CurrentAssignee:
    """The assignee as pages and the API show it."""

    label: str  # e-mail or #slug
    user_id: int | None
    team_id: int | None
    assigned_at: datetime
    assigned_by: str
    rule: str  # the ownership rule that matched ("path:src/checkout/* #payments"), "" when a person assigned


def assignees_of(
    session: Session, org_id: int, project_id: int, issue_ids: list[int]
) -> dict[int, CurrentAssignee]:
    """The current assignee of each of ``issue_ids`` that has one."""
    if not issue_ids:
        return {}
    rows = session.execute(
        select(IssueAssignee, User.email, Team.slug)
        .outerjoin(User, User.id == IssueAssignee.user_id)
        .outerjoin(Team, Team.id == IssueAssignee.team_id)
        .where(
            IssueAssignee.org_id == org_id,
            IssueAssignee.project_id == project_id,
            IssueAssignee.issue_id.in_([int(i) for i in issue_ids]),
        )
    )
    found: dict[int, CurrentAssignee] = {}
    for row, email, slug in rows:
        label = f"#{slug}" if row.team_id is not None else str(email or "")
        found[int(row.issue_id)] = CurrentAssignee(
            label, row.user_id, row.team_id, row.assigned_at, row.assigned_by, row.rule
        )
    return found


def assign(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    assignee: Assignee | None,
    *,
    actor: str,
    actor_user_id: int | None = None,
    rule: str = "",
    notifier: Notifier | None = None,
) -> bool:
    """Assign the issue to ``assignee`` (``None``: unassign) as ``actor``; ``False`` when nothing changes
    (the same assignee again, or unassigning an unassigned issue), so no history line says nothing. With a
    ``notifier``, the new assignee (a team: its members) is told, as each chose."""
    current = session.scalar(
        select(IssueAssignee).where(
            IssueAssignee.org_id == org_id,
            IssueAssignee.project_id == project_id,
            IssueAssignee.issue_id == issue_id,
        )
    )
    now = utcnow()
    if assignee is None:
        if current is None:
            return False
        previous = assignees_of(session, org_id, project_id, [issue_id])[issue_id].label
        session.delete(current)
        detail = {"assignee": previous}
        action = UNASSIGNED
    else:
        if current is not None and (current.user_id, current.team_id) == (assignee.user_id, assignee.team_id):
            return False
        if current is None:
            current = IssueAssignee(org_id=org_id, project_id=project_id, issue_id=issue_id)
            session.add(current)
        current.user_id, current.team_id = assignee.user_id, assignee.team_id
        current.assigned_at, current.assigned_by, current.rule = now, actor, rule
        detail = {"assignee": assignee.label, "rule": rule} if rule else {"assignee": assignee.label}
        action = ASSIGNED
    append_history(
        session,
        org_id,
        project_id,
        issue_id,
        action,
        actor=actor,
        actor_user_id=actor_user_id,
        detail=detail,
        at=now,
    )
    session.flush()
    if assignee is not None:
        why = f" (matched {rule})" if rule else ""
        notify(
            session,
            notifier,
            org_id,
            project_id,
            issue_id,
            "assigned",
            assignee_people(session, org_id, assignee.user_id, assignee.team_id),
            headline=f"Assigned to {'you' if assignee.team_id is None else assignee.label}",
            text=f"{actor} assigned it to {assignee.label}{why}.",
            actor_user_id=actor_user_id,
        )
    return True


def assign_text(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    text: str | None,
    *,
    actor: str,
    actor_user_id: int | None = None,
    notifier: Notifier | None = None,
) -> bool:
    """:func:`assign` with the assignee as written (e-mail, ``#slug``; ``None`` or "" unassigns)."""
    assignee = resolve_assignee(session, org_id, text) if text else None
    return assign(
        session,
        org_id,
        project_id,
        issue_id,
        assignee,
        actor=actor,
        actor_user_id=actor_user_id,
        notifier=notifier,
    )


def assignee_choices(session: Session, org_id: int) -> list[tuple[str, str]]:
    """(value, label) of everyone an issue can be assigned to: members by e-mail, then teams by slug."""
    members = session.scalars(
        select(User.email).join(Membership, Membership.user_id == User.id).where(Membership.org_id == org_id)
    )
    teams = session.scalars(select(Team.slug).where(Team.org_id == org_id).order_by(Team.slug))
    return [(e, e) for e in sorted(members)] + [(f"#{s}", f"#{s} (team)") for s in teams]


@dataclass(frozen=True)
class AssigneeFilter:
    """The issue ids an ``assigned:`` filter keeps (``only``) or drops (``exclude``)."""

    only: list[int] | None = None  # None: no restriction; []: nothing matches
    exclude: tuple[int, ...] = ()


def assignee_filter(
    session: Session, org_id: int, project_id: int, assigned: str, viewer_user_id: int | None
) -> AssigneeFilter:
    """The ids for ``assigned`` (checked by ``IssueFilters.validate``: ``none``, ``me``, ``#team`` or an
    e-mail); ``me`` is the viewer or a team they are in."""
    if not assigned:
        return AssigneeFilter()
    base = select(IssueAssignee.issue_id).where(
        IssueAssignee.org_id == org_id, IssueAssignee.project_id == project_id
    )
    if assigned == "none":
        return AssigneeFilter(exclude=tuple(int(i) for i in session.scalars(base)))
    if assigned == "me":
        if viewer_user_id is None:
            raise InvalidInput(
                "assigned:me needs a signed-in person (an API key is nobody); name the assignee"
            )
        teams = teams_of_user(session, org_id, viewer_user_id)
        condition = IssueAssignee.user_id == viewer_user_id
        if teams:
            condition = condition | IssueAssignee.team_id.in_(teams)
        return AssigneeFilter(only=[int(i) for i in session.scalars(base.where(condition))])
    try:
        target = resolve_assignee(session, org_id, assigned)
    except LookupError:
        return AssigneeFilter(only=[])  # nobody by that name here: nothing is assigned to them
    if target.team_id is not None:
        return AssigneeFilter(
            only=[int(i) for i in session.scalars(base.where(IssueAssignee.team_id == target.team_id))]
        )
    return AssigneeFilter(
        only=[int(i) for i in session.scalars(base.where(IssueAssignee.user_id == target.user_id))]
    )
