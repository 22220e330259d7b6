"""Compare against the real embedded engine: each row's ``<column>_previous`` is what the query answers for
the compared window alone (the previous period, or a chosen window), its ``<column>_change_pct`` the change
between the two answers; a group missing before has no previous value and no change; bad compare bodies are
named."""

from __future__ import annotations

from datetime import timedelta

import pytest

from stacklens.explore.compare import change_pct, compared_columns, run_compared
from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

QUESTION = {
    "dataset": "pageloads",
    "group_by": ["browser"],
    "aggregates": [
        {"fn": "count"},
        {"fn": "p75", "metric": "lcp_ms"},
        {"fn": "avg", "metric": "load_time_ms"},
    ],
    "interval": "1d",
}
SINCE, UNTIL = NOW - timedelta(days=6), NOW


def _iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z")


@pytest.fixture
def client(settings: Settings):
    warehouse = migrated(settings)
    seed(warehouse, 1, 11, loads=200, facts=False)
    seed(warehouse, 2, 22, loads=50, seed=3)  # another organization
    return warehouse


@pytest.mark.parametrize(
    "compare",
    [
        {"previous_period": True},
        {"since": _iso(NOW - timedelta(days=13, hours=3)), "until": _iso(NOW - timedelta(days=9))},
    ],
)
def test_each_previous_value_is_the_other_windows_own_answer(client, compare) -> None:
    query = parse_query({**QUESTION, "since": _iso(SINCE), "until": _iso(UNTIL), "compare": compare})
    assert query.compare is not None
    result, previous = run_compared(client, query, 1, [11])
    assert previous is not None and result.columns == compared_columns(query)
    assert result.columns[:4] == ["browser", "count", "count_previous", "count_change_pct"]
    alone_now = run_explore(
        client, parse_query({**QUESTION, "since": _iso(SINCE), "until": _iso(UNTIL)}), 1, [11]
    )
    window = {"since": _iso(query.compare.since), "until": _iso(query.compare.until)}
    alone_before = run_explore(client, parse_query({**QUESTION, **window}), 1, [11])
    if compare.get("previous_period"):
        assert (query.compare.since, query.compare.until) == (SINCE - timedelta(days=6), SINCE)
    now_rows = {r["browser"]: r for r in alone_now.rows}
    before_rows = {r["browser"]: r for r in alone_before.rows}
    assert {r["browser"] for r in result.rows} == set(now_rows) and before_rows
    for row in result.rows:
        before = before_rows.get(row["browser"], {})
        for column in ("count", "lcp_p75_ms", "load_avg_ms"):
            assert row[column] == now_rows[row["browser"]][column]
            assert row[f"{column}_previous"] == before.get(column)
            expected = change_pct(row[column], before.get(column))
            assert row[f"{column}_change_pct"] == expected
            if before.get(column):
                assert expected == pytest.approx(
                    (row[column] - before[column]) / before[column] * 100, abs=0.01
                )
    # The compared window's series (the chart's overlay) add up to its own table.
    assert sum(sum(s["values"]["count"]) for s in previous.series) == sum(
        r["count"] for r in alone_before.rows
    )


def test_the_body_keeps_compare_and_bad_ones_are_named() -> None:
    body = parse_query({**QUESTION, "range": "7d", "compare": {"previous_period": True}}).as_body()
    assert body["compare"] == {"previous_period": True}
    cases = [
        ("yes", "compare"),
        ({"previous": True}, "compare.previous"),
        ({"previous_period": "yes"}, "compare.previous_period"),
        ({"previous_period": True, "since": "2026-01-01"}, "compare"),
        ({"since": "2026-01-01T00:00:00Z"}, "compare"),
        ({"since": "yesterday", "until": "2026-01-01T00:00:00Z"}, "compare.since"),
        ({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "compare.until"),
    ]
    for compare, field in cases:
        with pytest.raises(BadQuery) as refused:
            parse_query({**QUESTION, "compare": compare})
        assert refused.value.field == field, compare
    with pytest.raises(BadQuery, match="compare: a download holds one window"):
        parse_query({**QUESTION, "compare": {"previous_period": True}}, download=True)


def _release(version: str) -> list[dict[str, str]]:
    return [{"field": "release", "op": "=", "value": version}]


def test_release_against_the_one_before_it_is_each_releases_own_answer(client) -> None:
    window = {"since": _iso(NOW - timedelta(days=14)), "until": _iso(UNTIL)}
    query = parse_query(
        {**QUESTION, **window, "filters": _release("shop@1.1.0"), "compare": {"previous_release": True}}
    )
    assert query.compare is not None and query.compare.previous_release
    assert query.as_body()["compare"] == {"previous_release": True}
    result, previous = run_compared(client, query, 1, [11])
    # shop@1.0.0 was first seen before shop@1.1.0 (the seed's first half of its days): its predecessor.
    assert previous is not None and result.as_json()["meta"]["compared_release"] == "shop@1.0.0"
    assert result.columns == compared_columns(query)
    own = {
        version: {
            r["browser"]: r
            for r in run_explore(
                client, parse_query({**QUESTION, **window, "filters": _release(version)}), 1, [11]
            ).rows
        }
        for version in ("shop@1.1.0", "shop@1.0.0")
    }
    assert own["shop@1.0.0"] and own["shop@1.1.0"]
    for row in result.rows:
        before = own["shop@1.0.0"].get(row["browser"], {})
        for column in ("count", "lcp_p75_ms", "load_avg_ms"):
            assert row[column] == own["shop@1.1.0"][row["browser"]][column]
            assert row[f"{column}_previous"] == before.get(column)
            assert row[f"{column}_change_pct"] == change_pct(row[column], before.get(column))
    # The seed's 1.1.0 is slower (×1.6): the change says so.
    assert any((row["load_avg_ms_change_pct"] or 0) > 20 for row in result.rows), result.rows
    # The series overlay is the predecessor's own.
    assert sum(sum(s["values"]["count"]) for s in previous.series) == sum(
        r["count"] for r in own["shop@1.0.0"].values()
    )
    # The first release has nothing before it: no previous value, no change, and the answer says so.
    first = parse_query(
        {**QUESTION, **window, "filters": _release("shop@1.0.0"), "compare": {"previous_release": True}}
    )
    result, previous = run_compared(client, first, 1, [11])
    assert previous is None and result.as_json()["meta"]["compared_release"] is None and result.rows
    assert all(r["count_previous"] is None and r["count_change_pct"] is None for r in result.rows)


def test_release_compare_needs_one_release_filter() -> None:
    for filters, field in (
        ([], "compare.previous_release"),
        ([{"field": "release", "op": "in", "value": ["a", "b"]}], "compare.previous_release"),
    ):
        with pytest.raises(BadQuery) as refused:
            parse_query({**QUESTION, "filters": filters, "compare": {"previous_release": True}})
        assert refused.value.field == field
    with pytest.raises(BadQuery) as refused:
        parse_query({**QUESTION, "filters": _release("x"), "compare": {"previous_release": "yes"}})
    assert refused.value.field == "compare.previous_release"
    with pytest.raises(BadQuery) as refused:
        parse_query(
            {**QUESTION, "filters": _release("x"), "compare": {"previous_release": True, "since": "x"}}
        )
    assert refused.value.field == "compare"
