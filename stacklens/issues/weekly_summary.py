"""A project's week by e-mail, for members who switch it on (kind ``weekly`` at ``/account/notifications``):
new issues, regressions, the top issues by users, release health and failing budgets over the last whole week
(Monday 08:00 UTC to Monday 08:00 UTC), sent through the outbox once the week is over.

Every figure is the one the pages show, read through the same functions: the issue list's figures
(:func:`stacklens.issues.reads.list_issues`, sorted by users), the release pages' health
(:func:`stacklens.releases.health.release_health`) and the budgets' status
(:func:`stacklens.performance.budget_status.with_status`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.control.budgets import list_budgets
from stacklens.control.models import Membership, NotificationSetting, Organization, Project, User, utcnow
from stacklens.issues.notifications import Notifier, personal_channel
from stacklens.issues.reads import IssueFilters, list_issues
from stacklens.metrics.windows import Window
from stacklens.performance.budget_eval import FAIL
from stacklens.performance.budget_status import with_status
from stacklens.releases.health import Window as ReleaseWindow
from stacklens.releases.health import release_health
from stacklens.warehouse.queries import run_query

WEEKDAY, HOUR = 0, 8  # Monday 08:00 UTC
TOP = 5
MAX_COUNTED = 10_000


def week_end(now: datetime) -> datetime:
    """The latest Monday 08:00 UTC at or before ``now``: the end of the last whole week."""
    start = now.replace(hour=HOUR, minute=0, second=0, microsecond=0) - timedelta(
        days=(now.weekday() - WEEKDAY) % 7
    )
    return start if start <= now else start - timedelta(days=7)


@dataclass
class WeeklySummary:
    window: Window
    new_issues: int = 0
    regressions: int = 0
    top: list[dict[str, Any]] = field(default_factory=list)  # issue_id, title, users, events
    releases: list[tuple[str, float | None, bool]] = field(
        default_factory=list
    )  # version, crash-free %, regression
    failing_budgets: list[str] = field(default_factory=list)


def summarise(session: Session, client: Client, project: Project, window: Window) -> WeeklySummary:
    org_id, project_id = project.org_id, project.id
    summary = WeeklySummary(window)
    since, until = window.since, window.until
    new = run_query(
        client,
        "issues/new_since",
        {"org_id": org_id, "project_id": project_id, "since": since, "limit": MAX_COUNTED},
    )
    summary.new_issues = sum(1 for r in new if r["first"].replace(tzinfo=since.tzinfo) < until)
    summary.regressions = len(
        run_query(
            client,
            "issues/regressions_since",
            {"org_id": org_id, "project_id": project_id, "since": since, "until": until},
        )
    )
    filters = IssueFilters(status="all", range="7d", sort="users", limit=TOP).validate()
    rows, _ = list_issues(client, org_id, project_id, filters, window)
    summary.top = [
        {"issue_id": int(r["issue_id"]), "title": r["title"], "users": r["users"], "events": r["events"]}
        for r in rows
    ]
    health = release_health(client, org_id, project_id, ReleaseWindow(since, until))
    summary.releases = [(r.version, r.crash_free_sessions, r.verdict.regression) for r in health[-3:]][::-1]
    for budget in with_status(client, list_budgets(session, project)):
        if budget["status"] == FAIL:
            summary.failing_budgets.append(
                f"{budget['metric']} {budget['statistic']} ({budget['scope'] or 'all pages'})"
            )
    return summary


def _count(n: int, one: str) -> str:
    return f"{n:,} {one}{'' if n == 1 else 's'}"


def compose(summary: WeeklySummary, org: Organization, project: Project, base_url: str) -> dict[str, Any]:
    base = f"{base_url}/orgs/{org.slug}/projects/{project.slug}"
    week = f"{summary.window.since:%Y-%m-%d} to {summary.window.until:%Y-%m-%d}"
    lines = [
        f"New issues: {summary.new_issues:,}",
        f"Regressions: {summary.regressions:,}",
        "Top issues by users:",
        *(
            [
                f"  {_count(t['users'], 'user')} · {_count(t['events'], 'event')} · {t['title']} — "
                f"{base}/issues/{t['issue_id']}"
                for t in summary.top
            ]
            or ["  none"]
        ),
        "Release health (crash-free sessions):",
        *(
            [
                f"  {v}: {'no sessions' if c is None else f'{c:.2f} %'}{' — regression' if bad else ''}"
                for v, c, bad in summary.releases
            ]
            or ["  no releases"]
        ),
        "Failing budgets: " + (", ".join(summary.failing_budgets) or "none"),
    ]
    text = f"{project.name}, {week} (UTC):\n\n" + "\n".join(lines) + f"\n\nOpen: {base}/issues\n"
    html = f"<p>{escape(project.name)}, {escape(week)} (UTC)</p><pre>{escape(chr(10).join(lines))}</pre>"
    html += f'<p><a href="{escape(base, quote=True)}/issues">Open the issues in StackLens</a></p>'
    return {
        "subject": f"[StackLens] Week of {project.slug}: {_count(summary.new_issues, 'new issue')}, "
        f"{_count(summary.regressions, 'regression')}",
        "text": text,
        "html": html,
        "link": f"{base}/issues",
        "data": {"kind": "weekly", "project": project.slug, "new_issues": summary.new_issues},
    }


def send_weekly_summaries(
    session: Session, client: Client, notifier: Notifier, now: datetime | None = None
) -> int:
    """Put the last whole week's summary in the outbox for every member who switched it on and has not had
    it; returns how many."""
    if not notifier.mail:
        return 0
    now = now or utcnow()
    end = week_end(now)
    window = Window(end - timedelta(days=7), end)
    due = session.scalars(
        select(NotificationSetting).where(
            NotificationSetting.kind == "weekly", NotificationSetting.mode == "weekly"
        )
    ).all()
    # Every summary is composed before anything is written: composing reads the warehouse (seconds for a
    # large project), and a write pending in this session would hold the control store's write lock
    # meanwhile, keeping every other organization's writes waiting (issue 62).
    summaries: dict[int, dict[str, Any]] = {}
    to_send: list[tuple[NotificationSetting, Organization, User, int]] = []
    for setting in due:
        if setting.last_sent_at is not None and setting.last_sent_at >= end:
            continue
        member = session.scalar(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.org_id == setting.org_id, User.id == setting.user_id)
        )
        project = session.get(Project, setting.project_id)
        org = session.get(Organization, setting.org_id)
        if member is None or project is None or org is None or project.org_id != org.id:
            continue
        if project.id not in summaries:
            summaries[project.id] = compose(
                summarise(session, client, project, window), org, project, notifier.base_url
            )
        to_send.append((setting, org, member, project.id))
    for setting, org, member, project_id in to_send:
        outbox.enqueue(
            session, org.id, [personal_channel(session, org.id, member).id], "weekly", summaries[project_id]
        )
        setting.last_sent_at = now
    sent = len(to_send)
    session.flush()
    return sent
