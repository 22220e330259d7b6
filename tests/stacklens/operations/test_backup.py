"""`stacklens backup` / `restore` of an embedded installation, in this process: what goes in, what comes back
(the API's answers and the warehouse's checksums), sealing, incremental backups, and the cut-off while ingest
keeps answering."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from stacklens.control.db import session_scope
from stacklens.control.maintenance_log import list_runs
from stacklens.operations.backup import BackupError, run_backup
from stacklens.operations.restore import restore_backup
from stacklens.settings import override_settings
from tests.stacklens.operations.installation import (
    answers,
    event_payload,
    fill,
    fresh_settings,
    ingest,
    pages,
    restored_answers,
)


def test_a_restore_gives_back_the_same_answers_and_rows(client, org_factory, stores, tmp_path) -> None:
    filled = fill(client, org_factory("Acme"))
    before = answers(client, filled)
    assert len(before["issues"]) == 3 and sum(len(e["events"]) for e in before["events"].values()) == 9

    manifest, logged = run_backup(stores, tmp_path / "b1")
    assert manifest.kind == "full" and not manifest.sealed and manifest.tables["events"]["rows"] == 9
    assert logged["outcome"] == "succeeded" and logged["detail"]["rows"] >= 9 and logged["duration_ms"] >= 0
    on_disk = json.loads((tmp_path / "b1" / "manifest.json").read_text())
    assert on_disk["cutoff"] and on_disk["secret"] == "not-included"
    assert not (tmp_path / "b1" / "secret_key").exists() and (tmp_path / "b1" / "control.db").exists()

    target = fresh_settings(tmp_path, stores)
    result = restore_backup(target, tmp_path / "b1")
    assert result.rows_checked >= 9 and result.warnings == []  # the same secret is at hand
    ids = [issue["id"] for issue in before["issues"]]
    before["pages"] = pages(client, filled, ids)
    after = restored_answers(target, filled, ids)
    assert after == before  # the API's answers and the pages, as they were

    # A data directory that holds an installation is never restored into.
    with pytest.raises(BackupError, match="not empty"):
        restore_backup(target, tmp_path / "b1")
    with pytest.raises(BackupError, match="not empty"):
        run_backup(stores, tmp_path / "b1")
    override_settings(stores)
    with session_scope(stores) as session:
        runs = list_runs(session)
    assert [r.kind for r in runs] == ["backup", "backup"]
    assert [r.outcome for r in runs] == ["failed", "succeeded"] and "not empty" in runs[0].summary


def test_events_answered_during_a_backup_are_in_it_or_after_its_cutoff(
    client, org_factory, stores, tmp_path
) -> None:
    """Ingest keeps answering while the drains are held; the backup holds exactly the rows landed before its
    cut-off, each event whole, and everything answered lands afterwards."""
    from stacklens.ingest.front_door import drains_held, front_door
    from stacklens.warehouse.client import get_warehouse

    def stored() -> int:
        return int(get_warehouse(stores).query("SELECT count() FROM events").result_rows[0][0])

    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(4)])
    # While a backup holds the drains, a request is still answered 200 (its rows durable in the spool) and
    # lands when the hold ends.
    with drains_held(stores):
        ingest(client, org, [event_payload(9)])
        assert stored() == 4
    assert front_door(stores).settle(30) and stored() == 5
    answered: list[int] = []
    stop = threading.Event()

    def keep_sending() -> None:
        n = 0
        while not stop.is_set():
            ingest(client, org, [event_payload(n)])
            answered.append(n)
            n += 1

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        while len(answered) < 3:
            threading.Event().wait(0.02)
        manifest, _ = run_backup(stores, tmp_path / "online")
    finally:
        stop.set()
        sender.join(30)
    assert front_door(stores).settle(30)
    kept = manifest.tables["events"]["rows"]
    assert 5 + 3 <= kept <= 5 + len(answered)
    target = fresh_settings(tmp_path, stores)
    restore_backup(target, tmp_path / "online")  # checks every kept table against the manifest
    override_settings(stores)
    assert stored() == 5 + len(answered) >= kept


def _snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under ``root``: its mode and, for a file, its bytes."""
    found: dict[str, tuple[int, bytes | None]] = {".": (root.stat().st_mode, None)}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(root))] = (
            info.st_mode,
            path.read_bytes() if stat.S_ISREG(info.st_mode) else None,
        )
    return found


def test_a_folder_of_earlier_backups_is_refused_and_kept_byte_for_byte(
    client, org_factory, stores, tmp_path
) -> None:
    """The probe's `--to /var/backups/stacklens`: refused, and not one byte of what is there changes."""
    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(3)])
    folder = tmp_path / "backups"
    run_backup(stores, folder / "monday")
    (folder / "notes.txt").write_text("kept by the operator\n")
    before = _snapshot(folder)
    assert len(before) > 10 and "monday/manifest.json" in before

    with pytest.raises(BackupError, match="is not empty: a backup goes into a new or empty directory"):
        run_backup(stores, folder)
    with pytest.raises(BackupError, match="is not empty"):
        run_backup(stores, folder / "monday", passphrase="correct horse battery")
    assert _snapshot(folder) == before
    # The earlier backup is whole: it restores.
    target = fresh_settings(tmp_path, stores)
    assert restore_backup(target, folder / "monday").rows_checked >= 3
    override_settings(stores)


