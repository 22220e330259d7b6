"""``python -m demo.prepare``, the step `stacklens up` runs before the server: the demo's alert channel, rules
and budgets, made once however often it runs."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from demo import prepare
from demo.alerts import CHANNEL_NAME
from demo.budgets import DEMO_BUDGETS
from demo.retention import DEMO_MAX_EVENTS_PER_ISSUE
from stacklens.control.budgets import list_budgets
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertChannel, AlertRule
from stacklens.control.project_retention import set_event_caps
from stacklens.control.projects import project_by_slug
from stacklens.settings import Settings


def test_prepare_makes_the_demo_alerts_and_budgets_once(settings: Settings, make_org, tmp_path: Path) -> None:
    org = make_org("Demo")
    secret = tmp_path / "demo" / "webhook_secret"
    argv = [
        "--organization",
        "Demo",
        "--project",
        str(org["project"]),
        "--shop-url",
        "http://127.0.0.1:8001",
        "--webhook-secret-file",
        str(secret),
    ]
    assert prepare.main(argv) == 0
    assert prepare.main(argv) == 0
    assert secret.read_text()  # the channel's signing secret, for the shop's inbox
    with session_scope(settings) as session:
        channels = session.scalars(select(AlertChannel.name)).all()
        rules = session.scalar(select(func.count()).select_from(AlertRule))
        budgets = list_budgets(session, project_by_slug(session, str(org["project"])))
    assert channels == [CHANNEL_NAME]
    # one of each type, two of event frequency, the monitors rule (demo/monitors.py) and four anomaly rules
    assert rules == 13
    assert len(budgets) == len(DEMO_BUDGETS)
    with session_scope(settings) as session:
        project = project_by_slug(session, str(org["project"]))
        assert project.max_events_per_issue == DEMO_MAX_EVENTS_PER_ISSUE
        set_event_caps(session, project.org_id, project.id, None, None)  # lifted by the user: stays lifted
    assert prepare.main(argv) == 0
    with session_scope(settings) as session:
        assert project_by_slug(session, str(org["project"])).max_events_per_issue is None


def test_prepare_makes_the_demo_dashboard_once(settings: Settings, make_org, tmp_path: Path) -> None:
    from demo.dashboard_workspace import NAME as WORKSPACE
    from demo.dashboard_workspace import workspace_dashboard
    from demo.dashboards import NAME, demo_dashboard
    from stacklens.explore.dashboards import list_dashboards

    org = make_org("Demo")
    argv = ["--organization", "Demo", "--project", str(org["project"]), "--shop-url", "http://127.0.0.1:8001"]
    argv += ["--webhook-secret-file", str(tmp_path / "secret")]
    assert prepare.main(argv) == 0 and prepare.main(argv) == 0
    with session_scope(settings) as session:
        boards = list_dashboards(session, int(org["org_id"]))
    # The first dashboard and the workspace one (variables, drill-down, the new kinds): once each.
    assert [b.name for b in boards] == [NAME, WORKSPACE]
    assert [len(b.widgets) for b in boards] == [
        len(demo_dashboard()["widgets"]),
        len(workspace_dashboard()["widgets"]),
    ]
    assert sum("sql" in w for w in boards[0].widgets) == 1 and sum("sql" in w for w in boards[1].widgets) == 1
    assert boards[1].variables and boards[1].refresh == "1m"
