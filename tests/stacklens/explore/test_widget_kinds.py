"""The kinds beyond the four (issue 70 point 6): each asked as one of the four, a heat map as its metric's
five percentiles over time, refusals that say why (a stack of percentiles, a scatter of one aggregate, a heat
map of a count), and a gauge read against the organization's budget of its metric, else the catalog's good
threshold."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.models import Budget
from stacklens.explore.query import Aggregate
from stacklens.explore.widget_kinds import asked_as, gauge_budget, refusal, shaped
from stacklens.settings import Settings


def test_each_kind_is_asked_as_one_of_the_four_and_a_heat_map_as_five_percentiles() -> None:
    assert [asked_as(k) for k in ("area", "stacked_bar", "scatter", "heatmap", "gauge", "line")] == [
        "line",
        "bar",
        "table",
        "line",
        "number",
        "line",
    ]
    body = {"dataset": "pageloads", "aggregates": [{"fn": "avg", "metric": "lcp_ms"}], "group_by": ["page"]}
    heat = shaped(body, "heatmap")
    assert heat["aggregates"] == [{"fn": p, "metric": "lcp_ms"} for p in ("p50", "p75", "p90", "p95", "p99")]
    assert heat["group_by"] == [] and shaped(body, "area") is body


def test_refusals_say_why() -> None:
    p75, count = Aggregate("p75", "lcp_ms"), Aggregate("count", "")
    assert "do not add up" in refusal("stacked_bar", [p75], 1) and "LCP p75" in refusal(
        "stacked_bar", [p75], 1
    )
    assert refusal("stacked_bar", [count, Aggregate("sum", "resource_bytes")], 2).startswith("Not stacked")
    assert refusal("stacked_bar", [count], 1) == ""
    assert "two" in refusal("scatter", [count], 1) and refusal("scatter", [count, p75], 2) == ""
    assert "metric" in refusal("heatmap", [count], 1) and refusal("heatmap", [p75], 1) == ""


def test_a_gauge_reads_the_budget_else_the_good_threshold(settings: Settings, make_org) -> None:
    org, other = make_org("Acme"), make_org("Globex")
    p75 = Aggregate("p75", "lcp_ms")
    with session_scope(settings) as session:
        found = gauge_budget(session, int(org["org_id"]), "", p75)
        assert found is not None and found.value == 2500 and "good threshold" in found.source
        assert found.text.endswith("ms") or found.text.endswith(" s"), found.text
        session.add(
            Budget(org_id=int(org["org_id"]), project_id=int(org["project_id"]), metric="lcp_ms", value=1800)
        )
        session.flush()
        found = gauge_budget(session, int(org["org_id"]), "", p75)
        assert found is not None and found.value == 1800 and found.better == "lower"
        assert found.source.startswith("budget of project")
        # Another organization never reads it.
        theirs = gauge_budget(session, int(other["org_id"]), "", p75)
        assert theirs is not None and theirs.value == 2500
        assert gauge_budget(session, int(org["org_id"]), "", Aggregate("count", "")) is None
