"""The demo's workspace dashboard (issue 70) on demo-shaped data: made once, its variables offer the shop's
pages and browsers, every widget answers without an error under them, a chosen page narrows every page-load
widget to it, and the kinds beyond the four draw what they say (a gauge against a budget, a heat map of the
five percentiles, a scatter of the pages)."""

from __future__ import annotations

from datetime import UTC, datetime

from demo.dashboard_workspace import NAME, ensure_workspace_dashboard, workspace_dashboard
from stacklens.control.db import session_scope
from stacklens.explore import dashboard_variables as dv
from stacklens.explore.dashboards import list_dashboards
from stacklens.explore.widget_kinds import gauge_budget
from stacklens.explore.widget_plot import widget_plot
from stacklens.explore.widgets import answer_widgets
from stacklens.settings import Settings
from tests.demo import demo_pageloads, demo_sessions
from tests.stacklens.performance.perf_seed import migrated


def test_the_workspace_dashboard_uses_variables_and_every_kind(settings: Settings, make_org) -> None:
    org = make_org("Demo")
    org_id = int(org["org_id"])
    client = migrated(settings)
    demo_sessions.land(client, org_id, int(org["project_id"]))
    demo_pageloads.land(client, org_id, int(org["project_id"]))
    assert ensure_workspace_dashboard(settings, str(org["project"])) is True
    assert ensure_workspace_dashboard(settings, str(org["project"])) is False
    assert ensure_workspace_dashboard(settings, "no-such-project") is False
    now = datetime.now(UTC)
    with session_scope(settings) as session:
        (board,) = list_dashboards(session, org_id)
        assert board.name == NAME and board.refresh == "1m"
        assert [w["kind"] for w in board.widgets] == [w["kind"] for w in workspace_dashboard()["widgets"]]
        variables = dv.variables_of(board.variables)
        options = dv.variable_options(client, session, org_id, variables, board.widgets, board.filters, now)
        assert len(options["page"]) >= 2 and options["browser"], options
        everything = dv.with_variables(session, org_id, board.widgets, variables, {"page": "", "browser": ""})
        answers = answer_widgets(client, session, org_id, everything, board.filters, now)
        assert [a.error for a in answers] == [""] * len(answers)
        by_kind = {a.widget["kind"]: a for a in answers}
        gauge = by_kind["gauge"]
        assert gauge.number > 0 and gauge.query is not None
        assert gauge_budget(session, org_id, "", gauge.query.aggregates[0]) is not None
        heat = widget_plot(by_kind["heatmap"])
        assert heat is not None and [line.name.split()[1] for line in heat.lines] == [
            "p50",
            "p75",
            "p90",
            "p95",
            "p99",
        ]
        scatter = widget_plot(by_kind["scatter"])
        assert scatter is not None and len(scatter.x) >= 2 and not scatter.refusal
        stacked = widget_plot(by_kind["stacked_bar"])
        assert stacked is not None and stacked.time and not stacked.refusal
        # One page chosen: the pages bar holds that page alone, the gauge is that page's LCP.
        page = options["page"][0]
        narrowed = dv.with_variables(session, org_id, board.widgets, variables, {"page": page, "browser": ""})
        answers = answer_widgets(client, session, org_id, narrowed, board.filters, now)
        pages = next(a for a in answers if a.widget["title"].startswith("LCP p75 by page"))
        assert [r["page"] for r in pages.result.rows] == [page]
        assert answers[0].widget["variables_used"] == ["page"]
        # The SQL panel follows $page too: that page's loads by browser, fewer than every page's.
        panel = next(a for a in answers if "sql" in a.widget).result
        every = by_kind["table"].result
        assert (
            panel is not None
            and every is not None
            and panel.columns == ["browser", "page_loads", "lcp_p75_ms"]
        )
        assert 0 < sum(r["page_loads"] for r in panel.rows) < sum(r["page_loads"] for r in every.rows)
