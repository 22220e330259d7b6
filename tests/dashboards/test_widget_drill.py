"""Drill-down links (issue 70 point 4): a slice of one page of page loads opens its vitals, one issue's events
the issue, anything else Explore — each carrying the question's window, filters (variables applied) and the
point's group and bucket."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from dashboards.widget_drill import slice_link

BODY = {
    "dataset": "pageloads",
    "project": "shop",
    "since": "2026-11-01T00:00:00Z",
    "until": "2026-11-08T00:00:00Z",
    "filters": [{"field": "environment", "op": "=", "value": "production"}],
    "group_by": ["page"],
    "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
    "interval": "",
}


def test_a_page_opens_its_vitals_an_issue_opens_the_issue_and_the_rest_explore() -> None:
    vitals = urlparse(slice_link("acme", BODY, {"page": "/cart"}, None))
    assert vitals.path == "/orgs/acme/projects/shop/performance/pages/detail"
    assert parse_qs(vitals.query) == {
        "page": ["/cart"],
        "since": ["2026-11-01T00:00:00Z"],
        "until": ["2026-11-08T00:00:00Z"],
        "environment": ["production"],
    }
    errors = {**BODY, "dataset": "errors", "group_by": ["issue_id"], "aggregates": [{"fn": "count"}]}
    assert slice_link("acme", errors, {"issue_id": 42}, None) == "/orgs/acme/projects/shop/issues/42"
    bucket = ("2026-11-03T00:00:00Z", "2026-11-04T00:00:00Z")
    explore = urlparse(slice_link("acme", {**BODY, "group_by": ["browser"]}, {"browser": "Firefox"}, bucket))
    query = parse_qs(explore.query)
    assert explore.path == "/orgs/acme/explore"
    assert query["f"] == ["environment|=|production", "browser|=|Firefox"]
    assert (query["since"], query["until"]) == (["2026-11-03T00:00:00Z"], ["2026-11-04T00:00:00Z"])
    # Without a project the pages are not reachable by slug: Explore, with the page as a filter.
    anywhere = parse_qs(urlparse(slice_link("acme", {**BODY, "project": ""}, {"page": "/"}, None)).query)
    assert "page|=|/" in anywhere["f"]
