"""Parsing an Explore query (stacklens/explore/query_parser.py): a bad query names its field, however the
body is bad."""

from __future__ import annotations

import pytest

from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"dataset": "users"}, "dataset"),
        (
            {"dataset": "errors", "filters": [{"field": "x'; DROP TABLE events --", "op": "=", "value": 1}]},
            "filters[0].field",
        ),
        (
            {"dataset": "errors", "filters": [{"field": "release", "op": "LIKE", "value": "a"}]},
            "filters[0].op",
        ),
        (
            {"dataset": "errors", "filters": [{"field": "handled", "op": "=", "value": "1 OR 1=1"}]},
            "filters[0].value",
        ),
        ({"dataset": "errors", "group_by": ["release", "release"]}, "group_by[1]"),
        ({"dataset": "errors", "group_by": ["a", "b", "c", "d"]}, "group_by"),
        ({"dataset": "errors", "aggregates": [{"fn": "median", "metric": "x"}]}, "aggregates[0].fn"),
        (
            {"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "sleep(10)"}]},
            "aggregates[0].metric",
        ),
        ({"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "api_ms"}]}, "aggregates[0].metric"),
        ({"dataset": "pageloads", "interval": "1y"}, "interval"),
        ({"dataset": "pageloads", "order_by": "1; DROP"}, "order_by"),
        ({"dataset": "pageloads", "limit": 10**9}, "limit"),
        ({"dataset": "pageloads", "range": "forever"}, "range"),
        ({"dataset": "pageloads", "since": "yesterday"}, "since"),
        ({"dataset": "pageloads", "since": "9999-01-01T00:00:00Z", "until": "9999-02-01T00:00:00Z"}, "since"),
        ({"dataset": "pageloads", "sql": "SELECT 1"}, "sql"),
        ({"dataset": "pageloads", "group_by": ["tag:a'b"]}, "group_by[0]"),
    ],
)
def test_bad_queries_name_the_field(body, named) -> None:
    with pytest.raises(BadQuery if named not in ("range", "since") else Exception) as caught:
        parse_query(body)
    assert str(caught.value).startswith(f"{named}:")
