"""The migration runner against the real embedded engine: apply, status, dry run, re-run, checksum, TTL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from stacklens.settings import Settings
from stacklens.warehouse import migrations
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import MigrationError, apply_migrations, discover, migration_status
from tests.warehouse_template import runner_only

# The raw layer and ingest own files 0001-0099; other layers are tested with their own code.
RAW = 99


@pytest.fixture(autouse=True)
def _the_runner_itself() -> Iterator[None]:
    """These tests are of the runner: no database here is a copy of the suite's template."""
    with runner_only():
        yield


def _table_ttl(settings: Settings, table: str) -> str:
    ddl = (
        get_warehouse(settings)
        .query(
            "SELECT create_table_query FROM system.tables WHERE database = {db:String} AND name = {t:String}",
            parameters={"db": settings.warehouse_database, "t": table},
        )
        .result_rows[0][0]
    )
    return re.search(r"TTL (.+?)(?: SETTINGS|$)", ddl).group(1)


def test_apply_status_and_rerun(settings: Settings) -> None:
    names = [m.name for m in discover() if m.number <= RAW]
    assert all(s.applied_at is None for s in migration_status(settings))
    assert apply_migrations(settings, dry_run=True, up_to=RAW) == names
    # A dry run changes nothing: still all pending.
    assert all(s.applied_at is None for s in migration_status(settings))
    assert apply_migrations(settings, up_to=RAW) == names
    status = [s for s in migration_status(settings) if s.name in names]
    assert [s.name for s in status] == names and all(s.applied_at is not None for s in status)
    assert apply_migrations(settings, up_to=RAW) == []
    assert apply_migrations(settings, dry_run=True, up_to=RAW) == []


def test_changed_checksum_names_the_file(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apply_migrations(settings, up_to=RAW)
    original = discover()
    changed = [
        migrations.MigrationFile(m.name, m.path, m.text + "\n-- edited\n") if m.name.startswith("0002") else m
        for m in original
    ]
    monkeypatch.setattr(migrations, "discover", lambda: changed)
    with pytest.raises(MigrationError, match=r"0002_create_transactions.sql was changed"):
        apply_migrations(settings, up_to=RAW)


def test_new_file_is_applied_after_the_others(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    apply_migrations(settings, up_to=RAW)
    extra = tmp_path / "0099_create_probe.sql"
    extra.write_text(
        "CREATE TABLE IF NOT EXISTS probe (a UInt8) ENGINE = MergeTree ORDER BY a;\nINSERT INTO probe VALUES (7);\n"
    )
    files = [m for m in discover() if m.number <= RAW] + [
        migrations.MigrationFile(extra.stem, extra, extra.read_text())
    ]
    monkeypatch.setattr(migrations, "discover", lambda: files)
    assert apply_migrations(settings, up_to=RAW) == ["0099_create_probe"]
    assert get_warehouse(settings).query("SELECT a FROM probe").result_rows == [(7,)]


def test_retention_change_modifies_ttl(settings: Settings) -> None:
    apply_migrations(settings, up_to=RAW)
    assert "toIntervalDay(90)" in _table_ttl(settings, "events")
    shorter = settings.model_copy(update={"retention_days": 14})
    planned = apply_migrations(shorter, dry_run=True, up_to=RAW)
    assert "0001_create_events (retention 14 days)" in planned
    assert "0004_create_ingest_batches" not in " ".join(planned)  # fixed 30-day TTL, not configurable
    apply_migrations(shorter, up_to=RAW)
    for table in ("events", "transactions", "spans"):
        assert "toIntervalDay(14)" in _table_ttl(settings, table), table
    assert apply_migrations(shorter, up_to=RAW) == []


def test_log_retention_is_its_own(settings: Settings) -> None:
    apply_migrations(settings, up_to=RAW)
    assert "toIntervalDay(30)" in _table_ttl(settings, "logs")
    assert "toIntervalDay(90)" in _table_ttl(settings, "events")
    # The events' retention leaves the logs' TTL alone, and the logs' retention the events'.
    shorter = settings.model_copy(update={"retention_days": 14})
    assert "0012_create_logs" not in " ".join(apply_migrations(shorter, dry_run=True, up_to=RAW))
    week_of_logs = settings.model_copy(update={"log_retention_days": 7})
    assert apply_migrations(week_of_logs, up_to=RAW) == ["0012_create_logs (retention 7 days)"]
    assert "toIntervalDay(7)" in _table_ttl(settings, "logs")
    assert "toIntervalDay(90)" in _table_ttl(settings, "events")
    assert apply_migrations(week_of_logs, up_to=RAW) == []


def test_bad_file_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "create_things.sql").write_text("SELECT 1")
    with pytest.raises(MigrationError, match=r"create_things.sql"):
        discover(tmp_path)
