"""The demo's alerting: a signed webhook channel to the demo shop's alert inbox and one rule of each type,
so the alert pages, the channel's delivery log and the rule previews are filled.

The channel posts to the shop on loopback, which the SSRF guard refuses unless allowed: the demo adds
``127.0.0.1`` to ``STACKLENS_OUTBOUND_ALLOW`` for its server. No e-mail channel: the demo has no SMTP server,
and a channel that cannot deliver would only fill the log with failures. Safe to run again (by name).
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import select

from stacklens.alerts import rules
from stacklens.control.alert_models import AlertChannel, AlertRule
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.settings import Settings

CHANNEL_NAME = "Demo shop inbox"
INBOX_PATH = "/webhooks/stacklens"  # the demo shop's alert inbox (demo_shop/alert_inbox.py)
LOOPBACK = "127.0.0.1"


def demo_allow(settings: Settings) -> str:
    """The demo server's ``STACKLENS_OUTBOUND_ALLOW``: the operator's value plus loopback."""
    current = [p.strip() for p in (settings.outbound_allow or "").split(",") if p.strip()]
    return ",".join(current if LOOPBACK in current else [*current, LOOPBACK])


def demo_rules(project: str, channel_id: int) -> list[dict]:
    base = {"project": project, "channels": [channel_id]}
    return [
        {
            **base,
            "name": "Checkout LCP budget",
            "type": "performance_budget",
            "metric": "lcp_ms",
            "statistic": "p75",
            "scope": "/checkout",
            "threshold": 2500,
            "resolve_threshold": 2300,
            "window": "7d",
            "min_samples": 20,
        },
        {
            **base,
            "name": "Page load p75, all pages",
            "type": "performance_budget",
            "metric": "load_time_ms",
            "statistic": "p75",
            "scope": "*",
            "threshold": 2000,
            "warning_threshold": 1600,
            "resolve_threshold": 1800,
            "window": "1d",
            "min_samples": 50,
            "renotify_minutes": 240,
        },
        {
            **base,
            "name": "New issues in production",
            "type": "new_issue",
            "window": "1h",
            "environment": "production",
        },
        {**base, "name": "Regressions", "type": "regression", "window": "1h"},
        {
            **base,
            "name": "Busy issue",
            "type": "event_frequency",
            "threshold": 40,
            "count_kind": "events",
            "window": "1h",
        },
        {
            **base,
            "name": "Failed requests above 5 %",
            "type": "error_rate",
            "threshold": 5,
            "window": "1h",
            "min_samples": 50,
        },
    ]


def ensure_demo_alerts(
    settings: Settings, org_name: str, project_slug: str, shop_url: str, secret_path: Path
) -> None:
    allowed = settings.model_copy(update={"outbound_allow": demo_allow(settings)})
    with session_scope(allowed) as session:
        project = session.scalar(select(Project).where(Project.slug == project_slug))
        if project is None:
            return
        org_id = project.org_id
        channel = session.scalar(
            select(AlertChannel).where(AlertChannel.org_id == org_id, AlertChannel.name == CHANNEL_NAME)
        )
        if channel is not None and not secret_path.exists():  # the secret is shown once: start over
            session.delete(channel)
            session.flush()
            channel = None
        if channel is None:
            channel, secret = create_channel(
                session, org_id, allowed, type="webhook", name=CHANNEL_NAME, url=f"{shop_url}{INBOX_PATH}"
            )
            secret_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(secret_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secret or "")
        existing = set(session.scalars(select(AlertRule.name).where(AlertRule.org_id == org_id)))
        for body in demo_rules(project.slug, channel.id):
            if body["name"] not in existing:
                rules.create_rule(session, org_id, body)
