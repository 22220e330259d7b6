"""Explore's SQL: the dataset rows' named queries hold a column for every field and metric the catalog of
datasets names, a statement is the named templates filled with fixed fragments (no user text, every value a
parameter), a query reads only the columns it names, and the web vitals' columns hold the values of page
loads stored before they existed."""

from __future__ import annotations

import random
import re
import uuid
from datetime import timedelta

import polars as pl
import pytest

from stacklens.explore.datasets import DATASETS
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.explore.sql import Limits, series_statement, table_statement
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

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
    assert set(dataset.histograms) <= set(dataset.metrics)
    buckets = [f"h_{m}" for m in dataset.histograms]  # the value as the views' 1 % histograms keep it
    wanted = {
        "ts",
        "uid",
        "tags",
        *(f"f_{f}" for f in dataset.fields),
        *values,
        *buckets,
        *dataset.extra_columns,
    }
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
    """The dataset's rows name every column; the engine's plan keeps those the query uses (a count of page
    loads by release never reads the measurements map, a count of API calls by source never reads the
    span's description its path is folded from)."""
    client = migrated(settings)
    seed(client, 1, 11, loads=30)

    def plan(body: dict) -> str:
        statement = table_statement(parse_query({**body, **WINDOW}), 1, [11], Limits(), 100)
        sql = statement.sql.split("\nSETTINGS")[0]
        rows = client.query(f"EXPLAIN actions = 1 {sql}", parameters=statement.parameters).result_rows
        return "\n".join(row[0] for row in rows)

    assert "measurements" not in plan({"dataset": "pageloads", "group_by": ["release"]})
    # A web vital is a column of its own (migration 0013), and so is its 1 % bucket's value (0015): its
    # percentile and the count of its values read the bucket's column alone, never the map nor another vital;
    # its maximum reads the value itself.
    lcp = plan(
        {"dataset": "pageloads", "group_by": ["release"], "aggregates": [{"fn": "p75", "metric": "lcp"}]}
    )
    assert "lcp_bucket" in lcp and "measurements" not in lcp and "vital_" not in lcp and "fcp_" not in lcp
    most = plan(
        {"dataset": "pageloads", "group_by": ["release"], "aggregates": [{"fn": "max", "metric": "lcp"}]}
    )
    assert "max(vital_lcp)" in most and "measurements" not in most and "vital_fcp" not in most
    # The client calls' folded path reads the spans' description; a count by source reads none of it.
    assert "Output: description" not in plan({"dataset": "api_calls", "group_by": ["source"]})
    assert "Output: description" in plan({"dataset": "api_calls", "group_by": ["path"]})


# The page loads' vitals: the measurements map's key, Explore's metric and the table's column (migration
# 0013).
VITALS = {
    "ttfb": ("ttfb_ms", "vital_ttfb"),
    "fcp": ("fcp_ms", "vital_fcp"),
    "lcp": ("lcp_ms", "vital_lcp"),
    "inp": ("inp_ms", "vital_inp"),
    "cls": ("cls", "vital_cls"),
    "dom_ready": ("dom_ready_ms", "vital_dom_ready"),
}


def test_vitals_of_page_loads_stored_before_their_columns_are_written_to_disk_unchanged(
    settings: Settings,
) -> None:
    """Page loads stored under the raw layer of before 0013 (two parts), then migrated: every part holds the
    vitals' columns on disk (materialized, not computed from the map on each read), and Explore's count,
    p50, p75, p95 and max of each vital equal polars over the stored maps (the percentiles within the
    catalog's error: they are the views' 1 % histogram figures) — a missing key stays missing, a 0 stays 0."""
    apply_migrations(settings, up_to=12)
    client = get_warehouse(settings)
    rng = random.Random(13)
    columns = [
        "org_id",
        "project_id",
        "event_id",
        "timestamp",
        "received_at",
        "op",
        "release",
        "measurements",
    ]
    stored = []
    for batch in range(2):
        rows = []
        for i in range(200):
            measurements = {
                key: (
                    0.0
                    if i % 17 == 0
                    else round(rng.uniform(0, 0.5) if key == "cls" else rng.uniform(1, 6000), 3)
                )
                for key in VITALS
                if rng.random() < 0.7
            }
            release = f"shop@1.{batch}"
            ts = NOW - timedelta(hours=i)
            rows.append([1, 11, uuid.uuid4(), ts, NOW, "pageload", release, measurements])
            stored.append({"release": release, **{key: measurements.get(key) for key in VITALS}})
        client.insert("transactions", rows, column_names=columns)
    apply_migrations(settings)

    parts = client.query(
        "SELECT name, groupArray(column) FROM system.parts_columns WHERE database = {db:String}"
        " AND table = 'transactions' AND active GROUP BY name",
        parameters={"db": settings.warehouse_database},
    ).result_rows
    assert len(parts) == 2
    buckets = {f"{key}_bucket" for key in VITALS}  # the values as the histograms keep them (migration 0015)
    assert all({column for _, column in VITALS.values()} | buckets <= set(names) for _, names in parts)

    frame = pl.DataFrame(stored, schema={"release": pl.String, **{key: pl.Float64 for key in VITALS}})
    window = {
        "since": (NOW - timedelta(days=10)).isoformat(),
        "until": (NOW + timedelta(hours=1)).isoformat(),
    }
    for key, (metric, _) in VITALS.items():
        query = parse_query(
            {
                "dataset": "pageloads",
                **window,
                "group_by": ["release"],
                "aggregates": [{"fn": "count", "metric": metric}]
                + [{"fn": fn, "metric": metric} for fn in ("p50", "p75", "p95", "max")],
                "order_by": "release",
            }
        )
        result = run_explore(client, query, 1, [11])
        expected = (
            frame.group_by("release")
            .agg(
                pl.col(key).count().alias("n"),
                *(
                    pl.col(key).quantile(q, interpolation="linear").alias(f"p{int(q * 100)}")
                    for q in (0.5, 0.75, 0.95)
                ),
                pl.col(key).max().alias("max"),
            )
            .sort("release")
        )
        assert len(result.rows) == 2
        for row, want in zip(result.rows, expected.iter_rows(named=True), strict=True):
            values = list(row.values())
            assert row["release"] == want["release"] and values[1] == want["n"], metric
            # Percentiles of the 1 % log-histogram values (the views' figures), within the catalog's error of
            # the exact ones; the maximum is the raw value.
            assert values[2:5] == pytest.approx(
                [want["p50"], want["p75"], want["p95"]], rel=QUANTILE_RELATIVE_ERROR
            )
            assert values[5] == want["max"]
