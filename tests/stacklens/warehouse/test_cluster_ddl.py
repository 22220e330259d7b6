"""Cluster DDL: where ``ON CLUSTER`` goes and which cluster names are refused, checked by ClickHouse's own
parser (``formatQuerySingleLine``); every migration rendered for a cluster is in test_cluster.py."""

from __future__ import annotations

import re

import pytest

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.cluster import ClusterLayout
from stacklens.warehouse.migrations import (
    MigrationError,
    MigrationFile,
    cluster_clause,
    cluster_layout,
    discover,
    with_cluster,
)

DDL = re.compile(r"^(CREATE|ALTER|DROP)\b", re.IGNORECASE)


def _formatted(settings: Settings, statement: str) -> str:
    ensure_database(settings)
    return (
        get_warehouse(settings)
        .query("SELECT formatQuerySingleLine({q:String})", parameters={"q": statement})
        .result_rows[0][0]
    )


def _strip_comments(statement: str) -> str:
    return "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--")).strip()


def test_clause_follows_the_object_name(settings: Settings) -> None:
    events = discover()[0]
    rendered = events.statements(
        30, cluster_layout(settings.model_copy(update={"warehouse_cluster": "main"}))
    )[0]
    assert "CREATE TABLE IF NOT EXISTS events_local ON CLUSTER 'main'\n(" in rendered
    assert events.statements(30)[0] == events.statements(30, None)[0]
    assert "ON CLUSTER" not in events.statements(30)[0]
    cases = {
        "ALTER TABLE events MODIFY TTL toDateTime(timestamp) + INTERVAL 7 DAY": (
            "ALTER TABLE events ON CLUSTER '{cluster}' MODIFY TTL toDateTime(timestamp) + INTERVAL 7 DAY"
        ),
        "CREATE MATERIALIZED VIEW IF NOT EXISTS db.mv TO t AS SELECT 1 AS a": (
            "CREATE MATERIALIZED VIEW IF NOT EXISTS db.mv ON CLUSTER '{cluster}' TO t AS SELECT 1 AS a"
        ),
        "DROP TABLE IF EXISTS `old table`": "DROP TABLE IF EXISTS `old table` ON CLUSTER '{cluster}'",
        "INSERT INTO t SELECT 1": "INSERT INTO t SELECT 1",
        "CREATE TABLE t ON CLUSTER other (a UInt8) ENGINE = Memory": (
            "CREATE TABLE t ON CLUSTER other (a UInt8) ENGINE = Memory"
        ),
    }
    for statement, expected in cases.items():
        assert with_cluster(statement, "{cluster}") == expected
        assert "ON CLUSTER" in _formatted(settings, expected) or expected.startswith("INSERT")


def test_placeholder_places_the_clause_where_the_file_says(tmp_path) -> None:
    text = "CREATE FUNCTION IF NOT EXISTS plus_one ${on_cluster} AS (x) -> x + 1;\n"
    migration = MigrationFile("0999_create_plus_one", tmp_path / "0999_create_plus_one.sql", text)
    layout = ClusterLayout("main", "stacklens", frozenset())
    assert migration.statements(30, layout) == [
        "CREATE FUNCTION IF NOT EXISTS plus_one ON CLUSTER 'main' AS (x) -> x + 1"
    ]
    assert migration.statements(30) == ["CREATE FUNCTION IF NOT EXISTS plus_one  AS (x) -> x + 1"]


def test_bad_cluster_names_are_refused() -> None:
    assert cluster_clause(None) == "" and cluster_clause("main") == " ON CLUSTER 'main'"
    for name in ("main'; DROP TABLE events; --", "a b", ""):
        if name:
            with pytest.raises(MigrationError, match="not a cluster name"):
                cluster_clause(name)
        else:
            assert cluster_clause(name) == ""


def test_runner_refuses_a_bad_cluster_name_before_touching_the_warehouse(settings: Settings) -> None:
    from stacklens.warehouse.migrations import apply_migrations

    ensure_database(settings)
    bad = settings.model_copy(update={"warehouse_cluster": "main'; DROP DATABASE x; --"})
    with pytest.raises(MigrationError, match="not a cluster name"):
        apply_migrations(bad, up_to=99)
    tables = (
        get_warehouse(settings)
        .query(
            "SELECT count() FROM system.tables WHERE database = {db:String}",
            parameters={"db": bad.warehouse_database},
        )
        .result_rows[0][0]
    )
    assert tables == 0, "not even schema_migrations was created"
