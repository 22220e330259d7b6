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


def test_a_scaled_backup_touches_only_what_it_creates(tmp_path: Path) -> None:
    """Its directory is checked as an embedded backup's (never a non-empty one, never the data directory)
    before the server is asked anything; when the server's BACKUP fails, what the run made is removed."""
    from stacklens.operations.backup_target import BackupError
    from stacklens.operations.scaled import run_backup_plan

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "secret_key").write_text("kept")
    settings = _scaled(data_dir).model_copy(update={"warehouse_url": "http://127.0.0.1:1"})
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "control.dump").write_bytes(b"an earlier dump")
    destination = warehouse_destination("disk:backups", "stacklens-x")
    for target, message in ((earlier, "is not empty"), (data_dir, "is the data directory")):
        with pytest.raises(BackupError, match=message):
            run_backup_plan(settings, target, backup_plan(settings, target, "disk:backups"), destination)
    assert (earlier / "control.dump").read_bytes() == b"an earlier dump"
    assert (data_dir / "secret_key").read_text() == "kept"

    fresh = tmp_path / "new" / "b"
    with pytest.raises(Exception, match=r"127\.0\.0\.1|[Cc]onnect"):  # no server answers there
        run_backup_plan(settings, fresh, backup_plan(settings, fresh, "disk:backups"), destination)
    assert not (tmp_path / "new").exists()


def test_a_restore_reads_no_sql_from_a_manifest() -> None:
    """The backed-up database's name and the destination's engine come from a backup's manifest: checked
    before they are written into a statement."""
    settings = _scaled(Path("/tmp"))
    with pytest.raises(ValueError, match="is not a database name"):
        restore_plan(settings, Path("/b"), "stacklens FROM File('/etc') --", Destination("Disk", ("b", "x")))
    with pytest.raises(ValueError, match="is not a backup destination"):
        restore_plan(settings, Path("/b"), "stacklens", Destination("URL('http://x') --", ("b",)))
