"""The named views a widget can show: each is a valid Explore question of the catalog's metrics, answered
with the columns its page shows, and its page exists among the project's pages."""

from __future__ import annotations

from stacklens.explore.query_parser import parse_query
from stacklens.explore.views import VIEWS


def test_every_view_is_an_explore_question_of_its_page() -> None:
    pages = {"performance", "performance/pages", "releases"}
    for key, view in VIEWS.items():
        query = parse_query(view.query)  # raises naming the field if a view drifts from the catalog
        assert key.split(".")[0] in ("performance", "releases") and view.page in pages and view.title
        assert "range" not in view.query and "since" not in view.query  # the dashboard gives the window
        if query.interval:
            assert not query.group_by  # a time view is one line; the dashboard's filters pick the rows
    assert parse_query(VIEWS["releases.health"].query).columns == [
        "release",
        "count",
        "crash_free_sessions_pct",
        "crash_free_users_pct",
        "samples",
    ]
    assert parse_query(VIEWS["performance.lcp"].query).columns == ["lcp_p75_ms", "samples"]
