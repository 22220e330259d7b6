"""The demo's dashboard on demo-shaped data (the shop's sessions of 15 days and page loads of 8, landed as
ingest stores them): made once, every widget answers without an error, and its numbers are the release and
performance figures of the same window — the crash-free sessions of the demo's releases, LCP and INP in
milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime

from demo.dashboards import NAME, demo_dashboard, ensure_demo_dashboard
from stacklens.control.db import session_scope
from stacklens.explore.dashboards import list_dashboards
from stacklens.explore.widgets import answer_widgets
from stacklens.settings import Settings
from tests.demo import demo_pageloads, demo_sessions
from tests.stacklens.performance.perf_seed import migrated


def test_the_demo_dashboard_answers_on_demo_data(settings: Settings, make_org) -> None:
    org = make_org("Demo")
    client = migrated(settings)
    demo_sessions.land(client, int(org["org_id"]), int(org["project_id"]))
    demo_pageloads.land(client, int(org["org_id"]), int(org["project_id"]))
    assert ensure_demo_dashboard(settings, str(org["project"])) is True
    assert ensure_demo_dashboard(settings, str(org["project"])) is False
    assert ensure_demo_dashboard(settings, "no-such-project") is False
    with session_scope(settings) as session:
        (board,) = list_dashboards(session, int(org["org_id"]))
        assert board.name == NAME
        assert [(w["title"], w["kind"]) for w in board.widgets] == [
            (w["title"], w["kind"]) for w in demo_dashboard()["widgets"]
        ]
        answers = answer_widgets(
            client, session, int(org["org_id"]), board.widgets, board.filters, datetime.now(UTC)
        )
    assert [a.error for a in answers] == [""] * len(answers)
    by_title = {a.widget["title"]: a for a in answers}
    crash_free = by_title["Crash-free sessions"].number
    assert 90 < crash_free < 100  # the demo's releases run 94.7–97.7 % crash-free
    assert by_title["LCP p75"].number > 0 and by_title["INP p75"].number > 0
    releases = {r["release"] for r in by_title["Release health"].result.rows}
    assert len(releases) >= 2 and all(r.startswith("shop@") for r in releases)
    assert by_title["LCP p75 by release"].result.series and by_title["Pages"].result.rows
    panel = by_title["Slowest pages by LCP p75 (SQL)"].result  # the SQL panel: its own columns
    assert panel is not None and panel.columns == ["page", "page_loads", "lcp_p75_ms"]


def test_the_demo_subscribes_its_inbox_to_the_dashboard_summary(
    settings: Settings, make_org, tmp_path
) -> None:
    from demo.alerts import ensure_demo_alerts
    from demo.dashboards import ensure_demo_subscription
    from stacklens.explore.subscriptions import list_subscriptions

    org = make_org("Demo")
    project = str(org["project"])
    now = datetime(2026, 11, 26, 9, 5, tzinfo=UTC)
    assert ensure_demo_subscription(settings, project, now) is False  # no dashboard and no channel yet
    ensure_demo_alerts(settings, "Demo", project, "http://127.0.0.1:9", tmp_path / "secret")
    ensure_demo_dashboard(settings, project)
    assert ensure_demo_subscription(settings, project, now) is True
    assert ensure_demo_subscription(settings, project, now) is False
    with session_scope(settings) as session:
        (sub,) = list_subscriptions(session, int(org["org_id"]))
        (board,) = list_dashboards(session, int(org["org_id"]))
        assert (sub.dashboard_id, sub.format, sub.every, sub.at) == (board.id, "summary", "day", "10:00")
        # The first report goes at the first whole hour after the start: within the hour.
        assert sub.next_run_at.replace(tzinfo=UTC) == datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
