"""The migrated raw layer matches what the migration files declare, column by column (``system.columns``)."""

from __future__ import annotations

import re

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations, discover

COLUMN = re.compile(r"^\s{4}([a-z_][a-z0-9_]*)\s+(.+?)(?:\s+CODEC\((.+)\))?,?\s*(?:--.*)?$")
RAW_TABLES = ("events", "transactions", "spans", "ingest_batches")
ADD_COLUMN = re.compile(
    r"ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+) (\w+(?:\([^)]*\))?)(?: DEFAULT [^\n]*?)? AFTER (\w+)"
)


def _declared() -> dict[str, list[tuple[str, str, str]]]:
    tables: dict[str, list[tuple[str, str, str]]] = {}
    for migration in discover():
        if migration.number > 99:
            continue
        added = ADD_COLUMN.search(migration.text)
        if added is not None:  # a column added later, placed where its AFTER clause says
            table, column, kind, after = added.groups()
            names = [c[0] for c in tables[table]]
            tables[table].insert(names.index(after) + 1, (column, kind, ""))
            continue
        name = re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", migration.text).group(1)
        body = migration.text.split("(", 1)[1].rsplit("\n)", 1)[0]
        columns = []
        for line in body.splitlines():
            match = COLUMN.match(line)
            if match and not line.strip().startswith("INDEX"):
                codec = f"CODEC({match.group(3)})" if match.group(3) else ""
                columns.append((match.group(1), match.group(2).rstrip(","), codec))
        tables[name] = columns
    return tables


def test_migrated_columns_match_the_declared_ones(settings: Settings) -> None:
    apply_migrations(settings, up_to=99)
    declared = _declared()
    assert set(RAW_TABLES) <= set(declared)
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