def test_the_data_directory_is_refused_and_the_installation_still_works(
    client, org_factory, stores, tmp_path
) -> None:
    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(3)])
    from stacklens.ingest.front_door import front_door

    assert front_door(stores).settle(30)
    data_dir = stores.data_dir
    engine_dir = Path(stores.resolved_warehouse_url.removeprefix("chdb://"))
    # What a refused backup must leave alone: every top-level entry of the data directory, and the bytes of
    # every file the live server does not rewrite on its own — the engine's table definitions (metadata/)
    # among them. The front door's spool journals (front_door/) come and go as rows land, the engine merges
    # and renames its own parts, and the control store's SQLite files take the refusals' maintenance-log
    # rows, so those are compared as entries only (the store and the rows are read back below).
    live = (data_dir / "front_door", engine_dir)
    top_level = {p.name for p in data_dir.iterdir()}
    engine_top = {p.name for p in engine_dir.iterdir()}
    kept = {
        p: p.read_bytes()
        for p in [*data_dir.rglob("*"), *(engine_dir / "metadata").rglob("*")]
        if p.is_file()
        and (p.is_relative_to(engine_dir / "metadata") or not any(p.is_relative_to(d) for d in live))
        and not p.name.startswith("control.db")
    }
    assert any(p.suffix == ".sql" for p in kept), sorted(kept)  # the engine's tables are among them
    refused = {
        data_dir: "is the data directory",
        data_dir.parent: "holds the data directory",
        Path("/"): "holds the data directory",
        data_dir / "dagster": "is inside the data directory",
        data_dir / "new-in-it": "is inside the data directory",
        data_dir / "backups": "is inside the data directory",
        engine_dir: "is the warehouse engine's directory",
        engine_dir / "new-in-it": "is inside the warehouse engine's directory",
    }
    for target, message in refused.items():
        with pytest.raises(BackupError, match=message):
            run_backup(stores, target)
    assert not (data_dir / "new-in-it").exists() and not (engine_dir / "new-in-it").exists()
    assert top_level <= {p.name for p in data_dir.iterdir()}  # nothing removed
    assert engine_top <= {p.name for p in engine_dir.iterdir()}
    assert {p: p.read_bytes() for p in kept if p.is_file()} == kept  # nothing removed or changed
    assert engine_dir.is_dir() and any(engine_dir.iterdir())
    # Served as before: the events are there, new ones land, the API key opens.
    ingest(client, org, [event_payload(9)])
    assert front_door(stores).settle(30)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    issues = client.get(f"/api/projects/{org['project']}/issues", headers=auth)
    assert issues.status_code == 200 and sum(i["events"] for i in issues.json()["issues"]) == 4, issues.text
    # A new directory under <data_dir>/backups is the one place inside it a backup goes (migrate's default).
    manifest, _ = run_backup(stores, data_dir / "backups" / "before-migrate-x")
    assert manifest.tables["events"]["rows"] == 4


def test_a_backup_failing_midway_removes_only_what_it_made(
    client, org_factory, stores, tmp_path, monkeypatch
) -> None:
    """The engine's backup is written, then the control store's copy fails: the run removes its own
    directories and files, and nothing else — not the operator's empty directory, not a file another program
    put there meanwhile."""
    from stacklens.operations import backup

    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(2)])
    seen: list[Path] = []

    def failing_copy(source: Path, target: Path) -> None:
        seen.append(target.parent)
        assert (target.parent / "warehouse" / ".backup").is_file()  # the engine's part is written
        (target.parent / "someone-elses.txt").write_text("not the backup's")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backup, "sqlite_copy", failing_copy)
    # A new directory with missing parents: all of them go.
    with pytest.raises(OSError, match="No space left"):
        run_backup(stores, tmp_path / "new" / "deeper" / "b")
    assert seen and not (tmp_path / "new" / "deeper" / "b" / "warehouse").exists()
    assert sorted(p.name for p in (tmp_path / "new" / "deeper" / "b").iterdir()) == ["someone-elses.txt"]
    # (the directories stay only because of the file someone else wrote into them)

    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    os.chmod(empty, 0o755)
    with pytest.raises(OSError, match="No space left"):
        run_backup(stores, empty)
    assert sorted(p.name for p in empty.iterdir()) == ["someone-elses.txt"]
    assert stat.S_IMODE(empty.stat().st_mode) == 0o755

    monkeypatch.setattr(
        backup, "sqlite_copy", lambda source, target: (_ for _ in ()).throw(OSError(5, "EIO"))
    )
    with pytest.raises(OSError, match="EIO"):
        run_backup(stores, tmp_path / "fresh" / "b")
    assert not (tmp_path / "fresh").exists()  # every directory it made, removed

    # Sealing cut off half-way: no plain secret (nor anything else) stays behind.
    monkeypatch.undo()
    from stacklens.operations import sealing

    def cut_off(root: Path, passphrase: str) -> int:
        assert (root / "secret_key").is_file()
        raise KeyboardInterrupt

    monkeypatch.setattr(sealing, "seal_tree", cut_off)
    with pytest.raises(KeyboardInterrupt):
        run_backup(stores, tmp_path / "sealed", passphrase="correct horse battery")
    assert not (tmp_path / "sealed").exists()
    override_settings(stores)
    with session_scope(stores) as session:
        assert [r.outcome for r in list_runs(session)][:4] == ["failed"] * 4


def test_backup_files_are_0600_and_directories_0700(client, org_factory, stores, tmp_path) -> None:
    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(2)])
    for name, passphrase in (("plain", None), ("sealed", "correct horse battery")):
        run_backup(stores, tmp_path / name, passphrase=passphrase)
        entries = [tmp_path / name, *(tmp_path / name).rglob("*")]
        modes = {stat.S_IMODE(p.lstat().st_mode) for p in entries if p.is_dir()}
        assert modes == {0o700}, name
        modes = {stat.S_IMODE(p.lstat().st_mode) for p in entries if p.is_file()}
        assert modes == {0o600}, name
        assert len(entries) > 10
