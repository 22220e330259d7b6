"""The demo's monitors: the order-mail worker as a cron job and an uptime check of the shop.

The worker sends its order mails in a batch every 10 minutes (``*/10 * * * *``) and checks in as Sentry's
HTTP check-in does (``in_progress``, then ``ok``, or ``error`` when a mail of the batch failed); now and then
it misses a batch (the worker was busy), which the server reports as a missed run.
:func:`ensure_demo_monitors` (run by ``python -m demo.prepare`` before the server starts) makes both
monitors, a rule of type ``monitor``
to the shop's alert inbox, and — on the first start — three days of the worker's history, recorded as the
live check-ins are and judged by the same detection, so the monitors page has a timeline from the start.
Safe to run again (by slug and name).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import select

from demo.alerts import CHANNEL_NAME
from stacklens.alerts import rules
from stacklens.cli.launch import demo_allow
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.alerts import AlertChannel, AlertRule
from stacklens.control.models.monitors import Monitor
from stacklens.monitors.checkins import CheckIn, record
from stacklens.monitors.detection import detect
from stacklens.monitors.schedules import next_expected, parse_schedule
from stacklens.monitors.store import create_monitor
from stacklens.outbound import AllowList
from stacklens.public_url import public_base_url
from stacklens.settings import Settings

WORKER_SLUG = "order-mail"
WORKER_SCHEDULE = "*/10 * * * *"
SHOP_SLUG = "shop"
RULE_NAME = "Monitors: missed, failed or down"
HISTORY_DAYS = 3
# One batch in 12 is skipped (the worker was busy), one in 25 fails (a mail the provider refused).
MISS_ONE_IN = 12
FAIL_ONE_IN = 25
# Where the driver reads the HTTP check-in's base URL (`stacklens up` sets it: the server's
# /api/<project id>/cron).
CHECKIN_BASE_ENV = "STACKLENS_DEMO_CHECKIN_BASE"


def ensure_demo_monitors(settings: Settings, project_slug: str, shop_url: str) -> None:
    allowed = settings.model_copy(update={"outbound_allow": demo_allow(settings)})
    allow = AllowList.parse(allowed.outbound_allow)
    now = datetime.now(UTC)
    seeded = False
    with session_scope(allowed) as session:
        project = session.scalar(select(Project).where(Project.slug == project_slug))
        if project is None:
            return
        project_id, org_id = project.id, project.org_id
        slugs = set(session.scalars(select(Monitor.slug).where(Monitor.project_id == project_id)))
        if WORKER_SLUG not in slugs:
            body = {
                "slug": WORKER_SLUG,
                "name": "Order-mail worker",
                "schedule": WORKER_SCHEDULE,
                "checkin_margin": 2,
                "max_runtime": 5,
                "environment": "production",
            }
            create_monitor(session, project, body, allow, now=now - timedelta(days=HISTORY_DAYS))
            seeded = True
        if SHOP_SLUG not in slugs:
            body = {
                "slug": SHOP_SLUG,
                "name": "Shop health",
                "kind": "uptime",
                "url": f"{shop_url}/api/health",
                "interval_seconds": 60,
                "timeout_ms": 5000,
                "failure_threshold": 2,
            }
            create_monitor(session, project, body, allow, now=now)
        channel = session.scalar(
            select(AlertChannel).where(AlertChannel.org_id == org_id, AlertChannel.name == CHANNEL_NAME)
        )
        named = session.scalar(
            select(AlertRule.id).where(AlertRule.org_id == org_id, AlertRule.name == RULE_NAME)
        )
        if channel is not None and named is None:
            body = {"name": RULE_NAME, "type": "monitor", "project": project_slug, "channels": [channel.id]}
            rules.create_rule(session, org_id, body)
    if seeded:
        _history(allowed, org_id, project_id, now)


def _history(settings: Settings, org_id: int, project_id: int, now: datetime) -> None:
    """The worker's last days, batch by batch, as the live worker sends them; detection runs after a
    skipped batch's deadline as the server's tick would, so the misses are the server's own reports (the
    batches between two misses are recorded in one transaction: ~430 batches take a few seconds)."""
    rng = random.Random(64)
    allow = AllowList.parse(settings.outbound_allow)
    base_url = public_base_url(settings)
    schedule = parse_schedule(WORKER_SCHEDULE)
    slot = next_expected(schedule, "UTC", now - timedelta(days=HISTORY_DAYS))
    batches: list[tuple[datetime, str]] = []
    while slot + timedelta(minutes=2) < now:  # later batches are the live worker's (run_worker_checkins)
        batches.append((slot, _fate(rng)))
        slot = next_expected(schedule, "UTC", slot)
    run: list[tuple[datetime, str]] = []
    for due, fate in [*batches, (now, "end")]:
        if fate not in ("missed", "end"):
            run.append((due, fate))
            continue
        with session_scope(settings) as session:
            for batch, outcome in run:
                began = batch + timedelta(seconds=rng.uniform(1, 20))
                took = timedelta(seconds=rng.uniform(3, 40))
                check_in_id = f"{int(batch.timestamp()):032x}"
                for status, at in (("in_progress", began), (outcome, began + took)):
                    checkin = CheckIn(check_in_id, WORKER_SLUG, status, None, "production", None)
                    record(session, org_id, project_id, checkin, at, allow, base_url, "http")
        run = []
        if fate == "missed":
            detect(settings, base_url, due + timedelta(minutes=3))


def _fate(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 1 / MISS_ONE_IN:
        return "missed"
    return "error" if roll < 1 / MISS_ONE_IN + 1 / FAIL_ONE_IN else "ok"


def run_worker_checkins(
    base: str,
    worker_key: str,
    rng: random.Random,
    stop: Callable[[], bool],
    say: Callable[[str], None] = print,
) -> threading.Thread:
    """The live worker's batches: every 10 minutes, in_progress then ok or error through the HTTP
    check-in, or nothing at all for a missed batch. Runs in a daemon thread until ``stop()``."""
    url = f"{base.rstrip('/')}/{WORKER_SLUG}/{worker_key}/"

    def loop() -> None:
        schedule = parse_schedule(WORKER_SCHEDULE)
        # A batch due within the last 2 minutes (the monitor's margin) is still run: the history stops there.
        last = datetime.now(UTC) - timedelta(minutes=2)
        with httpx.Client(timeout=10) as client:
            while not stop():
                due = next_expected(schedule, "UTC", max(last, datetime.now(UTC) - timedelta(minutes=2)))
                last = due
                while datetime.now(UTC) < due + timedelta(seconds=3):
                    if stop():
                        return
                    time.sleep(1.0)
                fate = _fate(rng)
                if fate == "missed":
                    say(
                        f"order-mail worker: skipped the {due:%H:%M} batch (the server will report it missed)"
                    )
                    continue
                try:
                    started = client.get(url, params={"status": "in_progress"})
                    check_in_id = started.json().get("id", "")
                    time.sleep(rng.uniform(3, 20))
                    client.get(url, params={"status": fate, "check_in_id": check_in_id})
                except (httpx.HTTPError, ValueError) as exc:
                    say(f"order-mail worker: check-in failed ({exc})")

    thread = threading.Thread(target=loop, name="order-mail-checkins", daemon=True)
    thread.start()
    return thread
