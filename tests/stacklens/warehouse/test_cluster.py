"""Every migration rendered for a 2-shard × 2-replica cluster, checked by ClickHouse's own parser (the
embedded engine's ``formatQuerySingleLine`` parses and re-prints a statement without running it), and the
single-server DDL proven unchanged byte for byte.

The ``{shard}``/``{replica}``/``{database}``/``{table}`` macros sit inside string literals, so the parser
takes them as they are; the test still substitutes each of the four hosts' values to check what each replica
would register in Keeper.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.cluster import REPLICATION_PATH, ClusterLayout, render, shard_key
from stacklens.warehouse.migrations import (
    LOG_RETENTION_PLACEHOLDER,
    RETENTION_PLACEHOLDER,
    SCHEMA_MIGRATIONS_DDL,
    MigrationFile,
    cluster_layout,
    discover,
)

GOLDEN = Path(__file__).parent / "single_server_ddl.json"
CLUSTER = "stacklens_2x2"
HOSTS = [{"shard": shard, "replica": f"{shard}-r{replica}"} for shard in ("s1", "s2") for replica in (1, 2)]
MERGE_TREE = re.compile(r"\bENGINE\s*=\s*(\w*MergeTree)\b", re.IGNORECASE)


def _format(settings: Settings, statement: str) -> str:
    return (
        get_warehouse(settings)
        .query("SELECT formatQuerySingleLine({q:String})", parameters={"q": statement})
        .result_rows[0][0]
    )


def _layout(settings: Settings) -> ClusterLayout:
    layout = cluster_layout(settings.model_copy(update={"warehouse_cluster": CLUSTER}))
    assert layout is not None
    return layout


def _on_host(statement: str, host: dict[str, str]) -> str:
    return statement.replace("{shard}", host["shard"]).replace("{replica}", host["replica"])


def test_every_statement_parses_for_a_two_by_two_cluster(settings: Settings) -> None:
    ensure_database(settings)
    layout = _layout(settings)
    files = discover()
    checked = 0
    for migration in files:
        for statement in migration.statements(30, layout):
            for host in HOSTS:
                formatted = _format(settings, _on_host(statement, host))
                assert formatted, (migration.name, statement[:200])
            if re.match(r"^(?:\s*--[^\n]*\n)*\s*(CREATE|ALTER|DROP)\b", statement, re.IGNORECASE):
                assert formatted.count(f" ON CLUSTER {CLUSTER}") == 1, (migration.name, formatted[:300])
            checked += 1
    assert checked > sum(len(m.split(30)) for m in files), "data tables render to two statements each"


def test_data_tables_are_replicated_behind_distributed_tables(settings: Settings) -> None:
    ensure_database(settings)
    layout = _layout(settings)
    for migration in [*discover()]:
        for original in migration.split(30):
            rendered = render(original, layout)
            engine = MERGE_TREE.search(original)
            if (
                not re.search(r"^\s*CREATE\s+TABLE", _code(original), re.IGNORECASE | re.MULTILINE)
                or not engine
            ):
                continue
            local, distributed = (_format(settings, s) for s in rendered)
            name = re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", original).group(1)
            kind = engine.group(1)
            assert f"CREATE TABLE IF NOT EXISTS {name}_local ON CLUSTER {CLUSTER}" in local
            assert f"ENGINE = Replicated{kind}('{REPLICATION_PATH}', '{{replica}}'" in local, migration.name
            assert distributed.startswith(f"CREATE TABLE IF NOT EXISTS {name} ON CLUSTER {CLUSTER} AS ")
            assert f"ENGINE = Distributed('{CLUSTER}', '{settings.warehouse_database}', '{name}_local', " in (
                distributed
            )
            # Replicas of one shard share a Keeper path; the two shards do not.
            paths = {h["replica"]: _on_host(REPLICATION_PATH, h) for h in HOSTS}
            assert paths["s1-r1"] == paths["s1-r2"] != paths["s2-r1"] == paths["s2-r2"]


def _code(statement: str) -> str:
    return "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))


def test_engine_parameters_are_kept_after_the_replication_arguments(settings: Settings) -> None:
    layout = _layout(settings)
    by_name = {m.name: m for m in discover()}
    events = by_name["0001_create_events"].statements(30, layout)
    replicated = "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', "
    assert f"ENGINE = {replicated}received_at)" in events[0]
    assert events[1].endswith("cityHash64(project_id, fingerprint))")
    related = by_name["0122_recreate_related_issues"].statements(30, layout)
    assert any("'{replica}', materialized_at, is_deleted)" in s for s in related)
    assert "DROP TABLE IF EXISTS related_issues_local ON CLUSTER 'stacklens_2x2' SYNC" in related
    history = by_name["0101_create_issue_history"].statements(30, layout)[0]
    assert (
        "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')"
        in history
    )


def test_views_read_and_write_the_local_tables(settings: Settings) -> None:
    layout = _layout(settings)
    views = [s for m in discover() for s in m.statements(30, layout) if "MATERIALIZED VIEW" in _code(s)]
    creates = [s for s in views if re.search(r"CREATE\s+MATERIALIZED", s)]
    assert len(creates) >= 10
    for view in creates:
        target = re.search(r"\bTO (\w+)", view).group(1)
        source = re.search(r"\bFROM (\w+)", view.split(" AS\n", 1)[1]).group(1)
        assert target.endswith("_local") and source.endswith("_local"), view[:300]


def test_alters_and_backfills_by_role(settings: Settings) -> None:
    layout = _layout(settings)
    projection = "ALTER TABLE issue_facets_daily ADD PROJECTION IF NOT EXISTS p (SELECT * ORDER BY issue_id)"
    assert render(projection, layout) == [
        "ALTER TABLE issue_facets_daily_local ON CLUSTER 'stacklens_2x2' ADD PROJECTION IF NOT EXISTS p "
        "(SELECT * ORDER BY issue_id)"
    ]
    column = "ALTER TABLE events ADD COLUMN IF NOT EXISTS x UInt8 DEFAULT 0 AFTER tags"
    assert [s.split(" ADD")[0] for s in render(column, layout)] == [
        "ALTER TABLE events_local ON CLUSTER 'stacklens_2x2'",
        "ALTER TABLE events ON CLUSTER 'stacklens_2x2'",
    ]
    backfill = "INSERT INTO issue_rollup SELECT * FROM events"
    assert render(backfill, layout) == [backfill]  # through the Distributed tables, on every shard
    assert render("TRUNCATE TABLE spans", layout) == ["TRUNCATE TABLE spans_local ON CLUSTER 'stacklens_2x2'"]
    # A statement mixing column commands with others: all to the data table, the column commands alone to the
    # Distributed one (which has no TTL or indexes).
    mixed = (
        "ALTER TABLE events ADD COLUMN y UInt8 DEFAULT 0, ADD INDEX y_idx (y, tags['a,b']) TYPE minmax,\n"
        "    -- a comment, with a comma\n"
        "    COMMENT COLUMN y 'why, indeed', MODIFY TTL toDateTime(timestamp) + INTERVAL 1 DAY"
    )
    local, distributed = render(mixed, layout)
    assert (
        local.startswith("ALTER TABLE events_local ON CLUSTER 'stacklens_2x2' ADD COLUMN y")
        and "TTL" in local
    )
    assert distributed == (
        "ALTER TABLE events ON CLUSTER 'stacklens_2x2' ADD COLUMN y UInt8 DEFAULT 0, COMMENT COLUMN y 'why, indeed'"
    )
    ensure_database(settings)
    assert all(_format(settings, s) for s in (local, distributed))


def test_a_file_may_choose_its_sharding_key(tmp_path) -> None:
    text = (
        "-- cluster-shard-key: cityHash64(trace_id)\n"
        "CREATE TABLE IF NOT EXISTS traces\n(\n    project_id  UInt64,\n    trace_id    String\n)\n"
        "ENGINE = MergeTree\nORDER BY (project_id, trace_id);\n"
    )
    migration = MigrationFile("0999_create_traces", tmp_path / "0999_create_traces.sql", text)
    assert shard_key(migration.split(30)[0]) == "cityHash64(trace_id)"
    layout = ClusterLayout("c", "db", frozenset({"traces"}))
    assert migration.statements(30, layout)[1].endswith("'traces_local', cityHash64(trace_id))")
    # Dates and times never pick the shard: a day's rows would all land on one shard.
    assert shard_key(
        "CREATE TABLE t\n(\n    day  Date,\n    page  String\n)\nENGINE = MergeTree\nORDER BY (day, page)"
    ) == ("cityHash64(page)")


def test_schema_migrations_is_replicated_too(settings: Settings) -> None:
    rendered = render(SCHEMA_MIGRATIONS_DDL.strip(), _layout(settings))
    assert "schema_migrations_local" in rendered[0] and "ReplicatedReplacingMergeTree" in rendered[0]
    assert "cityHash64(name)" in rendered[1]


def test_single_server_ddl_is_the_file_text_byte_for_byte() -> None:
    """Without a cluster the runner sends exactly the files' statements: each one is a verbatim slice of
    the file (retentions filled in), and together, in order, they are all of its SQL."""
    for migration in discover():
        # The logs' own retention defaults to the events' (both 30 here).
        body = migration.text.replace(LOG_RETENTION_PLACEHOLDER, "30").replace(RETENTION_PLACEHOLDER, "30")
        sent = migration.statements(30)
        assert sent == migration.statements(30, None)
        position = 0
        for statement in sent:
            found = body.find(statement, position)
            assert found >= 0, (migration.name, statement[:120])
            between = body[position:found]
            # Between two statements: only the `;`, blank lines and comments.
            assert not re.sub(r"--[^\n]*", "", between).replace(";", "").strip(), (migration.name, between)
            position = found + len(statement)
        assert not _code(body[position:]).replace(";", "").strip(), migration.name
        assert "ON CLUSTER" not in "".join(sent)


def test_single_server_ddl_matches_what_the_runner_sent_before_cluster_rendering() -> None:
    """Digests of every file's statements as the runner rendered them before the cluster layout existed
    (``single_server_ddl.json``); files added later are covered by the test above."""
    golden = json.loads(GOLDEN.read_text())
    files = {m.name: m for m in discover()}
    assert set(golden) <= set(files)
    for name, digest in golden.items():
        sent = "\0".join(files[name].statements(30))
        assert hashlib.sha256(sent.encode()).hexdigest() == digest, name


def test_runtime_deletes_reach_the_data_tables(settings: Settings) -> None:
    """The pipelines' lightweight deletes: as written on one server; on a cluster against every node's data
    table (a Distributed table holds no rows), and still valid SQL."""
    from pipelines.resources import ClickHouseResource
    from stacklens.warehouse.cluster import in_place
    from stacklens.warehouse.queries import load_query

    deleted_budgets = load_query("pipelines/budget_status_stale_delete")
    assert in_place(deleted_budgets, None) == deleted_budgets
    clustered = in_place(deleted_budgets, CLUSTER)
    assert clustered.startswith("DELETE FROM budget_status_local ON CLUSTER 'stacklens_2x2' WHERE NOT has(")
    ensure_database(settings)
    assert _format(settings, clustered).startswith(
        "DELETE FROM budget_status_local ON CLUSTER stacklens_2x2 WHERE"
    )
    bound = ClickHouseResource(url="chdb:///x", database="d", cluster=CLUSTER)
    assert bound.in_place("TRUNCATE TABLE spans") == f"TRUNCATE TABLE spans_local ON CLUSTER '{CLUSTER}'"
    assert (
        ClickHouseResource(url="chdb:///x", database="d").in_place("TRUNCATE TABLE spans")
        == "TRUNCATE TABLE spans"
    )
