"""The trace search's filters: bad values refused naming the field, good ones kept and echoed as the query
string a link keeps, and the parameters the search query gets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stacklens.traces.search import TraceFilters
from stacklens.view_filters import BadFilter

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"min_duration": "soon"}, "min_duration"),
        ({"max_duration": "-1"}, "max_duration"),
        ({"min_duration": "50", "max_duration": "10"}, "max_duration"),
        ({"min_duration": "nan"}, "min_duration"),
        ({"status": "bad status!"}, "status"),
        ({"service": "x" * 300}, "service"),
        ({"operation": "a\nb"}, "operation"),
        ({"range": "3w"}, "range"),
    ],
)
def test_bad_values_name_their_field(values: dict[str, str], field: str) -> None:
    with pytest.raises(BadFilter) as caught:
        TraceFilters.parse(now=NOW, **values)
    assert caught.value.field == field


def test_filters_are_kept_and_echoed() -> None:
    filters = TraceFilters.parse(
        service="worker", operation="db", min_duration="12.5", status="ERROR", release="1.0", now=NOW
    )
    assert filters.params() == {
        "range": "24h",
        "release": "1.0",
        "service": "worker",
        "operation": "db",
        "min_duration": "12.5",
        "status": "error",
    }
    sql = filters.sql(1, 2, "worker")
    assert sql["project_named"] == 1 and sql["min_duration"] == 12.5 and sql["max_duration"] > 1e9
    assert (sql["until"] - sql["since"]).total_seconds() == 86400
    assert TraceFilters.parse(service="shop", now=NOW).sql(1, 2, "web-app")["project_named"] == 0
