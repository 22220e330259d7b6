"""Scheduled reports (docs/explore.md): a dashboard or saved query sent daily or weekly at a local time, as a
summary (its key numbers and their change) or CSV, through a channel's outbox (e-mail, Slack, webhook) with
its delivery log. Body: ``{"target": {"dashboard_id" | "saved_query_id"}, "schedule": {"every": "day" |
"week", "at": "HH:MM", "weekday", "timezone"}, "format": "summary" | "csv" | "pdf" (dashboards), "channel_id"
| "to_me": true, "paused"}``.

``to_me`` sends to the signed-in member's own address through an e-mail channel of the organization named
after it (made on first use, so its deliveries have a log like any channel's). The next run is computed in
the subscription's time zone, so "08:00 Europe/Berlin" stays 08:00 across daylight-saving changes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import AlertChannel, Dashboard, SavedQuery, Subscription
from stacklens.errors import InvalidInput, NotFound

EVERY = ("day", "week")
FORMATS = ("summary", "csv", "pdf")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
BODY_KEYS = ("target", "schedule", "format", "channel_id", "to_me", "paused")
AT = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
MAX_PER_ORG = 200


class BadSubscription(InvalidInput):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.field = name


@dataclass(frozen=True)
class Schedule:
    every: str
    at: str
    weekday: int | None
    timezone: str

    def next_run(self, after: datetime) -> datetime:
        """The first run strictly after ``after``: the day's (or the weekday's) ``at`` in the time zone."""
        zone = ZoneInfo(self.timezone)
        hour, minute = (int(p) for p in self.at.split(":"))
        local = after.astimezone(zone)
        day = local.date()
        for _ in range(9):
            if self.every == "day" or day.weekday() == self.weekday:
                candidate = datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC)
                if candidate > after:
                    return candidate
            day += timedelta(days=1)
        raise AssertionError("a weekly schedule always runs within 8 days")

    def as_json(self) -> dict[str, Any]:
        weekday = WEEKDAYS[self.weekday] if self.weekday is not None else None
        return {"every": self.every, "at": self.at, "weekday": weekday, "timezone": self.timezone}


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


def as_json(row: Subscription) -> dict[str, Any]:
    target = (
        {"dashboard_id": row.dashboard_id} if row.dashboard_id else {"saved_query_id": row.saved_query_id}
    )
    return {
        "id": row.id,
        "target": target,
        "schedule": schedule_of(row).as_json(),
        "format": row.format,
        "channel_id": row.channel_id,
        "owner_user_id": row.owner_user_id,
        "paused": row.paused,
        "next_run_at": _iso(row.next_run_at),
        "last_run_at": _iso(row.last_run_at),
        "last_error": row.last_error,
    }


def schedule_of(row: Subscription) -> Schedule:
    return Schedule(row.every, row.at, row.weekday, row.timezone)


def parse_schedule(raw: object) -> Schedule:
    if not isinstance(raw, dict):
        raise BadSubscription("schedule", 'must be an object {"every", "at", "weekday", "timezone"}')
    unknown = [k for k in raw if k not in ("every", "at", "weekday", "timezone")]
    if unknown:
        raise BadSubscription(
            f"schedule.{str(unknown[0])[:64]}", "unknown key; use every, at, weekday, timezone"
        )
    every = raw.get("every")
    if every not in EVERY:
        raise BadSubscription("schedule.every", f"{str(every)[:32]!r} is not one of day, week")
    at = raw.get("at")
    if not isinstance(at, str) or not AT.fullmatch(at):
        raise BadSubscription("schedule.at", "a time of day as HH:MM, e.g. 08:00")
    zone = raw.get("timezone") or "UTC"
    try:
        ZoneInfo(str(zone))
    except (ZoneInfoNotFoundError, ValueError):
        raise BadSubscription(
            "schedule.timezone", f"{str(zone)[:64]!r} is not a time zone such as Europe/Berlin"
        ) from None
    weekday: int | None = None
    if every == "week":
        raw_day = str(raw.get("weekday") or "").strip().lower()
        matches = [i for i, name in enumerate(WEEKDAYS) if raw_day in (name, name[:3])]
        if not matches:
            raise BadSubscription(
                "schedule.weekday", "a weekly report names its day: monday … sunday (or mon … sun)"
            )
        weekday = matches[0]
    elif raw.get("weekday"):
        raise BadSubscription("schedule.weekday", "only a weekly report takes a weekday")
    return Schedule(str(every), at, weekday, str(zone))


REPORTS_TO = "Reports to "  # a member's own report channel (``to_me``): "Reports to ann@acme.test"


def offered_channels(session: Session, org_id: int, me: str | None) -> dict[int, str]:
    """The channels a member may send a report to: the organization's shared ones and their own report
    channel — never another member's personal channel (issue notifications) or report mail."""
    rows = session.execute(
        select(AlertChannel.id, AlertChannel.name)
        .where(AlertChannel.org_id == org_id, AlertChannel.personal_user_id.is_(None))
        .order_by(AlertChannel.id)
    )
    mine = f"{REPORTS_TO}{me}"[:200] if me else None
    return {int(i): str(n) for i, n in rows if not str(n).startswith(REPORTS_TO) or str(n) == mine}


