"""The view tools on an empty project: each names what it covers with no data, and bad arguments name the
argument."""

from __future__ import annotations

import pytest

from stacklens.agents import tools_views
from stacklens.agents.budget import OverBudget
from stacklens.errors import InvalidInput, NotFound, StackLensError
from stacklens.explore.run import MAX_CONCURRENT_PER_ORG, take_org_slot
from stacklens.settings import Settings
from tests.stacklens.agents.tools_world import tool_context


def test_views_cover_their_window_with_no_data(settings: Settings, make_org) -> None:
    acme = make_org("Acme", "Shop")
    with tool_context(settings, acme, frozenset({"read"})) as ctx:
        assert tools_views.releases(ctx, "shop")["covers"]["count"] == 0
        assert tools_views.releases(ctx, "shop")["covers"]["range"] == "30d"
        overview = tools_views.performance_overview(ctx, "shop", range="24h")
        assert overview["covers"]["range"] == "24h"
        assert tools_views.budgets(ctx, "shop") == {"covers": {"project": "shop", "count": 0}, "budgets": []}
        assert tools_views.monitors(ctx, "shop")["monitors"] == []
        assert tools_views.logs(ctx, "shop", query="boom")["logs"] == []
        with pytest.raises(InvalidInput, match=r"^limit:"):
            tools_views.logs(ctx, "shop", limit=1000)
        with pytest.raises(InvalidInput, match=r"^page:"):
            tools_views.page_vitals(ctx, "shop", page="/nowhere")
        with pytest.raises(InvalidInput, match=r"^version:"):
            tools_views.releases(ctx, "shop", version="9.9")
        with pytest.raises(NotFound, match=r"^project:"):
            tools_views.budgets(ctx, "elsewhere")
        with pytest.raises(StackLensError, match="dataset"):
            tools_views.explore(ctx, {"dataset": "secrets", "project": "shop"})


def test_explore_over_its_slots_names_the_budget(settings: Settings, make_org) -> None:
    acme = make_org("Acme", "Shop")
    held = [take_org_slot(acme["org_id"]) for _ in range(MAX_CONCURRENT_PER_ORG)]
    try:
        with tool_context(settings, acme, frozenset({"read"})) as ctx:
            question = {"dataset": "errors", "project": "shop", "aggregates": [{"fn": "count"}]}
            with pytest.raises(OverBudget) as refused:
                tools_views.explore(ctx, question)
            assert refused.value.as_dict()["budget"] == "explore_concurrency"
            assert refused.value.as_dict()["limit"] == MAX_CONCURRENT_PER_ORG
    finally:
        for release in held:
            release()
