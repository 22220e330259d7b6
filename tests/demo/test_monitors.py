"""The demo's monitors: the order-mail worker as a cron job with three days of history (runs ok, a few
failed, a few missed and reported by detection), an uptime check of the shop and a monitors rule to the
shop's inbox, made once however often `demo.prepare` runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sqlalchemy import func, select

from demo import prepare
from demo.monitors import RULE_NAME, SHOP_SLUG, WORKER_SLUG
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertRule
from stacklens.control.models.monitors import Monitor, MonitorCheckIn, MonitorIncident
from stacklens.settings import Settings


def test_prepare_makes_the_demo_monitors_once(settings: Settings, make_org, tmp_path: Path) -> None:
    org = make_org("Demo")
    argv = ["--organization", "Demo", "--project", str(org["project"]), "--shop-url", "http://127.0.0.1:8001"]
    argv += ["--webhook-secret-file", str(tmp_path / "secret")]
    assert prepare.main(argv) == 0

    def seen() -> tuple[dict[str, str], Counter[str], int]:
        with session_scope(settings) as session:
            kinds = {m.slug: m.kind for m in session.scalars(select(Monitor))}
            statuses = Counter(session.scalars(select(MonitorCheckIn.status)))
            incidents = session.scalar(select(func.count()).select_from(MonitorIncident)) or 0
        return kinds, statuses, incidents

    kinds, statuses, incidents = seen()
    assert kinds == {WORKER_SLUG: "cron", SHOP_SLUG: "uptime"}
    # 3 days of a batch every 10 minutes: ~430, about one in 12 missed and one in 25 failed.
    assert 400 <= sum(statuses.values()) <= 440
    assert 15 <= statuses["missed"] <= 60 and 5 <= statuses["error"] <= 35
    assert statuses["in_progress"] == 0 and statuses["timeout"] == 0
    assert incidents >= 10
    assert prepare.main(argv) == 0
    assert seen() == (kinds, statuses, incidents)  # a second start adds nothing
    with session_scope(settings) as session:
        rule = session.scalar(select(AlertRule).where(AlertRule.name == RULE_NAME))
        assert rule is not None and rule.type == "monitor" and rule.channel_ids
        shop = session.scalar(select(Monitor).where(Monitor.slug == SHOP_SLUG))
        assert shop is not None and shop.url == "http://127.0.0.1:8001/api/health"