def email_channel_for(session: Session, org_id: int, address: str) -> int:
    """The organization's e-mail channel to ``address`` alone (``to_me``), made on first use."""
    name = f"{REPORTS_TO}{address}"[:200]
    found = session.scalar(
        select(AlertChannel.id).where(
            AlertChannel.org_id == org_id, AlertChannel.name == name, AlertChannel.type == "email"
        )
    )
    if found is not None:
        return int(found)
    row = AlertChannel(org_id=org_id, name=name, type="email", config={"to": [address]})
    session.add(row)
    session.flush()
    return row.id


def _fields(
    session: Session, org_id: int, body: object, me: str | None
) -> tuple[int | None, int | None, Schedule, str, int, bool]:
    if not isinstance(body, dict):
        raise BadSubscription(
            "body", 'must be a JSON object {"target", "schedule", "format", "channel_id" | "to_me"}'
        )
    unknown = [k for k in body if k not in BODY_KEYS]
    if unknown:
        raise BadSubscription(
            str(unknown[0])[:64], f"unknown field; a subscription takes {', '.join(BODY_KEYS)}"
        )
    target = body.get("target")
    if (
        not isinstance(target, dict)
        or len(target) != 1
        or next(iter(target)) not in ("dashboard_id", "saved_query_id")
    ):
        raise BadSubscription("target", 'must be {"dashboard_id": N} or {"saved_query_id": N}')
    key, value = next(iter(target.items()))
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadSubscription(f"target.{key}", "must be a whole number")
    table = Dashboard if key == "dashboard_id" else SavedQuery
    if session.scalar(select(table.org_id).where(table.id == value)) != org_id:
        raise BadSubscription(
            f"target.{key}", f"no {key[:-3].replace('_', ' ')} {value} in this organization"
        )
    schedule = parse_schedule(body.get("schedule"))
    fmt = body.get("format") or "summary"
    if fmt == "pdf" and key != "dashboard_id":
        raise BadSubscription(
            "format", "a PDF is a dashboard rendered; a saved query is sent as summary or csv"
        )
    if fmt not in FORMATS:
        raise BadSubscription("format", f"{str(fmt)[:32]!r} is not one of {', '.join(FORMATS)}")
    if body.get("to_me") is True:
        if body.get("channel_id") is not None:
            raise BadSubscription("to_me", "give channel_id or to_me, not both")
        if not me:
            raise BadSubscription(
                "to_me", "needs a signed-in member (the dashboards page); over the API give channel_id"
            )
        channel_id = email_channel_for(session, org_id, me)
    else:
        given = body.get("channel_id")
        if isinstance(given, bool) or not isinstance(given, int):
            raise BadSubscription("channel_id", "give a channel id of the organization, or to_me: true")
        found = session.execute(
            select(AlertChannel.org_id, AlertChannel.personal_user_id).where(AlertChannel.id == given)
        ).first()
        # A person's own channel (issue notifications) is not the organization's: as if missing.
        if found is None or found[0] != org_id or found[1] is not None:
            raise BadSubscription("channel_id", f"no channel {given} in this organization")
        if me is not None and given not in offered_channels(session, org_id, me):
            raise BadSubscription(
                "channel_id", f"channel {given} is another member's own; choose a shared one"
            )
        channel_id = given
    paused = body.get("paused", False)
    if not isinstance(paused, bool):
        raise BadSubscription("paused", "must be true or false")
    dashboard_id = value if key == "dashboard_id" else None
    saved_id = value if key == "saved_query_id" else None
    return dashboard_id, saved_id, schedule, str(fmt), int(channel_id), paused


