"""Dashboards in the control store: a body is stored normalised (widgets in reading order, queries as Explore
keeps them), every bad field is named, another organization's dashboards, saved queries and projects are never
reachable, and the grid flows without holes after an edit."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.control.db import session_scope
from stacklens.errors import NotFound
from stacklens.explore.dashboards import (
    MAX_WIDGETS,
    create_dashboard,
    delete_dashboard,
    flow,
    get_dashboard,
    list_dashboards,
    replace_dashboard,
)
from stacklens.explore.query import BadQuery
from stacklens.explore.saved import create_saved
from stacklens.settings import Settings

LCP = {"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "lcp_ms"}], "interval": "1d"}
BODY: dict[str, Any] = {
    "name": " Release health ",
    "description": "last 30 days",
    "filters": {"range": "30d", "environment": "production"},
    "widgets": [
        {
            "title": "Crash-free",
            "kind": "line",
            "view": "releases.crash_free_sessions",
            "layout": {"x": 6, "y": 0, "w": 6, "h": 2},
        },
        {"title": "LCP", "kind": "number", "query": LCP, "layout": {"x": 0, "y": 0, "w": 6, "h": 2}},
    ],
}


def test_create_list_replace_delete_within_the_organization(settings: Settings, make_org) -> None:
    acme, other = int(make_org("Acme")["org_id"]), int(make_org("Globex")["org_id"])
    with session_scope(settings) as session:
        board = create_dashboard(session, acme, BODY)
        assert board.name == "Release health"
        assert board.filters == {"range": "30d", "environment": "production", "release": "", "project": ""}
        # Reading order is (y, x): the number at x=0 comes first.
        assert [w["title"] for w in board.widgets] == ["LCP", "Crash-free"]
        assert board.widgets[0]["query"]["aggregates"] == [{"fn": "p75", "metric": "lcp_ms"}]
        assert board.widgets[0]["query"]["order_by"] == "-lcp_p75_ms"  # normalised as Explore keeps it
        assert board.as_json()["created_at"].endswith("Z") and board.as_json()["id"] == board.id
        assert [b.id for b in list_dashboards(session, acme)] == [board.id] and list_dashboards(
            session, other
        ) == []
        with pytest.raises(NotFound):
            get_dashboard(session, other, board.id)
        with pytest.raises(NotFound):
            replace_dashboard(session, other, board.id, BODY)
        replaced = replace_dashboard(session, acme, board.id, {**BODY, "name": "Vitals", "widgets": []})
        assert (replaced.name, replaced.widgets) == ("Vitals", [])
        # The export (as_body) is what create takes back: a round trip keeps everything.
        again = create_dashboard(session, acme, board.as_body())
        assert again.as_body() == board.as_body()
        with pytest.raises(NotFound):
            delete_dashboard(session, other, board.id)
        delete_dashboard(session, acme, board.id)
        with pytest.raises(NotFound):
            get_dashboard(session, acme, board.id)


def test_saved_queries_and_projects_of_another_organization_are_refused(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session:
        theirs = create_saved(session, int(other["org_id"]), {"name": "x", "query": LCP})
        ours = create_saved(session, int(acme["org_id"]), {"name": "y", "query": LCP})
        widget = {"kind": "table", "saved_query_id": theirs.id}
        with pytest.raises(BadQuery, match=rf"widgets\[0\]\.saved_query_id: no saved query {theirs.id}"):
            create_dashboard(session, int(acme["org_id"]), {"name": "a", "widgets": [widget]})
        with pytest.raises(BadQuery, match=r"filters\.project: no project"):
            create_dashboard(
                session, int(acme["org_id"]), {"name": "a", "filters": {"project": other["project"]}}
            )
        made = create_dashboard(
            session,
            int(acme["org_id"]),
            {
                "name": "a",
                "filters": {"project": acme["project"]},
                "widgets": [{**widget, "saved_query_id": ours.id}],
            },
        )
        assert made.widgets[0]["saved_query_id"] == ours.id and made.widgets[0]["title"] == "Widget 1"
        assert made.widgets[0]["layout"] == {"x": 0, "y": 0, "w": 6, "h": 2}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ({**BODY, "owner": 1}, "owner"),
        ({**BODY, "name": " "}, "name"),
        ({**BODY, "filters": {"range": "1y"}}, "filters.range"),
        ({**BODY, "filters": {"browser": "x"}}, "filters.browser"),
        ({**BODY, "widgets": {}}, "widgets"),
        ({**BODY, "widgets": [{"kind": "pie", "view": "performance.lcp"}]}, "widgets[0].kind"),
        ({**BODY, "widgets": [{"kind": "line"}]}, "widgets[0]"),
        ({**BODY, "widgets": [{"kind": "line", "view": "x", "query": LCP}]}, "widgets[0]"),
        ({**BODY, "widgets": [{"kind": "line", "view": "nope"}]}, "widgets[0].view"),
        (
            {**BODY, "widgets": [{"kind": "line", "query": {**LCP, "dataset": "x"}}]},
            "widgets[0].query.dataset",
        ),
        (
            {**BODY, "widgets": [{"kind": "line", "view": "performance.lcp", "layout": {"w": 13}}]},
            "widgets[0].layout.w",
        ),
        (
            {**BODY, "widgets": [{"kind": "line", "view": "performance.lcp", "layout": {"x": 8, "w": 6}}]},
            "widgets[0].layout.x",
        ),
        (
            {**BODY, "widgets": [{"kind": "line", "view": "performance.lcp", "layout": {"h": 0}}]},
            "widgets[0].layout.h",
        ),
        (
            {**BODY, "widgets": [{"kind": "line", "view": "performance.lcp", "colour": "red"}]},
            "widgets[0].colour",
        ),
        ({**BODY, "widgets": [{"kind": "line", "saved_query_id": "1"}]}, "widgets[0].saved_query_id"),
        ({**BODY, "widgets": [{"kind": "number", "view": "performance.lcp"}] * (MAX_WIDGETS + 1)}, "widgets"),
    ],
)
def test_each_bad_field_is_named(settings: Settings, make_org, body: object, field: str) -> None:
    org = int(make_org()["org_id"])
    with session_scope(settings) as session, pytest.raises(BadQuery) as refused:
        create_dashboard(session, org, body)
    assert refused.value.field == field


def test_flow_lays_the_widgets_out_in_rows_of_twelve() -> None:
    widgets = [
        {"title": str(i), "layout": {"x": 0, "y": 0, "w": w, "h": h}}
        for i, (w, h) in enumerate([(6, 2), (4, 1), (4, 3), (12, 1)])
    ]
    placed = [w["layout"] for w in flow(widgets)]
    assert placed == [
        {"x": 0, "y": 0, "w": 6, "h": 2},
        {"x": 6, "y": 0, "w": 4, "h": 1},
        {"x": 0, "y": 2, "w": 4, "h": 3},  # 6 + 4 + 4 > 12: a new row below the tallest of the row before
        {"x": 0, "y": 5, "w": 12, "h": 1},
    ]
