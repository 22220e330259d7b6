"""A monitor's issue: each incident lands one error event of the monitor, which opens its issue (or
regresses it when it was resolved) through the ingest service's one code path.

The event's fingerprint is the monitor's (``monitor:<slug>``), so every incident of a monitor is an event of
one issue; its tags (``monitor.slug``, ``monitor.kind``, ``monitor.status``) are what the issue page links
back to the monitor by. The event id is derived from the incident's id: an event sent again after a crash
between landing and marking the incident is deduplicated by the warehouse's event-id rule.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from datetime import UTC
from typing import Any

import orjson
from sqlalchemy import select, update

from stacklens.control.db import session_scope
from stacklens.control.models import AppKey, iso_utc
from stacklens.control.models.monitors import Monitor, MonitorIncident
from stacklens.ingest.prepared_rows import Attribution
from stacklens.ingest.service import ingest_batch
from stacklens.monitors.health import STATUS_WORDS
from stacklens.settings import Settings

# Incidents whose event is landed per tick (one batch each): more wait for the next tick.
MAX_EVENTS_PER_TICK = 200


def event_id_of(incident_id: int) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"stacklens:monitor-incident:{incident_id}").hex


def send_issue_events(settings: Settings) -> tuple[int, list[str]]:
    """Land the event of every incident that has none yet; (events landed, errors)."""
    with session_scope(settings) as session:
        pending = session.execute(
            select(MonitorIncident, Monitor)
            .join(Monitor, Monitor.id == MonitorIncident.monitor_id)
            .where(MonitorIncident.issue_event_sent.is_(False))
            .order_by(MonitorIncident.id)
            .limit(MAX_EVENTS_PER_TICK)
        ).all()
        keys = {
            row.project_id: row.id
            for row in session.scalars(
                select(AppKey)
                .where(
                    AppKey.project_id.in_({m.project_id for _, m in pending} or {-1}),
                    AppKey.revoked_at.is_(None),
                )
                .order_by(AppKey.id.desc())
            )
        }
    by_org: dict[int, list[tuple[MonitorIncident, Monitor]]] = {}
    for incident, monitor in pending:
        by_org.setdefault(monitor.org_id, []).append((incident, monitor))
    sent, errors = 0, []
    for org_id, found in by_org.items():  # one batch per organization: its events land together
        try:
            _land(settings, org_id, [(i, m, keys.get(m.project_id, 0)) for i, m in found])
        except Exception as exc:  # noqa: BLE001 - one organization's failure leaves the others' events going
            errors.append(f"organization {org_id}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        with session_scope(settings) as session:
            session.execute(
                update(MonitorIncident)
                .where(MonitorIncident.id.in_([i.id for i, _ in found]))
                .values(issue_event_sent=True)
            )
        sent += len(found)
    return sent, errors


def _land(settings: Settings, org_id: int, incidents: list[tuple[MonitorIncident, Monitor, int]]) -> None:
    lines, attributions = [], {}
    for incident, monitor, app_key_id in incidents:
        payload = _payload(incident, monitor)
        # Each line names its project through its own placeholder key, resolved below to the project.
        placeholder = f"monitor-{monitor.project_id}"
        attributions[placeholder] = Attribution(monitor.project_id, None, app_key_id)
        lines.append(
            orjson.dumps(
                {
                    "v": 1,
                    "type": "event",
                    "app_key": placeholder,
                    "ts": payload["timestamp"],
                    "payload": payload,
                }
            )
        )
    ingest_batch(
        settings,
        org_id,
        b"\n".join(lines),
        header_app_key=None,
        # The same incidents sent again (a tick interrupted before marking them) are the same batch.
        idempotency_key="monitor-incidents-"
        + hashlib.sha256(",".join(str(i.id) for i, _, _ in incidents).encode()).hexdigest()[:40],
        resolve=attributions.get,
        take_events=_no_quota,
    )


def _payload(incident: MonitorIncident, monitor: Monitor) -> dict[str, Any]:
    words = STATUS_WORDS.get(incident.status, incident.status)
    return {
        "event_id": event_id_of(incident.id),
        "timestamp": iso_utc(incident.opened_at.astimezone(UTC)),
        "level": "error",
        "platform": "other",
        "logger": "stacklens.monitors",
        "environment": monitor.environment or "production",
        "message": f"Monitor {monitor.name} {words}",
        # Where it happened, as the issue list shows it: the monitor (an incident has no stack to read).
        "culprit": f"{monitor.kind} monitor {monitor.slug}",
        "fingerprint": [f"monitor:{monitor.slug}"],
        "tags": {
            "monitor.slug": monitor.slug,
            "monitor.kind": monitor.kind,
            "monitor.status": incident.status,
        },
        "extra": {"reason": incident.reason, "incident_id": incident.id},
    }


def _no_quota(_counts: Counter[tuple[int, str]]) -> None:
    """The service's own events of a monitor are not the project's traffic: no quota is spent on them."""
    return None


__all__ = ["event_id_of", "send_issue_events"]
