"""warehouse_sql/schema.sql is what the migrations build today, written by its one command, and it builds that
schema again when run statement by statement in its order."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.migrations import discover
from stacklens.warehouse.queries import load_query
from stacklens.warehouse.schema_file import (
    COMMAND,
    HEADER,
    SCHEMA_FILE,
    normalised,
    schema_sql,
    shown_objects,
)
from tests.conftest import make_settings

STALE = f"warehouse_sql/schema.sql is not what the migrations build: run `{COMMAND}` (or `make schema`) and commit it"


def _difference(expected: str, committed: str) -> str:
    lines = difflib.unified_diff(
        committed.splitlines(), expected.splitlines(), "committed", "migrated", lineterm="", n=1
    )
    return "\n".join(list(lines)[:60])


def test_the_committed_file_is_the_migrated_schema(settings: Settings) -> None:
    expected, committed = schema_sql(settings), SCHEMA_FILE.read_text()
    assert expected == committed, f"{STALE}\n{_difference(expected, committed)}"


def test_the_command_writes_the_file_whatever_the_environment_says(tmp_path: Path) -> None:
    # Run as a command (its own process, its own embedded warehouse), with settings that would change the TTLs
    # and the database's name were they read.
    target = tmp_path / "schema.sql"
    environment = {
        **os.environ,
        "STACKLENS_RETENTION_DAYS": "7",
        "STACKLENS_LOG_RETENTION_DAYS": "3",
        "STACKLENS_WAREHOUSE_DATABASE": "elsewhere",
    }
    subprocess.run(
        [sys.executable, "-m", "stacklens.warehouse.schema_file", str(target)],
        env=environment,
        capture_output=True,
        check=True,
        timeout=300,
    )
    assert target.read_text() == SCHEMA_FILE.read_text(), STALE


def test_the_file_builds_the_schema_in_its_order(settings: Settings, tmp_path: Path) -> None:
    """Each object comes after what it reads: the statements run in the file's order on an empty database
    build the same objects."""
    text = SCHEMA_FILE.read_text()
    assert text.startswith(HEADER)
    statements = [part.strip() for part in text.removeprefix(HEADER).split(";\n") if part.strip()]
    empty = make_settings(tmp_path / "copy", settings.warehouse_url)
    ensure_database(empty)
    client = get_warehouse(empty)
    for statement in statements:
        client.command(statement)
    assert shown_objects(client, empty.warehouse_database) == statements
    assert len(statements) > 40
    client.command(f"DROP DATABASE `{empty.warehouse_database}`")


def test_the_file_is_neither_a_migration_nor_a_query() -> None:
    """The runner reads only migrations/, named queries only queries/: the generated file is never run."""
    assert SCHEMA_FILE.is_file()
    assert SCHEMA_FILE not in {migration.path for migration in discover()}
    with pytest.raises(ValueError, match="leaves the queries folder"):
        load_query("../schema")


def test_what_differs_between_databases_is_left_out() -> None:
    shown = (
        "CREATE MATERIALIZED VIEW t_1a2b.counts_mv UUID '0f6d9a0e-2c1b-4d3e-9f00-123456789abc' "
        "TO t_1a2b.counts\n(\n    `n` UInt64\n)\nAS SELECT count() AS n\nFROM `t_1a2b`.events\n"
        "WHERE note != 'xt_1a2b.y'"
    )
    assert normalised(shown, "t_1a2b") == (
        "CREATE MATERIALIZED VIEW counts_mv TO counts\n(\n    `n` UInt64\n)\nAS SELECT count() AS n\n"
        "FROM events\nWHERE note != 'xt_1a2b.y'"
    )
    assert normalised("ENGINE = File(CSV, '/srv/data/warehouse/x.csv')", "db", "/srv/data/warehouse") == (
        "ENGINE = File(CSV, '<data_dir>/x.csv')"
    )
