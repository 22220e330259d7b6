"""Episodes of the service's own conditions: one alert when a condition starts, one note when it ends.

There is no instance-wide administrator in this code base: the people who run an installation are its
organizations' owners, and they already said where alerts should reach them (their alert channels). So an
episode's alert goes to every channel of every organization, through the same outbox as rule alerts (durable,
retried, rate-capped), and is sent at once.

Once per episode across processes: the row of the condition in ``service_episodes`` is flipped by a
conditional UPDATE (``WHERE firing = <the other state>``); only the process whose UPDATE changed the row
enqueues the notifications. Several API workers watching one full disk send one alert.
"""

from __future__ import annotations

import logging
from datetime import datetime
from html import escape
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from stacklens.alerts import outbox
from stacklens.control.db import session_scope
from stacklens.control.models import AlertChannel, ServiceEpisode, utcnow
from stacklens.public_url import absolute_link
from stacklens.settings import Settings

log = logging.getLogger(__name__)

Condition = Literal["ingest_refused_disk", "ingest_refused_queue", "events_not_visible", "pipelines_failing"]

# What each condition is called in an alert, and what to do about it.
HEADLINES: dict[Condition, str] = {
    "ingest_refused_disk": "Ingest refused: the disk is below its floor",
    "ingest_refused_queue": "Ingest refused: the front door's queue is full",
    "events_not_visible": "Accepted events are not visible for more than a minute",
    "pipelines_failing": "Pipelines failing: three ticks in a row",
}
ACTIONS: dict[Condition, str] = {
    "ingest_refused_disk": "Make room on the data directory's volume (or lower STACKLENS_DISK_FLOOR); senders "
    "are told to retry and the shipper keeps its lines, so everything lands once space returns.",
    "ingest_refused_queue": "The warehouse takes rows slower than they arrive; senders are told to retry. "
    "Check the warehouse and `GET /api/health` (front_door).",
    "events_not_visible": "Rows answered 200 wait in the front door's spool (they are safe there) because the "
    "warehouse does not take them; check the warehouse and `GET /api/health` (front_door.drain_error).",
    "pipelines_failing": "Issues, performance marts, budgets and alerts are not updated; see `stacklens "
    "pipelines status` and the server's log.",
}


def firing_conditions(settings: Settings) -> set[str]:
    """The conditions whose episode is open now (what a process starting mid-episode must know to recover)."""
    with session_scope(settings) as session:
        return set(session.scalars(select(ServiceEpisode.condition).where(ServiceEpisode.firing.is_(True))))


def _ensure_row(settings: Settings, condition: Condition) -> None:
    try:
        with session_scope(settings) as session:
            if session.get(ServiceEpisode, condition) is None:
                session.add(ServiceEpisode(condition=condition, firing=False, since=utcnow(), detail=""))
    except IntegrityError:
        pass  # another process added it first


def set_firing(settings: Settings, condition: Condition, firing: bool, detail: str) -> list[str]:
    """Open (``firing``) or close the condition's episode; the notifications this call sent, or ``[]`` when
    the episode was already in that state (another process, or an earlier call, changed it)."""
    _ensure_row(settings, condition)
    now = utcnow()
    with session_scope(settings) as session:
        changed = session.execute(
            update(ServiceEpisode)
            .where(ServiceEpisode.condition == condition, ServiceEpisode.firing.is_(not firing))
            .values(firing=firing, since=now, detail=detail[:500])
            .execution_options(synchronize_session=False)
        )
        if changed.rowcount != 1:  # type: ignore[attr-defined]  # an UPDATE's result has rowcount
            return []
        ids = _notify_owners(session, settings, condition, firing, detail, now)
    log.warning(
        "service: %s %s (%s); %d notifications",
        HEADLINES[condition],
        "started" if firing else "recovered",
        detail,
        len(ids),
    )
    if ids:
        outbox.drain(settings, notification_ids=ids)  # at once: the schedules may be what is failing
    return ids


def _notify_owners(
    session: Any, settings: Settings, condition: Condition, firing: bool, detail: str, since: datetime
) -> list[str]:
    channels: dict[int, list[int]] = {}
    # The organizations' channels, not a person's own (issue notifications).
    query = select(AlertChannel.org_id, AlertChannel.id).where(AlertChannel.personal_user_id.is_(None))
    for org_id, channel_id in session.execute(query):
        channels.setdefault(org_id, []).append(channel_id)
    payload = episode_payload(settings, condition, firing, detail, since)
    ids: list[str] = []
    for org_id, channel_ids in sorted(channels.items()):
        ids += outbox.enqueue(session, org_id, channel_ids, "firing" if firing else "resolved", payload)
    return ids


def episode_payload(
    settings: Settings, condition: Condition, firing: bool, detail: str, since: datetime
) -> dict[str, Any]:
    """The notification's words: what happened, what was seen, since when, what to do, and where to look."""
    link = absolute_link(settings, "/api/health/ready")
    state = "Firing" if firing else "Resolved"
    subject = f"[{state}] StackLens service: {HEADLINES[condition]}"
    lines = [
        ("What", HEADLINES[condition] if firing else f"Recovered: {HEADLINES[condition].lower()}"),
        ("Seen", detail or "-"),
        ("Since", since.strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    if firing:
        lines.append(("Action", ACTIONS[condition]))
    text = "\n".join(f"{k}: {v}" for k, v in lines) + f"\n\nReadiness: {link}\n"
    rows = "".join(f"<tr><th align='left'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in lines)
    html = f'<h2>{escape(subject)}</h2><table>{rows}</table><p><a href="{escape(link)}">Readiness</a></p>'
    data = {
        "service": True,
        "condition": condition,
        "state": "firing" if firing else "resolved",
        "detail": detail,
        "since": since.isoformat().replace("+00:00", "Z"),
    }
    return {"subject": subject[:250], "text": text, "html": html, "link": link, "data": data}
