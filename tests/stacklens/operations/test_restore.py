"""`stacklens restore`: a sealed backup (the secret inside, the passphrase needed) and an incremental one with
its full base, moved elsewhere, give back the same API answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacklens.operations.backup import BackupError, Manifest, run_backup
from stacklens.operations.restore import restore_backup
from stacklens.operations.sealing import SealError
from stacklens.settings import Settings
from tests.stacklens.operations.installation import (
    answers,
    event_payload,
    fill,
    fresh_settings,
    ingest,
    restored_answers,
)


def _event_parts(backup: Path, settings: Settings) -> set[str]:
    parts = backup / "warehouse" / "data" / settings.warehouse_database / "events"
    return {part.name for part in parts.iterdir() if part.is_dir()}


def test_a_sealed_backup_carries_the_secret_and_needs_the_passphrase(
    client, org_factory, stores, tmp_path
) -> None:
    filled = fill(client, org_factory("Acme"), events=3)
    before = answers(client, filled)
    manifest, _ = run_backup(stores, tmp_path / "sealed", passphrase="correct horse battery")
    assert manifest.sealed and manifest.secret == "sealed"
    files = [p for p in (tmp_path / "sealed").rglob("*") if p.is_file()]
    plain = sorted(p.name for p in files if not p.name.endswith(".sealed"))
    assert plain == [".backup", "manifest.json"]  # the index of file names and checksums, the manifest
    assert b"failure" not in b"".join(p.read_bytes() for p in files)  # no event text readable

    target = fresh_settings(tmp_path, stores).model_copy(update={"secret_key": None})
    with pytest.raises(BackupError, match="passphrase"):
        restore_backup(target, tmp_path / "sealed")
    with pytest.raises(SealError, match="wrong passphrase"):
        restore_backup(target, tmp_path / "sealed", "wrong horse")
    target = fresh_settings(tmp_path, stores, "second").model_copy(update={"secret_key": None})
    result = restore_backup(target, tmp_path / "sealed", "correct horse battery")
    assert result.warnings == [] and (target.data_dir / "secret_key").stat().st_mode & 0o777 == 0o600
    assert restored_answers(target, filled) == before  # the API key opens with the restored secret


def test_a_sealed_incremental_backup_restores_with_its_sealed_base(
    client, org_factory, stores, tmp_path
) -> None:
    """The engine reads only the full backup's readable index to make an incremental one; a restore opens
    both."""
    from stacklens.settings import override_settings

    org = org_factory("Acme")
    filled = fill(client, org, events=3)
    run_backup(stores, tmp_path / "full", passphrase="correct horse battery")
    ingest(client, org, [event_payload(n) for n in range(2)])
    before = answers(client, filled)
    manifest, _ = run_backup(
        stores, tmp_path / "incr", base=tmp_path / "full", passphrase="correct horse battery"
    )
    assert manifest.sealed and manifest.kind == "incremental" and manifest.tables["events"]["rows"] == 5
    target = fresh_settings(tmp_path, stores)
    restore_backup(target, tmp_path / "incr", "correct horse battery")
    assert restored_answers(target, filled) == before
    override_settings(stores)


def test_an_incremental_backup_holds_only_what_changed(client, org_factory, stores, tmp_path) -> None:
    org = org_factory("Acme")
    filled = fill(client, org, events=6)
    run_backup(stores, tmp_path / "full")
    ingest(client, org, [event_payload(n) for n in range(3)])
    before = answers(client, filled)
    manifest, logged = run_backup(stores, tmp_path / "incr", base=tmp_path / "full")
    assert manifest.kind == "incremental" and manifest.tables["events"]["rows"] == 9
    # The events parts written into each backup: the incremental one holds only the part of the three new
    # events (the part of the six first ones is referenced in the full backup, not copied again).
    full_parts, new_parts = (_event_parts(tmp_path / name, stores) for name in ("full", "incr"))
    assert full_parts and new_parts and not full_parts & new_parts
    assert logged["detail"]["rows"] >= 9  # what a restore of it gives back
    with pytest.raises(BackupError, match="names a full one"):
        run_backup(stores, tmp_path / "incr2", base=tmp_path / "incr")

    # Moved together, the pair still restores (the base is found beside the incremental backup).
    moved = tmp_path / "moved"
    moved.mkdir()
    (tmp_path / "full").rename(moved / "full")
    (tmp_path / "incr").rename(moved / "incr")
    target = fresh_settings(tmp_path, stores)
    restore_backup(target, moved / "incr")
    assert restored_answers(target, filled) == before
    assert Manifest.read(moved / "incr").base["id"] == Manifest.read(moved / "full").id