def _apply(
    row: Subscription, fields: tuple[int | None, int | None, Schedule, str, int, bool], now: datetime
) -> None:
    row.dashboard_id, row.saved_query_id, schedule, row.format, row.channel_id, row.paused = fields
    row.every, row.at, row.weekday, row.timezone = (
        schedule.every,
        schedule.at,
        schedule.weekday,
        schedule.timezone,
    )
    row.next_run_at = schedule.next_run(now)


def create_subscription(
    session: Session,
    org_id: int,
    body: object,
    *,
    owner_user_id: int | None = None,
    me: str | None = None,
    now: datetime | None = None,
) -> Subscription:
    """Validate and store a subscription; ``me`` is the signed-in member's address (for ``to_me``)."""
    now = now or datetime.now(UTC)
    fields = _fields(session, org_id, body, me)
    if len(list_subscriptions(session, org_id)) >= MAX_PER_ORG:
        raise BadSubscription("target", f"an organization keeps at most {MAX_PER_ORG} subscriptions")
    row = Subscription(org_id=org_id, owner_user_id=owner_user_id, last_error="")
    _apply(row, fields, now)
    session.add(row)
    session.flush()
    return row


def get_subscription(session: Session, org_id: int, subscription_id: int) -> Subscription:
    row = session.get(Subscription, subscription_id)
    if row is None or row.org_id != org_id:
        raise NotFound(f"no subscription {subscription_id} in this organization")
    return row


def replace_subscription(
    session: Session,
    org_id: int,
    subscription_id: int,
    body: object,
    *,
    me: str | None = None,
    now: datetime | None = None,
) -> Subscription:
    row = get_subscription(session, org_id, subscription_id)
    _apply(row, _fields(session, org_id, body, me), now or datetime.now(UTC))
    session.flush()
    return row


def set_paused(
    session: Session, org_id: int, subscription_id: int, paused: bool, now: datetime | None = None
) -> None:
    row = get_subscription(session, org_id, subscription_id)
    row.paused = paused
    if not paused:  # resumed: the next run from now, not the runs missed while paused
        row.next_run_at = schedule_of(row).next_run(now or datetime.now(UTC))
    session.flush()


def delete_subscription(session: Session, org_id: int, subscription_id: int) -> None:
    session.delete(get_subscription(session, org_id, subscription_id))
    session.flush()


def list_subscriptions(
    session: Session, org_id: int, *, dashboard_id: int | None = None, owner_user_id: int | None = None
) -> list[Subscription]:
    query = select(Subscription).where(Subscription.org_id == org_id)
    if dashboard_id is not None:
        query = query.where(Subscription.dashboard_id == dashboard_id)
    if owner_user_id is not None:
        query = query.where(Subscription.owner_user_id == owner_user_id)
    return list(session.scalars(query.order_by(Subscription.id)))


def due(session: Session, now: datetime) -> list[Subscription]:
    """Every organization's subscriptions whose next run has come, not paused."""
    query = select(Subscription).where(Subscription.paused.is_(False), Subscription.next_run_at <= now)
    return list(session.scalars(query.order_by(Subscription.next_run_at, Subscription.id)))
