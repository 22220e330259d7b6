"""Teams of an organization's members, and what an assignee written as text names.

An assignee is written as a member's e-mail or ``#team-slug`` (docs/issues.md); :func:`resolve_assignee` turns
that text into one member or one team of the caller's organization, or says plainly why it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import Membership, Team, TeamMember, User
from stacklens.errors import Conflict, InvalidInput, NotFound

_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


@dataclass(frozen=True)
class Assignee:
    """One member (``user_id``, ``email``) or one team (``team_id``, ``slug``) of an organization."""

    user_id: int | None = None
    email: str = ""
    team_id: int | None = None
    slug: str = ""

    @property
    def label(self) -> str:
        """How pages and the API write it: the e-mail, or ``#slug``."""
        return f"#{self.slug}" if self.team_id is not None else self.email


@dataclass(frozen=True)
class TeamRow:
    id: int
    slug: str
    name: str
    members: tuple[str, ...]  # e-mails, sorted


def _check_slug(slug: str) -> str:
    slug = (slug or "").strip().lstrip("#").lower()
    if not _SLUG.fullmatch(slug):
        raise InvalidInput(
            "slug: use 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit"
        )
    return slug


def list_teams(session: Session, org_id: int) -> list[TeamRow]:
    """The organization's teams by slug, each with its members' e-mails."""
    teams = session.scalars(select(Team).where(Team.org_id == org_id).order_by(Team.slug)).all()
    members: dict[int, list[str]] = {t.id: [] for t in teams}
    if teams:
        rows = session.execute(
            select(TeamMember.team_id, User.email)
            .join(User, User.id == TeamMember.user_id)
            .join(Team, Team.id == TeamMember.team_id)
            .where(Team.org_id == org_id)
        )
        for team_id, email in rows:
            members[team_id].append(email)
    return [TeamRow(t.id, t.slug, t.name, tuple(sorted(members[t.id]))) for t in teams]


def team_by_slug(session: Session, org_id: int, slug: str) -> Team:
    team = session.scalar(select(Team).where(Team.org_id == org_id, Team.slug == slug.lstrip("#").lower()))
    if team is None:
        raise NotFound(f"no team #{slug.lstrip('#')} in this organization")
    return team


def create_team(
    session: Session, org_id: int, slug: str, name: str = "", actor_user_id: int | None = None
) -> Team:
    slug = _check_slug(slug)
    name = (name or "").strip() or slug
    if len(name) > 200:
        raise InvalidInput("name: at most 200 characters")
    if session.scalar(select(Team.id).where(Team.org_id == org_id, Team.slug == slug)):
        raise Conflict(f"a team #{slug} already exists")
    team = Team(org_id=org_id, slug=slug, name=name)
    session.add(team)
    session.flush()
    record_activity(session, org_id, "team.created", "team", team.id, actor_user_id, {"slug": slug})
    return team


def member_by_email(session: Session, org_id: int, email: str) -> User:
    """A member of the organization by e-mail (any case); :class:`NotFound` for anyone else."""
    user = session.scalar(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id, User.email == (email or "").strip().lower())
    )
    if user is None:
        raise NotFound(f"{(email or '').strip()!r} is not a member of this organization")
    return user


def set_members(
    session: Session, org_id: int, slug: str, emails: list[str], actor_user_id: int | None = None
) -> TeamRow:
    """Make the team's members exactly ``emails`` (each must be a member of the organization)."""
    team = team_by_slug(session, org_id, slug)
    users = [
        member_by_email(session, org_id, email) for email in dict.fromkeys(e.strip().lower() for e in emails)
    ]
    wanted = {u.id for u in users}
    current = {m.user_id: m for m in session.scalars(select(TeamMember).where(TeamMember.team_id == team.id))}
    for user_id, row in current.items():
        if user_id not in wanted:
            session.delete(row)
    for user_id in wanted - set(current):
        session.add(TeamMember(team_id=team.id, user_id=user_id))
    session.flush()
    emails_sorted = tuple(sorted(u.email for u in users))
    record_activity(
        session,
        org_id,
        "team.members_changed",
        "team",
        team.id,
        actor_user_id,
        {"slug": team.slug, "members": list(emails_sorted)},
    )
    return TeamRow(team.id, team.slug, team.name, emails_sorted)


def teams_of_user(session: Session, org_id: int, user_id: int) -> list[int]:
    """Ids of the organization's teams the person belongs to."""
    return list(
        session.scalars(
            select(Team.id)
            .join(TeamMember, TeamMember.team_id == Team.id)
            .where(Team.org_id == org_id, TeamMember.user_id == user_id)
        )
    )


def team_member_ids(session: Session, org_id: int, team_id: int) -> list[int]:
    return list(
        session.scalars(
            select(TeamMember.user_id)
            .join(Team, Team.id == TeamMember.team_id)
            .where(Team.org_id == org_id, Team.id == team_id)
        )
    )


def resolve_assignee(session: Session, org_id: int, text: str) -> Assignee:
    """``someone@example.com`` → that member; ``#slug`` → that team; anything else is refused by name."""
    text = (text or "").strip()
    if text.startswith("#"):
        team = team_by_slug(session, org_id, text[1:])
        return Assignee(team_id=team.id, slug=team.slug)
    if "@" not in text:
        raise InvalidInput("assignee: a member's e-mail, #team-slug, or null")
    user = member_by_email(session, org_id, text)
    return Assignee(user_id=user.id, email=user.email)
