"""`stacklens restore`: a sealed backup (the secret inside, the passphrase needed) and an incremental one with
its full base, moved elsewhere, give back the same API answers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from stacklens.operations.backup import BackupError, Manifest, run_backup
from stacklens.operations.backup_contents import signature
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


def _crafted(
    original: Path, where: Path, change: Callable[[Path, dict[str, Any]], None], secret: bytes | None
):
    """A copy of the backup ``original`` changed by ``change`` (its files and its manifest's data); the
    manifest signed again with ``secret`` when given (what only a holder of the installation's secret could
    do: the names are checked all the same)."""
    shutil.copytree(original, where, symlinks=True)
    data = json.loads((where / "manifest.json").read_text())
    change(where, data)
    if secret is not None:
        data["signature"] = signature(data, secret)
    (where / "manifest.json").write_text(json.dumps(data))
    return where


def _unsigned(directory: Path, data: dict[str, Any]) -> None:
    """As a version before signed manifests wrote it."""
    data["format"] = 1
    del data["files"], data["signature"]


def test_crafted_backups_are_refused_before_anything_is_written(
    client, org_factory, stores, tmp_path
) -> None:
    """The probe's crafted backups — names with '..', absolute names, a link to /etc/hostname, a changed
    manifest — and a few more: each refused with a clear message, nothing restored."""
    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(3)])
    run_backup(stores, tmp_path / "good")
    run_backup(stores, tmp_path / "good-sealed", passphrase="correct horse battery")
    secret = stores.secret()
    target = fresh_settings(tmp_path, stores)
    hostname = Path("/etc/hostname")

    def link_control_store(d: Path, data: dict[str, Any]) -> None:
        (d / "control.db").unlink()
        (d / "control.db").symlink_to(hostname)

    def extra_link(d: Path, data: dict[str, Any]) -> None:
        (d / "dagster").mkdir(exist_ok=True)
        (d / "dagster" / "extra.db").symlink_to(hostname)

    def named(name: str) -> Callable[[Path, dict[str, Any]], None]:
        def change(d: Path, data: dict[str, Any]) -> None:
            (d / "escape.db").write_bytes(b"x")
            data["dagster_files"] = [name]
            data["files"]["dagster/" + name] = {"size": 1}

        return change

    def changed_bytes(d: Path, data: dict[str, Any]) -> None:
        body = bytearray((d / "control.db").read_bytes())
        body[200] ^= 1
        (d / "control.db").write_bytes(bytes(body))

    def index_escape(d: Path, data: dict[str, Any]) -> None:
        _unsigned(d, data)
        index = d / "warehouse" / ".backup"
        index.write_bytes(index.read_bytes().replace(b"<name>data/", b"<name>../../../data/", 1))

    def unsigned_escape(d: Path, data: dict[str, Any]) -> None:
        _unsigned(d, data)
        data["dagster_files"] = ["../../escape.db"]

    def sealed_secret_link(d: Path, data: dict[str, Any]) -> None:
        (d / "secret_key.sealed").unlink()
        (d / "secret_key.sealed").symlink_to(hostname)

    def more_rows(d: Path, data: dict[str, Any]) -> None:
        data["tables"]["events"]["rows"] += 1

    def database(d: Path, data: dict[str, Any]) -> None:
        data["database"] = "x FROM File('/etc') --"

    cases: list[
        tuple[str, Path, Callable[[Path, dict[str, Any]], None], bytes | None, dict[str, Any], str]
    ] = [
        ("tampered", tmp_path / "good", more_rows, None, {}, "was changed after the backup was made"),
        ("tampered-db", tmp_path / "good", database, None, {}, "was changed after the backup was made"),
        ("dotdot", tmp_path / "good", named("../../escape.db"), secret, {}, "outside its own directory"),
        ("absolute", tmp_path / "good", named("/etc/hostname"), secret, {}, "outside its own directory"),
        ("link", tmp_path / "good", link_control_store, None, {}, "control.db is a symbolic link"),
        ("extra-link", tmp_path / "good", extra_link, None, {}, "extra.db is a symbolic link"),
        ("changed", tmp_path / "good", changed_bytes, None, {}, "not the file its manifest records"),
        ("unsigned", tmp_path / "good", _unsigned, None, {}, "its manifest is not signed"),
        (
            "unsigned-dotdot",
            tmp_path / "good",
            unsigned_escape,
            None,
            {"allow_unsigned": True},
            "outside its own directory",
        ),
        (
            "index",
            tmp_path / "good",
            index_escape,
            None,
            {"allow_unsigned": True},
            "outside its own directory",
        ),
        (
            "sealed-tampered",
            tmp_path / "good-sealed",
            more_rows,
            None,
            {"passphrase": "correct horse battery"},
            "was changed after the backup was made",
        ),
        (
            "sealed-link",
            tmp_path / "good-sealed",
            sealed_secret_link,
            None,
            {"passphrase": "correct horse battery"},
            "secret_key.sealed is a symbolic link",
        ),
    ]
    for name, original, change, sign_with, extra, message in cases:
        crafted = _crafted(original, tmp_path / "crafted" / name, change, sign_with)
        with pytest.raises(BackupError, match=message):
            restore_backup(target, crafted, **extra)
        assert list(target.data_dir.iterdir()) == [], name  # nothing restored, nothing written

    # The secret at hand decides for a plain backup: another one, or none, is refused (never generated).
    other = target.model_copy(update={"secret_key": SecretStr("another-secret-0123456789abcdef")})
    with pytest.raises(BackupError, match="not the one of the installation that made this backup"):
        restore_backup(other, tmp_path / "good")
    with pytest.raises(BackupError, match="which a restore needs first"):
        restore_backup(target.model_copy(update={"secret_key": None}), tmp_path / "good")
    assert list(target.data_dir.iterdir()) == []

    # A backup of an earlier version (unsigned) restores when the operator says so.
    legacy = _crafted(tmp_path / "good", tmp_path / "legacy", _unsigned, None)
    assert restore_backup(target, legacy, allow_unsigned=True).rows_checked >= 3
    assert (target.data_dir / "control.db").read_bytes() != hostname.read_bytes()
