"""A project's ownership rules (stored as written, checked against the organization's members and teams) and
the step that assigns new issues by them.

Where it runs: a pipeline step every minute (the alerts job, before the rules are evaluated), not ingest.
Ingest stays as cheap as it is: it never reads the control store for rules. The step looks only at projects
that have rules, reads the issues first seen since the project's ``checked_until``
(``issue_live_counters``, one row per issue) and the first event of each (``events``, through the time
projection), and assigns each issue nobody has assigned or unassigned yet to the owner of the last matching
rule, as ``system``, recording the rule ("matched path:src/checkout/* → #payments" on the issue page). A
new issue is assigned within about a minute."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import IssueAction, IssueAssignee, OwnershipRules, Project, Team, utcnow
from stacklens.control.teams import member_by_email, resolve_assignee
from stacklens.errors import InvalidInput, NotFound
from stacklens.issues.assignees import assign
from stacklens.issues.comments import member_handles
from stacklens.issues.notifications import Notifier
from stacklens.issues.ownership import Rule, facts_of, from_codeowners, owner_of, parse
from stacklens.warehouse.queries import run_query

SYSTEM = "system"
# Issues first seen a little before the watermark are looked at again: an event can be stored a while after
# its timestamp (a client's retry, the front door's spool). Issues already assigned are skipped.
OVERLAP = timedelta(minutes=10)
MAX_ISSUES_PER_RUN = 2_000


def _known_owner(session: Session, org_id: int) -> Callable[[str], bool]:
    def known(owner: str) -> bool:
        try:
            if owner.startswith("#"):
                return (
                    session.scalar(select(Team.id).where(Team.org_id == org_id, Team.slug == owner[1:]))
                    is not None
                )
            member_by_email(session, org_id, owner)
            return True
        except NotFound:
            return False

    return known


def get_rules(session: Session, org_id: int, project_id: int) -> str:
    row = session.scalar(
        select(OwnershipRules).where(OwnershipRules.org_id == org_id, OwnershipRules.project_id == project_id)
    )
    return row.rules if row else ""


def set_rules(
    session: Session,
    org_id: int,
    project: Project,
    text: str,
    *,
    actor: str,
    actor_user_id: int | None = None,
    since: datetime | None = None,
) -> list[Rule]:
    """Check and store a project's rules; :class:`InvalidInput` names the line that cannot be used. The first
    rules of a project assign issues first seen from ``since`` on (default: now)."""
    if project.org_id != org_id:
        raise NotFound("no such project in this organization")
    known = _known_owner(session, org_id)
    rules = parse(text, known)
    row = session.get(OwnershipRules, project.id)
    now = utcnow()
    if row is None:
        row = OwnershipRules(project_id=project.id, org_id=org_id, checked_until=since or now)
        session.add(row)
    row.rules, row.updated_at, row.updated_by = (text or "").strip(), now, actor
    record_activity(
        session,
        org_id,
        "ownership.changed",
        "project",
        project.id,
        actor_user_id,
        {"project": project.slug, "rules": len(rules)},
    )
    session.flush()
    return rules


def import_codeowners(session: Session, org_id: int, text: str) -> tuple[str, list[str]]:
    """CODEOWNERS as rules of this organization (see :func:`stacklens.issues.ownership.from_codeowners`)."""
    handles, emails = member_handles(session, org_id)
    by_handle = {handle: emails[user_id] for handle, user_id in handles.items()}
    slugs = session.scalars(select(Team.slug).where(Team.org_id == org_id))
    return from_codeowners(text, by_handle, slugs)


@dataclass
class AutoAssignSummary:
    projects: int = 0
    looked_at: int = 0
    assigned: int = 0
    errors: list[str] = field(default_factory=list)


def assign_new_issues(
    session: Session, client: Client, now: datetime | None = None, notifier: Notifier | None = None
) -> AutoAssignSummary:
    """Assign the new issues of every project with rules; moves each project's ``checked_until`` to ``now``.
    With a ``notifier``, each new owner is told (``assigned``: the news of a new issue in what they own)."""
    now = now or utcnow()
    summary = AutoAssignSummary()
    for row in session.scalars(select(OwnershipRules).where(OwnershipRules.rules != "")).all():
        summary.projects += 1
        try:
            rules = parse(row.rules)
        except (
            InvalidInput
        ) as exc:  # stored before a member or team went away: still readable, skip the project
            summary.errors.append(f"project {row.project_id}: {exc}")
            continue
        since = row.checked_until - OVERLAP
        found_new = run_query(
            client,
            "issues/new_since",
            {"org_id": row.org_id, "project_id": row.project_id, "since": since, "limit": MAX_ISSUES_PER_RUN},
        )
        candidates = [int(r["issue_id"]) for r in found_new]
        decided = set(
            session.scalars(
                select(IssueAssignee.issue_id).where(
                    IssueAssignee.project_id == row.project_id, IssueAssignee.issue_id.in_(candidates)
                )
            )
        ) | set(
            session.scalars(
                select(IssueAction.issue_id).where(
                    IssueAction.project_id == row.project_id, IssueAction.issue_id.in_(candidates)
                )
            )
        )
        todo = [i for i in candidates if i not in decided]
        summary.looked_at += len(todo)
        if todo:
            facts = run_query(
                client,
                "issues/first_event_facts",
                {"org_id": row.org_id, "project_id": row.project_id, "issue_ids": todo, "since": since},
            )
            for fact in facts:
                found = owner_of(
                    rules,
                    facts_of(
                        fact["payload"], url=fact["request_url"], release=fact["release"], tags=fact["tags"]
                    ),
                )
                if found is None:
                    continue
                owner, rule = found
                try:
                    target = resolve_assignee(session, row.org_id, owner)
                except (InvalidInput, NotFound) as exc:
                    summary.errors.append(f"project {row.project_id}: {rule.text}: {exc}")
                    continue
                # What the issue page says: "matched path:src/checkout/* → #payments".
                why = f"{rule.text.split()[0]} → {owner}"
                issue_id = int(fact["issue_id"])
                if assign(
                    session,
                    row.org_id,
                    row.project_id,
                    issue_id,
                    target,
                    actor=SYSTEM,
                    rule=why,
                    notifier=notifier,
                ):
                    summary.assigned += 1
        if len(candidates) < MAX_ISSUES_PER_RUN:
            row.checked_until = now
        else:  # a full batch: the next run goes on from its last issue
            row.checked_until = found_new[-1]["first"] + OVERLAP
    session.flush()
    return summary
