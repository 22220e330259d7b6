"""Dashboard variables and refresh (issue 70 points 3 and 5): stored with the dashboard and exported with it,
every bad field named, ``$name`` references checked, values taken from the URL (else the default), and each
widget's question filtered by them — by reference, or by the variable's column when its dataset has it, and
said when it has not."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.control.db import session_scope
from stacklens.explore import dashboard_variables as dv
from stacklens.explore.dashboards import create_dashboard, get_dashboard, replace_dashboard
from stacklens.explore.query import BadQuery
from stacklens.settings import Settings

PAGE_LCP = {
    "dataset": "pageloads",
    "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
    "filters": [{"field": "page", "op": "=", "value": "$page"}],
    "interval": "1d",
}
BODY: dict[str, Any] = {
    "name": "Checkout",
    "variables": [
        {"name": "page", "column": "page", "default": "/checkout"},
        {"name": "browser", "column": "browser"},
        {"name": "env", "values": ["production", "staging"], "default": "production"},
    ],
    "refresh": "1m",
    "widgets": [
        {"title": "LCP of $page", "kind": "area", "query": PAGE_LCP},
        {"title": "Errors", "kind": "stacked_bar", "query": {"dataset": "errors", "group_by": ["level"]}},
    ],
}


def test_variables_and_refresh_are_stored_exported_and_named_when_bad(settings: Settings, make_org) -> None:
    org = int(make_org("Acme")["org_id"])
    with session_scope(settings) as session:
        board = create_dashboard(session, org, BODY)
        assert board.refresh == "1m"
        assert board.variables == [
            {"name": "page", "column": "page", "default": "/checkout"},
            {"name": "browser", "column": "browser", "default": ""},
            {"name": "env", "values": ["production", "staging"], "default": "production"},
        ]
        assert board.as_json()["variables"] == board.variables and board.as_body()["refresh"] == "1m"
        assert [w["kind"] for w in board.widgets] == ["area", "stacked_bar"]
        again = create_dashboard(session, org, board.as_body())
        assert again.as_body() == board.as_body()
        replaced = replace_dashboard(session, org, board.id, {**board.as_body(), "refresh": None})
        assert replaced.refresh is None and get_dashboard(session, org, board.id).variables == board.variables
        bad: list[tuple[dict[str, Any], str]] = [
            ({"refresh": "10s"}, "refresh"),
            ({"variables": {"page": 1}}, "variables"),
            ({"variables": [{"name": "Page", "column": "page"}]}, "variables[0].name"),
            ({"variables": [{"name": "p", "column": "page", "values": ["a"]}]}, "variables[0]"),
            ({"variables": [{"name": "p", "column": "colour"}]}, "variables[0].column"),
            ({"variables": [{"name": "p", "values": []}]}, "variables[0].values"),
            ({"variables": [{"name": "p", "values": ["a"], "default": "b"}]}, "variables[0].default"),
            (
                {"variables": [{"name": "p", "column": "page"}, {"name": "p", "column": "os"}]},
                "variables[1].name",
            ),
            ({"variables": [{"name": "p", "column": "page", "size": 3}]}, "variables[0].size"),
            ({"variables": []}, "widgets[0].query.filters"),  # $page used, not defined
        ]
        for change, field in bad:
            with pytest.raises(BadQuery) as caught:
                create_dashboard(session, org, {**BODY, **change})
            assert caught.value.field == field, (change, str(caught.value))


def test_values_from_the_url_else_the_default_and_a_fixed_list_keeps_to_its_values() -> None:
    variables = dv.variables_of(dv.parse_variables(BODY["variables"]))
    assert dv.chosen_values(variables, {}) == {"page": "/checkout", "browser": "", "env": "production"}
    chosen = dv.chosen_values(variables, {"var-page": "/cart", "var-browser": "Firefox", "var-env": ""})
    assert chosen == {"page": "/cart", "browser": "Firefox", "env": ""}
    with pytest.raises(BadQuery) as caught:
        dv.chosen_values(variables, {"var-env": "qa"})
    assert caught.value.field == "var-env"
    assert dv.parse_refresh("off") is None and dv.parse_refresh("15m") == "15m"


def test_every_widget_is_filtered_by_reference_or_by_its_column() -> None:
    variables = dv.variables_of(dv.parse_variables(BODY["variables"]))
    chosen = {"page": "/cart", "browser": "Firefox", "env": "production"}
    body, used, unfiltered = dv.apply_variables(PAGE_LCP, variables, chosen)
    # $page by reference, browser by its column (page loads have one), env is a fixed list nobody uses.
    assert body["filters"] == [
        {"field": "page", "op": "=", "value": "/cart"},
        {"field": "browser", "op": "=", "value": "Firefox"},
    ]
    assert (used, unfiltered) == (["page", "browser"], [])
    # "All" filters nothing, by reference or by column.
    body, used, _ = dv.apply_variables(PAGE_LCP, variables, {"page": "", "browser": "", "env": ""})
    assert body["filters"] == [] and used == ["page"]
    # A dataset without a page field is filtered by browser (it has one) and says page does not apply.
    errors = {
        "dataset": "errors",
        "filters": [{"field": "level", "op": "in", "value": ["error", "$missing"]}],
    }
    body, used, unfiltered = dv.apply_variables(errors, variables, chosen)
    assert body["filters"][0] == {"field": "level", "op": "in", "value": ["error", "$missing"]}
    assert body["filters"][1:] == [{"field": "browser", "op": "=", "value": "Firefox"}]
    assert (used, unfiltered) == (["browser"], ["page"])
    tagged = {"dataset": "errors", "filters": [{"field": "tag:plan", "op": "in", "value": ["$env", "free"]}]}
    body, used, _ = dv.apply_variables(tagged, variables, chosen)
    assert body["filters"][0] == {"field": "tag:plan", "op": "in", "value": ["production", "free"]}
    assert "env" in used
