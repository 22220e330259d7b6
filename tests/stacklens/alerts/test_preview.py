from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stacklens.alerts import rules
from stacklens.alerts.preview import preview
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.test_evaluation import _load, ev, tx

NOW = datetime.now(UTC).replace(minute=30, second=0, microsecond=0)


def test_preview_replays_30_days_through_the_state_machine(settings: Settings, client) -> None:  # noqa: ANN001
    org_id, project_id, slug = org_with_project(settings)
    with session_scope(settings) as session:
        perf = rules.create_rule(
            session,
            org_id,
            {
                "name": "LCP",
                "type": "performance_budget",
                "project": slug,
                "metric": "lcp_ms",
                "threshold": 2000,
                "window": "1h",
                "min_samples": 2,
            },
        )
        freq = rules.create_rule(
            session,
            org_id,
            {"name": "Busy", "type": "event_frequency", "project": slug, "threshold": 2, "window": "1h"},
        )
        new = rules.create_rule(session, org_id, {"name": "New", "type": "new_issue", "project": slug})
    slow = NOW - timedelta(days=5)
    rows = [tx(project_id, 3000, slow + timedelta(minutes=m)) for m in range(4)]  # one slow hour
    rows += [tx(project_id, 500, NOW - timedelta(days=2) + timedelta(minutes=m)) for m in range(4)]  # fast
    _load(client, rows, [ev(project_id, 7, slow + timedelta(minutes=m), f"u{m}") for m in range(3)], days=6)
    got = preview(client, perf, NOW)
    assert len(got.points) == 30 * 24 + 1
    ((start, end, peak),) = got.periods
    assert start == slow.replace(minute=0) + timedelta(hours=1) and end == start + timedelta(hours=1)
    assert peak == 3000 and got.notifications == 1
    busy = preview(client, freq, NOW)
    assert len(busy.periods) == 1 and busy.periods[0][2] == 3
    assert sum(n for _, n in preview(client, new, NOW).daily) == 1
