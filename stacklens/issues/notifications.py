"""Issue news for people: the assignee (a member, or a team's members), members mentioned in a comment, and
members who watch an issue hear of it by e-mail, through the alert outbox (durable, retried, logged) on a
personal e-mail channel of theirs.

Each member chooses, per project and kind, ``none``, ``immediate`` (one e-mail per piece of news, sent by the
next outbox drain, within a minute) or ``daily`` (one digest a day of what waited, sent at
:data:`DIGEST_HOUR` UTC). Kinds: ``assigned`` (an issue assigned to you or your team — new issues the
ownership rules assign included), ``mentions`` (a comment that mentions you), ``comments`` (a comment on an
issue you are assigned to or watch), ``regressions`` (an issue you are assigned to or watch comes back
after it was resolved). Nobody is told of their own doing."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import escape
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.control.models import (
    AlertChannel,
    DigestItem,
    IssueAssignee,
    IssueNewsMark,
    IssueWatcher,
    Membership,
    NotificationSetting,
    Organization,
    Project,
    User,
    utcnow,
)
from stacklens.control.teams import team_member_ids
from stacklens.errors import InvalidInput, NotFound
from stacklens.issues.reads import issue_titles
from stacklens.public_url import public_base_url
from stacklens.settings import Settings
from stacklens.warehouse.queries import run_query

KINDS: dict[str, str] = {
    "assigned": "An issue is assigned to you or your team (by a person or the ownership rules)",
    "mentions": "A comment mentions you",
    "comments": "A comment on an issue you are assigned to or watch",
    "regressions": "An issue you are assigned to or watch comes back after it was resolved",
    "weekly": "The project's week: new issues, regressions, top issues, release health, failing budgets",
    "feedback": "New user feedback on the project (docs/feedback.md)",
}
MODES = ("none", "immediate", "daily")
# The modes each kind takes: the weekly summary is on (``weekly``, Mondays) or off.
KIND_MODES: dict[str, tuple[str, ...]] = {kind: MODES for kind in KINDS} | {"weekly": ("none", "weekly")}
DEFAULTS = {
    "assigned": "immediate",
    "mentions": "immediate",
    "comments": "immediate",
    "regressions": "immediate",
    "weekly": "none",
    "feedback": "none",
}
DIGEST_HOUR = 8  # UTC: the daily digest holds what waited until then


@dataclass(frozen=True)
class Notifier:
    """What a notification needs beyond the control store: the service's public address (links), the
    warehouse (the issue's title), and whether e-mail can go out at all (``STACKLENS_SMTP_URL`` set): without
    it nothing is queued, rather than every person's mail failing in the outbox."""

    base_url: str
    warehouse: Client | None = None
    mail: bool = True


def notifier_for(settings: Settings, warehouse: Client | None) -> Notifier:
    return Notifier(public_base_url(settings), warehouse, mail=bool(settings.smtp_url))


# --- settings ---------------------------------------------------------------------------------------------


def settings_of(session: Session, org_id: int, user_id: int) -> dict[str, dict[str, str]]:
    """Project slug → kind → mode for every project of the organization (defaults filled in)."""
    projects = session.execute(
        select(Project.id, Project.slug).where(Project.org_id == org_id).order_by(Project.slug)
    ).all()
    stored = {
        (row.project_id, row.kind): row.mode
        for row in session.scalars(
            select(NotificationSetting).where(
                NotificationSetting.org_id == org_id, NotificationSetting.user_id == user_id
            )
        )
    }
    return {slug: {kind: stored.get((pid, kind), DEFAULTS[kind]) for kind in KINDS} for pid, slug in projects}


def set_settings(
    session: Session, org_id: int, user_id: int, changes: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """Set modes per project slug and kind (only those given); :class:`InvalidInput` names a bad one."""
    rows = session.execute(select(Project.slug, Project.id).where(Project.org_id == org_id)).all()
    projects = {str(slug): int(pid) for slug, pid in rows}
    for slug, kinds in changes.items():
        if slug not in projects:
            raise NotFound(f"projects.{slug}: no such project in this organization")
        if not isinstance(kinds, dict):
            raise InvalidInput(f"projects.{slug}: give an object of kind → mode")
        for kind, mode in kinds.items():
            if kind not in KINDS:
                raise InvalidInput(f"projects.{slug}.{kind}: kind must be one of {', '.join(KINDS)}")
            if mode not in KIND_MODES[kind]:
                raise InvalidInput(
                    f"projects.{slug}.{kind}: mode must be one of {', '.join(KIND_MODES[kind])}"
                )
    for slug, kinds in changes.items():
        for kind, mode in kinds.items():
            row = session.scalar(
                select(NotificationSetting).where(
                    NotificationSetting.user_id == user_id,
                    NotificationSetting.project_id == projects[slug],
                    NotificationSetting.kind == kind,
                )
            )
            if row is None:
                row = NotificationSetting(
                    org_id=org_id, user_id=user_id, project_id=projects[slug], kind=kind
                )
                session.add(row)
            row.mode = mode
    session.flush()
    return settings_of(session, org_id, user_id)


def _mode(session: Session, user_id: int, project_id: int, kind: str) -> str:
    stored = session.scalar(
        select(NotificationSetting.mode).where(
            NotificationSetting.user_id == user_id,
            NotificationSetting.project_id == project_id,
            NotificationSetting.kind == kind,
        )
    )
    return stored or DEFAULTS[kind]


# --- watchers ---------------------------------------------------------------------------------------------


def watching(session: Session, org_id: int, project_id: int, issue_id: int, user_id: int) -> bool:
    return (
        session.scalar(
            select(IssueWatcher.id).where(
                IssueWatcher.org_id == org_id,
                IssueWatcher.project_id == project_id,
                IssueWatcher.issue_id == issue_id,
                IssueWatcher.user_id == user_id,
            )
        )
        is not None
    )


def set_watching(
    session: Session, org_id: int, project_id: int, issue_id: int, user_id: int, watch: bool
) -> None:
    row = session.scalar(
        select(IssueWatcher).where(
            IssueWatcher.org_id == org_id,
            IssueWatcher.project_id == project_id,
            IssueWatcher.issue_id == issue_id,
            IssueWatcher.user_id == user_id,
        )
    )
    if watch and row is None:
        session.add(IssueWatcher(org_id=org_id, project_id=project_id, issue_id=issue_id, user_id=user_id))
    elif not watch and row is not None:
        session.delete(row)
    session.flush()


def people_of_issue(session: Session, org_id: int, project_id: int, issue_id: int) -> set[int]:
    """The issue's assignee (a team: its members) and its watchers."""
    people = set(
        session.scalars(
            select(IssueWatcher.user_id).where(
                IssueWatcher.org_id == org_id,
                IssueWatcher.project_id == project_id,
                IssueWatcher.issue_id == issue_id,
            )
        )
    )
    assignee = session.scalar(
        select(IssueAssignee).where(
            IssueAssignee.org_id == org_id,
            IssueAssignee.project_id == project_id,
            IssueAssignee.issue_id == issue_id,
        )
    )
    if assignee is not None:
        people |= assignee_people(session, org_id, assignee.user_id, assignee.team_id)
    return people


def assignee_people(session: Session, org_id: int, user_id: int | None, team_id: int | None) -> set[int]:
    if team_id is not None:
        return set(team_member_ids(session, org_id, team_id))
    return {user_id} if user_id is not None else set()


# --- sending ----------------------------------------------------------------------------------------------


def personal_channel(session: Session, org_id: int, user: User) -> AlertChannel:
    channel = session.scalar(
        select(AlertChannel).where(AlertChannel.org_id == org_id, AlertChannel.personal_user_id == user.id)
    )
    if channel is None:
        channel = AlertChannel(
            org_id=org_id,
            name=f"personal: {user.email}",
            type="email",
            config={"to": [user.email]},
            personal_user_id=user.id,
        )
        session.add(channel)
        session.flush()
    return channel


def _payload(subject: str, text: str, link: str, data: dict[str, Any]) -> dict[str, Any]:
    html = "".join(f"<p>{escape(line)}</p>" for line in text.split("\n") if line)
    html += f'<p><a href="{escape(link, quote=True)}">Open the issue in StackLens</a></p>'
    return {"subject": subject, "text": f"{text}\n\nOpen: {link}\n", "html": html, "link": link, "data": data}


def notify(
    session: Session,
    notifier: Notifier | None,
    org_id: int,
    project_id: int,
    issue_id: int,
    kind: str,
    user_ids: Iterable[int],
    *,
    headline: str,
    text: str,
    actor_user_id: int | None = None,
) -> int:
    """Tell each of ``user_ids`` (members of the organization only; never the actor) as they chose for the
    project and ``kind``; returns how many were told (now or in their digest)."""
    if notifier is None or not notifier.mail:
        return 0
    wanted = {int(u) for u in user_ids} - ({actor_user_id} if actor_user_id is not None else set())
    if not wanted:
        return 0
    members = session.scalars(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id, User.id.in_(wanted))
    ).all()
    org = session.get(Organization, org_id)
    project = session.get(Project, project_id)
    if org is None or project is None or project.org_id != org_id:
        return 0
    title = ""
    if notifier.warehouse is not None:
        title = issue_titles(notifier.warehouse, org_id, project_id, [issue_id]).get(issue_id, "")
    title = title or f"issue {issue_id}"
    link = f"{notifier.base_url}/orgs/{org.slug}/projects/{project.slug}/issues/{issue_id}"
    subject = f"[StackLens] {headline}: {title}"[:500]
    body = f"{text}\n\nIssue: {title}\nProject: {project.slug}"
    told = 0
    for user in members:
        mode = _mode(session, user.id, project_id, kind)
        if mode == "none":
            continue
        if mode == "daily":
            session.add(
                DigestItem(
                    org_id=org_id,
                    user_id=user.id,
                    project_id=project_id,
                    issue_id=issue_id,
                    kind=kind,
                    subject=subject,
                    text=body,
                    link=link,
                    created_at=utcnow(),
                )
            )
        else:
            channel = personal_channel(session, org_id, user)
            data = {"kind": kind, "issue_id": str(issue_id), "project": project.slug}
            outbox.enqueue(session, org_id, [channel.id], "issue", _payload(subject, body, link, data))
        told += 1
    session.flush()
    return told


def last_digest_time(now: datetime) -> datetime:
    """The latest :data:`DIGEST_HOUR` o'clock UTC at or before ``now``."""
    today = now.replace(hour=DIGEST_HOUR, minute=0, second=0, microsecond=0)
    return today if now >= today else today - timedelta(days=1)


def send_digests(session: Session, now: datetime | None = None) -> int:
    """Put one digest e-mail per person and organization in the outbox for the items that waited until the
    latest digest time; returns how many digests. Each item is sent once."""
    now = now or utcnow()
    cut = last_digest_time(now)
    pending = session.scalars(
        select(DigestItem)
        .where(DigestItem.sent_at.is_(None), DigestItem.created_at < cut)
        .order_by(DigestItem.id)
    ).all()
    grouped: dict[tuple[int, int], list[DigestItem]] = defaultdict(list)
    for item in pending:
        grouped[(item.org_id, item.user_id)].append(item)
    for (org_id, user_id), items in grouped.items():
        user = session.get(User, user_id)
        if user is None:
            continue
        channel = personal_channel(session, org_id, user)
        count = len(items)
        subject = f"[StackLens] Daily digest: {count} issue update{'' if count == 1 else 's'}"
        text = "\n\n".join(
            f"• {i.subject.removeprefix('[StackLens] ')}\n{i.text}\nOpen: {i.link}" for i in items
        )
        html = (
            "<ul>"
            + "".join(
                f'<li><a href="{escape(i.link, quote=True)}">{escape(i.subject.removeprefix("[StackLens] "))}</a></li>'
                for i in items
            )
            + "</ul>"
        )
        payload = {
            "subject": subject,
            "text": f"What happened to your issues until {cut:%Y-%m-%d %H:%M} UTC:\n\n{text}\n",
            "html": f"<p>What happened to your issues until {escape(f'{cut:%Y-%m-%d %H:%M}')} UTC:</p>{html}",
            "link": items[0].link,
            "data": {"kind": "digest", "items": count},
        }
        outbox.enqueue(session, org_id, [channel.id], "digest", payload)
        for item in items:
            item.sent_at = now
    session.flush()
    return len(grouped)


def notify_regressions(
    session: Session, client: Client, notifier: Notifier, now: datetime | None = None
) -> int:
    """Tell the assignee and watchers of each issue that regressed since its project's last check (only
    projects with an assignee or a watcher are read); returns how many issues were told of."""
    now = now or utcnow()
    projects: set[tuple[int, int]] = set()
    for query in (
        select(IssueAssignee.org_id, IssueAssignee.project_id).distinct(),
        select(IssueWatcher.org_id, IssueWatcher.project_id).distinct(),
    ):
        projects |= {(int(org_id), int(project_id)) for org_id, project_id in session.execute(query)}
    told = 0
    for org_id, project_id in sorted(projects):
        mark = session.get(IssueNewsMark, project_id)
        if mark is None or mark.org_id != org_id:
            if mark is None:  # from now on: a project's first assignee is not told of its past
                session.add(IssueNewsMark(project_id=project_id, org_id=org_id, regressions_until=now))
            continue
        rows = run_query(
            client,
            "issues/regressions_since",
            {"org_id": org_id, "project_id": project_id, "since": mark.regressions_until, "until": now},
        )
        for row in rows:
            issue_id = int(row["issue_id"])
            people = people_of_issue(session, org_id, project_id, issue_id)
            if people:
                notify(
                    session,
                    notifier,
                    org_id,
                    project_id,
                    issue_id,
                    "regressions",
                    people,
                    headline="Regressed",
                    text="The issue was resolved and has a new event: it is open again.",
                )
                told += 1
        mark.regressions_until = now
    session.flush()
    return told
