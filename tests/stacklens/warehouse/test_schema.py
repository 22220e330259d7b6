"""The migrated raw layer matches what the migration files declare, column by column (``system.columns``)."""

from __future__ import annotations

import re

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations, discover

COLUMN = re.compile(r"^\s{4}([a-z_][a-z0-9_]*)\s+(.+?)(?:\s+CODEC\((.+)\))?,?\s*(?:--.*)?$")
# What follows a column's type in its declaration (not part of the type system.columns reports).
COLUMN_EXTRAS = re.compile(r"\s+(?:DEFAULT|MATERIALIZED|ALIAS|EPHEMERAL|COMMENT|TTL)\b.*$")
RAW_TABLES = ("events", "transactions", "spans", "ingest_batches")
CREATE = re.compile(r"^(?:\s*--[^\n]*\n)*\s*CREATE TABLE IF NOT EXISTS (\w+)\s*\n\(", re.IGNORECASE)
DROP = re.compile(r"^(?:\s*--[^\n]*\n)*\s*DROP TABLE IF EXISTS (\w+)", re.IGNORECASE)
ALTER = re.compile(r"ALTER TABLE (\w+)\s")
# One or more ADD COLUMN clauses of an ALTER TABLE; a type may nest three levels:
# AggregateFunction(argMax, String, Tuple(DateTime64(3, 'UTC'), UUID)). A MATERIALIZED expression may span
# lines; a clause ends with AFTER (on the same line or the next), a CODEC before it, or ends the statement
# (the column goes last).
ADD_COLUMN = re.compile(
    r"ADD COLUMN IF NOT EXISTS (\w+)\s+(\w+(?:\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\))?)"
    r"(?: DEFAULT [^\n]*?|\s+MATERIALIZED\s[\s\S]*?)?(?:\s+CODEC\(([^()]*)\))?(?:\s+AFTER (\w+)|\s*;?\s*\Z)"
)

# A MODIFY COLUMN clause that gives a column a codec or a chain of them (its type unchanged): `MODIFY COLUMN
# target String CODEC(ZSTD(3))`, `MODIFY COLUMN timestamp DateTime64(3, 'UTC') CODEC(Delta(8), LZ4)`.
MODIFY_CODEC = re.compile(r"MODIFY COLUMN (\w+) [^\n]*? CODEC\((\w+(?:\(\d+\))?(?:, \w+(?:\(\d+\))?)*)\)")


def _columns(statement: str) -> list[tuple[str, str, str]]:
    body = statement.split("(", 1)[1].rsplit("\n)", 1)[0]
    columns = []
    for line in body.splitlines():
        match = COLUMN.match(line)
        if match and not line.strip().upper().startswith(("INDEX", "PROJECTION", "CONSTRAINT")):
            codec = f"CODEC({match.group(3)})" if match.group(3) else ""
            columns.append((match.group(1), COLUMN_EXTRAS.sub("", match.group(2).rstrip(",")), codec))
    return columns


def _declared() -> dict[str, list[tuple[str, str, str]]]:
    """Every table's columns as the migration files declare them, statement by statement (tables dropped
    and re-created, columns added after a given one)."""
    tables: dict[str, list[tuple[str, str, str]]] = {}
    for migration in discover():
        for statement in migration.split(30):
            if (created := CREATE.match(statement)) is not None:
                tables[created.group(1)] = _columns(statement)
            elif (dropped := DROP.match(statement)) is not None:
                tables.pop(dropped.group(1), None)
            elif (altered := ALTER.search(statement)) is not None:
                table = altered.group(1)
                for column, kind, codec, after in ADD_COLUMN.findall(statement):
                    names = [c[0] for c in tables[table]]
                    where = names.index(after) + 1 if after else len(names)
                    tables[table].insert(where, (column, kind, f"CODEC({codec})" if codec else ""))
                for column, codec in MODIFY_CODEC.findall(statement):
                    tables[table] = [
                        (n, t, f"CODEC({codec})" if n == column else c) for n, t, c in tables[table]
                    ]
    return tables


def test_migrated_columns_match_the_declared_ones(settings: Settings) -> None:
    """Every migration file, raw layer and marts: the tables the files leave behind, column by column."""
    apply_migrations(settings)
    declared = _declared()
    assert set(RAW_TABLES) <= set(declared) and len(declared) >= 30
    tables = {
        name
        for (name,) in get_warehouse(settings)
        .query(
            "SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'",
            parameters={"db": settings.warehouse_database},
        )
        .result_rows
    }
    assert tables == set(declared) | {"schema_migrations"}
    client = get_warehouse(settings)
    for table, columns in declared.items():
        rows = client.query(
            "SELECT name, type, compression_codec FROM system.columns "
            "WHERE database = {db:String} AND table = {t:String} ORDER BY position",
            parameters={"db": settings.warehouse_database, "t": table},
        ).result_rows
        assert [(n, t, c) for n, t, c in rows] == columns, table


def test_raw_tables_keep_the_payload_compressed(settings: Settings) -> None:
    apply_migrations(settings, up_to=99)
    codecs = dict(
        get_warehouse(settings)
        .query(
            "SELECT table, compression_codec FROM system.columns WHERE database = {db:String} AND name = 'payload'",
            parameters={"db": settings.warehouse_database},
        )
        .result_rows
    )
    assert codecs == {
        "events": "CODEC(ZSTD(3))",
        "transactions": "CODEC(ZSTD(3))",
        "replay_segments": "CODEC(ZSTD(3))",  # the SDK's zlib bytes, as base64 text
        "replays": "CODEC(ZSTD(3))",
    }


def test_raw_tables_write_parts_of_tens_of_mib_compact(settings: Settings) -> None:
    """A 15 MiB part of `transactions` (1,000 rows of 15 KB payloads) is written compact, one file for every
    column, not wide with two 1 MiB buffers a column stream (migration 0330: merges of such parts took up to
    228 MiB while the demo's history was built)."""
    apply_migrations(settings)
    client = get_warehouse(settings)
    client.command(
        "INSERT INTO transactions (org_id, project_id, event_id, timestamp, received_at, payload) "
        "SELECT 1, 1, generateUUIDv4(), now64(3), now64(3), randomPrintableASCII(15000) FROM numbers(1000)"
    )
    parts = client.query(
        "SELECT part_type, data_uncompressed_bytes FROM system.parts "
        "WHERE database = {db:String} AND table = 'transactions' AND active",
        parameters={"db": settings.warehouse_database},
    ).result_rows
    assert [part_type for part_type, _ in parts] == ["Compact"]
    assert parts[0][1] > 14 * 1024 * 1024  # past the engine's default threshold for a wide part (10 MiB)
    settings_of = dict(
        client.query(
            "SELECT name, engine_full FROM system.tables WHERE database = {db:String} "
            "AND name IN ('events', 'transactions', 'spans')",
            parameters={"db": settings.warehouse_database},
        ).result_rows
    )
    assert all(
        "min_bytes_for_wide_part = 268435456" in settings_of[t] for t in ("events", "transactions", "spans")
    )
