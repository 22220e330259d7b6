"""A monitor's health: runs of failures and successes against its thresholds, incidents, and their notices.

Every terminal outcome (a check-in ``ok`` / ``error``, a ``missed`` or ``timeout`` written by detection,
an uptime probe ``ok`` / ``down``) goes through :func:`apply`, inside the transaction that records it. An
incident opens when failures in a row reach the failure threshold and closes when successes in a row reach
the recovery threshold; the notices of the alert rules of type ``monitor`` that match go into the outbox in
that same transaction, so a notice exists exactly when its incident does — never twice, never lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts.outbox import enqueue
from stacklens.control.models import Organization, Project, iso_utc
from stacklens.control.models.alerts import AlertRule
from stacklens.control.models.monitors import Monitor, MonitorIncident

FAILING = ("missed", "timeout", "error", "down")
STATUS_WORDS = {
    "missed": "missed a check-in",
    "timeout": "timed out",
    "error": "failed",
    "down": "is down",
}


@dataclass
class Told:
    """What one application of outcomes did (summed by the tick)."""

    opened: int = 0
    resolved: int = 0
    notices: int = 0
    # The monitor rules of each project, read once per tick (a tick may open hundreds of incidents).
    rules: dict[int, list[AlertRule]] = field(default_factory=dict)
    # Each project's (organization slug, project slug), read once per tick: the session's identity map holds
    # rows weakly, so a get() per notice read both rows again (0.6 s of a tick opening 100 incidents).
    places: dict[int, tuple[str, str] | None] = field(default_factory=dict)


def monitor_path(org_slug: str, project_slug: str, monitor_slug: str) -> str:
    return f"/orgs/{org_slug}/projects/{project_slug}/monitors/{monitor_slug}"


def apply(
    session: Session,
    monitor: Monitor,
    status: str,
    at: datetime,
    reason: str,
    base_url: str,
    told: Told | None = None,
) -> None:
    """Take one terminal outcome into the monitor's health (``in_progress`` is not one)."""
    told = told or Told()
    threshold = monitor.failure_threshold if monitor.kind == "uptime" else monitor.failure_issue_threshold
    if status in FAILING:
        monitor.failures_in_row += 1
        monitor.successes_in_row = 0
        if monitor.open_incident_id is not None:
            monitor.status = status
        elif monitor.failures_in_row >= threshold:
            incident = MonitorIncident(
                monitor_id=monitor.id,
                org_id=monitor.org_id,
                project_id=monitor.project_id,
                status=status,
                opened_at=at,
                reason=reason[:500],
                issue_event_sent=False,
            )
            session.add(incident)
            session.flush()  # its id is in the notices
            monitor.open_incident_id = incident.id
            monitor.status = status
            told.opened += 1
            told.notices += _notify(session, monitor, incident, "firing", reason, base_url, told)
    elif status == "ok":
        monitor.successes_in_row += 1
        monitor.failures_in_row = 0
        if monitor.open_incident_id is None:
            # A monitor without a schedule (made by a check-in without monitor_config) stays `new`: nothing
            # it is judged against has come yet, so "ok" would claim more than is known.
            if monitor.schedule_type or monitor.kind == "uptime" or monitor.status != "new":
                monitor.status = "ok"
        elif monitor.successes_in_row >= monitor.recovery_threshold:
            opened = session.get(MonitorIncident, monitor.open_incident_id)
            monitor.open_incident_id = None
            monitor.status = "ok"
            if opened is not None:
                opened.resolved_at = at
                told.resolved += 1
                told.notices += _notify(session, monitor, opened, "resolved", "recovered", base_url, told)
    monitor.updated_at = at


def _matches(rule: AlertRule, monitor: Monitor, status: str) -> bool:
    filters = rule.filters or {}
    slugs = [s for s in str(filters.get("monitors", "")).split(",") if s]
    statuses = [s for s in str(filters.get("statuses", "")).split(",") if s]
    return (not slugs or monitor.slug in slugs) and (not statuses or status in statuses)


def _notify(
    session: Session,
    monitor: Monitor,
    incident: MonitorIncident,
    kind: str,
    reason: str,
    base_url: str,
    told: Told,
) -> int:
    """Outbox rows for every enabled ``monitor`` rule of the project that watches this monitor and the
    incident's status (a recovery is told to the rules its opening was told to)."""
    if monitor.project_id not in told.rules:
        told.rules[monitor.project_id] = list(
            session.scalars(
                select(AlertRule).where(
                    AlertRule.project_id == monitor.project_id,
                    AlertRule.org_id == monitor.org_id,
                    AlertRule.type == "monitor",
                    AlertRule.enabled.is_(True),
                )
            )
        )
    rules = [r for r in told.rules[monitor.project_id] if _matches(r, monitor, incident.status)]
    if not rules:
        return 0
    if monitor.project_id not in told.places:
        project = session.get(Project, monitor.project_id)
        org = session.get(Organization, monitor.org_id)
        told.places[monitor.project_id] = (org.slug, project.slug) if project and org else None
    place = told.places[monitor.project_id]
    if place is None:
        return 0
    payload = notice(monitor, incident, kind, reason, base_url, *place)
    sent = 0
    for rule in rules:
        sent += len(enqueue(session, monitor.org_id, list(rule.channel_ids or []), kind, payload, rule.id))
    return sent


def notice(
    monitor: Monitor,
    incident: MonitorIncident,
    kind: str,
    reason: str,
    base_url: str,
    org_slug: str,
    project_slug: str,
) -> dict[str, Any]:
    """The outbox payload of an incident's opening (``firing``) or recovery (``resolved``)."""
    link = base_url.rstrip("/") + monitor_path(org_slug, project_slug, monitor.slug)
    if kind == "firing":
        headline = f"[Firing] Monitor {monitor.name} {STATUS_WORDS.get(incident.status, incident.status)}"
    else:
        headline = f"[Resolved] Monitor {monitor.name} is back to ok"
    lines = [
        ("Monitor", f"{monitor.name} ({monitor.slug}, {monitor.kind}) in {project_slug}"),
        ("Status", incident.status if kind == "firing" else "ok"),
        ("Why", reason),
        ("Since", incident.opened_at.strftime("%Y-%m-%d %H:%M UTC")),
    ]
    text = "\n".join(f"{k}: {v}" for k, v in lines) + f"\n\nOpen: {link}\n"
    rows = "".join(f"<tr><th align='left'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in lines)
    html = f'<h2>{escape(headline)}</h2><table>{rows}</table><p><a href="{escape(link)}">Open in StackLens</a></p>'
    data = {
        "rule_type": "monitor",
        "state": kind,
        "project": project_slug,
        "monitor": monitor.slug,
        "monitor_kind": monitor.kind,
        "status": incident.status if kind == "firing" else "ok",
        "incident_id": incident.id,
        "opened_at": iso_utc(incident.opened_at),
        "resolved_at": iso_utc(incident.resolved_at) if incident.resolved_at else None,
        "reason": reason,
    }
    return {"subject": headline[:250], "text": text, "html": html, "link": link, "data": data}
