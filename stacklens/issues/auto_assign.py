"""A project's ownership rules (stored as written, checked against the organization's members and teams) and
the step that assigns new issues by them.

Where it runs: a pipeline step every minute (the alerts job, before the rules are evaluated), not ingest.
Ingest stays as cheap as it is: it never reads the control store for rules. The step looks only at projects
that have rules, reads the issues whose events arrived since the project's ``checked_until`` — by arrival,
not by the events' own time, so a backlog sent 45 minutes late is owned when it lands (issue 71) —
(``issue_live_counters``, one row per issue) and the first event of each (``events``, through the time
projection), and assigns each issue nobody has assigned or unassigned yet to the owner of the last matching
rule, as ``system``, recording the rule ("matched path:src/checkout/* → #payments" on the issue page). A
new issue is assigned within about a minute, once: an issue assigned (or decided by a person) is never
looked at again.

The step shares the one schedule runner with every organization's alerts, so each organization has a share
of a run (:data:`ORG_BUDGET_S`) and the step a total (:data:`RUN_BUDGET_S`); what is not looked at by then
is the next run's, the organization that waited longest first. What a rule looks at is bounded and matched
in linear time (:mod:`stacklens.issues.ownership`)."""

from __future__ import annotations

import time
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
# Issues that arrived a little before the watermark are looked at again: a stored event can become readable a
# moment after its arrival time (the front door's spool drains, a merge of parts). Issues already assigned are
# skipped.
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
    # Stored with \n line ends whatever the browser's textarea or a Windows editor sent (issue 71: CRLF).
    text = "\n".join(
        line.rstrip() for line in (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    )
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
    # Projects whose organization's share of this run (or the run's own) was spent before they were done:
    # the next run goes on where this one stopped.
    deferred: int = 0
    errors: list[str] = field(default_factory=list)


# An organization's share of one run of the step (the alerts job runs every minute), and the step's own:
# what is left when they are spent waits for the next run, so one organization's many or hostile events
# cannot hold the alerts of every other organization (issue 62).
ORG_BUDGET_S = 5.0
RUN_BUDGET_S = 15.0


@dataclass(frozen=True)
class _Decision:
    issue_id: int
    owner: str
    rule: Rule


def assign_new_issues(
    session: Session,
    client: Client,
    now: datetime | None = None,
    notifier: Notifier | None = None,
    *,
    org_budget_s: float = ORG_BUDGET_S,
    run_budget_s: float = RUN_BUDGET_S,
) -> AutoAssignSummary:
    """Assign the new issues of every project with rules; moves each project's ``checked_until`` on to
    ``now`` (or, when a budget ran out mid-project, to the last issue looked at). With a ``notifier``, each
    new owner is told (``assigned``: the news of a new issue in what they own).

    Organizations go in the order of their oldest watermark (one cut short last run comes first), each
    within ``org_budget_s`` and all within ``run_budget_s``. Matching happens outside any write and each
    assignment is committed on its own, so the control store's write lock is held for one assignment at a
    time."""
    now = now or utcnow()
    summary = AutoAssignSummary()
    rows = session.scalars(
        select(OwnershipRules)
        .where(OwnershipRules.rules != "")
        .order_by(OwnershipRules.checked_until, OwnershipRules.project_id)
    ).all()
    by_org: dict[int, list[int]] = {}
    for row in rows:
        by_org.setdefault(row.org_id, []).append(row.project_id)
    session.commit()  # nothing held while the warehouse is read and the rules matched
    run_deadline = time.monotonic() + run_budget_s
    for project_ids in by_org.values():
        deadline = min(time.monotonic() + org_budget_s, run_deadline)
        for project_id in project_ids:
            summary.projects += 1
            if time.monotonic() >= deadline:
                summary.deferred += 1
                continue
            _assign_project(session, client, project_id, now, notifier, deadline, summary)
            session.commit()
    return summary


def _assign_project(
    session: Session,
    client: Client,
    project_id: int,
    now: datetime,
    notifier: Notifier | None,
    deadline: float,
    summary: AutoAssignSummary,
) -> None:
    row = session.get(OwnershipRules, project_id)
    if row is None or not row.rules:
        return
    try:
        rules = parse(row.rules)
    except InvalidInput as exc:  # stored before a member or team went away: still readable, skip the project
        summary.errors.append(f"project {row.project_id}: {exc}")
        return
    org_id, since = row.org_id, row.checked_until - OVERLAP
    found_new = run_query(
        client,
        "issues/arrived_since",
        {"org_id": org_id, "project_id": project_id, "since": since, "limit": MAX_ISSUES_PER_RUN},
    )
    first_seen = {int(r["issue_id"]): r["first"] for r in found_new}
    arrived = {int(r["issue_id"]): r["arrived"] for r in found_new}
    candidates = list(first_seen)
    decided = set(
        session.scalars(
            select(IssueAssignee.issue_id).where(
                IssueAssignee.project_id == project_id, IssueAssignee.issue_id.in_(candidates)
            )
        )
    ) | set(
        session.scalars(
            select(IssueAction.issue_id).where(
                IssueAction.project_id == project_id, IssueAction.issue_id.in_(candidates)
            )
        )
    )
    todo = [i for i in candidates if i not in decided]
    firsts = [(i, first_seen[i]) for i in todo]
    facts = (
        run_query(
            client,
            "issues/first_event_facts",
            {
                "org_id": org_id,
                "project_id": project_id,
                "firsts": firsts,
                "since": min(f for _, f in firsts),
                "until": max(f for _, f in firsts),
            },
        )
        if todo
        else []
    )
    # Earliest arrival first (as the candidates), so a run cut short leaves a watermark the next run goes on
    # from.
    order = {issue_id: n for n, issue_id in enumerate(todo)}
    facts = sorted(facts, key=lambda f: order.get(int(f["issue_id"]), len(order)))
    decisions: list[_Decision] = []
    looked = 0
    for fact in facts:
        if time.monotonic() >= deadline:
            break
        looked += 1
        found = owner_of(
            rules,
            facts_of(fact["payload"], url=fact["request_url"], release=fact["release"], tags=fact["tags"]),
        )
        if found is not None:
            decisions.append(_Decision(int(fact["issue_id"]), *found))
    summary.looked_at += looked
    cut_short = looked < len(facts)
    for decision in decisions:
        try:
            target = resolve_assignee(session, org_id, decision.owner)
        except (InvalidInput, NotFound) as exc:
            summary.errors.append(f"project {project_id}: {decision.rule.text}: {exc}")
            continue
        # What the issue page says: "matched path:src/checkout/* → #payments".
        why = f"{decision.rule.text.split()[0]} → {decision.owner}"
        if assign(
            session, org_id, project_id, decision.issue_id, target, actor=SYSTEM, rule=why, notifier=notifier
        ):
            summary.assigned += 1
        # Each assignment is its own short write (telling the owner reads the issue's title from the
        # warehouse): other organizations' writes never wait for a whole project's.
        session.commit()
    if cut_short:
        summary.deferred += 1
        if looked:
            # The next run reads from the first issue not looked at (the ones looked at and left unassigned
            # are not looked at again); when this run did not get past one instant (issues first seen in the
            # same millisecond), from just after it, so every run moves on.
            began = arrived[int(facts[0]["issue_id"])]
            resume = arrived[int(facts[looked]["issue_id"])]
            row.checked_until = (resume if resume > began else began + timedelta(milliseconds=1)) + OVERLAP
    elif len(candidates) < MAX_ISSUES_PER_RUN:
        row.checked_until = now
    else:  # a full batch: the next run goes on from its last issue
        row.checked_until = found_new[-1]["arrived"] + OVERLAP
    session.flush()
