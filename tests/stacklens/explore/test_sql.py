"""Explore's SQL: the dataset rows' named queries hold a column for every field and metric the catalog of datasets
names, a statement is the named templates filled with fixed fragments (no user text, every value a parameter),
and a query reads only the columns it names."""

from __future__ import annotations

import re

import pytest

from stacklens.explore.datasets import DATASETS
from stacklens.explore.query import parse_query
from stacklens.explore.sql import Limits, series_statement, table_statement
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import migrated, seed

WINDOW = {"since": "2026-11-05T00:00:00Z", "until": "2026-11-20T13:00:00Z"}
SCOPE = {"org_id": 1, "project_ids": [11], "since": "2026-11-05 00:00:00", "until": "2026-11-20 13:00:00"}
HOSTILE = "x'); DROP TABLE events; --"


@pytest.mark.parametrize("key", list(DATASETS))
def test_each_dataset_query_has_every_column_it_promises(settings: Settings, key: str) -> None:
    from stacklens.warehouse.queries import load_query

    client = migrated(settings)
    dataset = DATASETS[key]
    described = client.query(f"DESCRIBE ({load_query(dataset.rows_query)})", parameters=SCOPE)
    names = {row[0] for row in described.result_rows}
    values = [f"m_{m}" for m in dataset.metrics if m not in dataset.measures]
    wanted = {"ts", "uid", "tags", *(f"f_{f}" for f in dataset.fields), *values, *dataset.extra_columns}
    assert names == wanted


def test_statements_carry_no_user_text_and_fill_every_placeholder() -> None:
    query = parse_query(
        {
            "dataset": "errors",
            **WINDOW,
            "filters": [
                {"field": "release", "op": "in", "value": [HOSTILE]},
                {"field": "tag:region", "op": "contains", "value": HOSTILE},
            ],
            "group_by": ["tag:a.b-c", "environment"],
            "aggregates": [{"fn": "count"}, {"fn": "rate_per_1k"}, {"fn": "unique_users"}],
            "interval": "1h",
        }
    )
    for statement in (
        table_statement(query, 1, [11], Limits(), 101, total=True),
        series_statement(query, 1, [11], Limits()),
    ):
        assert HOSTILE not in statement.sql and "a.b-c" not in statement.sql and "region" not in statement.sql
        assert HOSTILE in statement.parameters.values() or [HOSTILE] in statement.parameters.values()
        # Left: only the engine's typed parameters, never an unfilled template part.
        assert not re.search(
            r"\{[a-z_]+\}",
            statement.sql.replace("'{id}'", "").replace("'{uuid}'", "").replace("'{hash}'", ""),
        )
        assert "readonly = 1" in statement.sql and "max_execution_time = 20" in statement.sql


def test_a_query_reads_only_the_columns_it_names(settings: Settings) -> None:
    """The dataset's rows name every column; the engine's plan keeps those the query uses (a count of page loads
    by release never reads the measurements map, a count of API calls by source never reads the span's description
    its path is folded from)."""
    client = migrated(settings)
    seed(client, 1, 11, loads=30)

    def plan(body: dict) -> str:
        statement = table_statement(parse_query({**body, **WINDOW}), 1, [11], Limits(), 100)
        sql = statement.sql.split("\nSETTINGS")[0]
        rows = client.query(f"EXPLAIN actions = 1 {sql}", parameters=statement.parameters).result_rows
        return "\n".join(row[0] for row in rows)

    assert "measurements" not in plan({"dataset": "pageloads", "group_by": ["release"]})
    assert "measurements" in plan(
        {"dataset": "pageloads", "group_by": ["release"], "aggregates": [{"fn": "p75", "metric": "lcp"}]}
    )
    # The client calls' folded path reads the spans' description; a count by source reads none of it.
    assert "Output: description" not in plan({"dataset": "api_calls", "group_by": ["source"]})
    assert "Output: description" in plan({"dataset": "api_calls", "group_by": ["path"]})
