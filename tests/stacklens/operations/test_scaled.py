"""The scaled mode's plan: the server's BACKUP to a disk or a bucket (incremental on a base), pg_dump and
pg_restore of each PostgreSQL database with the password in the environment, never on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacklens.operations.engine_backup import Destination
from stacklens.operations.scaled import ScaledBackupError, backup_plan, restore_plan, warehouse_destination
from stacklens.settings import Settings


def _scaled(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        warehouse_url="https://ch.internal:8443",
        database_url="postgresql+psycopg://lens:pw-1@db.internal/stacklens",
        secret_key="a-secret-key-long-enough-0123",
    )


def test_backup_and_restore_plans(tmp_path: Path) -> None:
    settings = _scaled(tmp_path)
    base = Destination("Disk", ("backups", "stacklens-full"))
    plan = backup_plan(settings, tmp_path / "b", "disk:backups", base)
    assert plan.statements == [
        f"BACKUP DATABASE stacklens TO Disk('backups', '{plan.name}') SETTINGS base_backup = "
        "Disk('backups', 'stacklens-full')"
    ]
    [dump] = plan.commands
    assert dump.env == {"PGPASSWORD": "pw-1"} and "pw-1" not in " ".join(dump.argv)
    assert dump.shown().startswith("PGPASSWORD=*** pg_dump --format=custom --no-owner --file ")
    restore = restore_plan(settings, tmp_path / "b", "stacklens", Destination("Disk", ("backups", plan.name)))
    assert restore.statements == [f"RESTORE DATABASE stacklens FROM Disk('backups', '{plan.name}')"]
    assert restore.commands[0].argv[0] == "pg_restore" and restore.commands[0].argv[-1].endswith(
        "control.dump"
    )


def test_destinations_are_checked() -> None:
    assert warehouse_destination("s3:https://b.s3.amazonaws.com/x/", "n").sql() == (
        "S3('https://b.s3.amazonaws.com/x/n')"
    )
    for bad in ("disk:", "s3:ftp://x", "tape:1"):
        with pytest.raises(ScaledBackupError, match="use disk:NAME"):
            warehouse_destination(bad, "n")
