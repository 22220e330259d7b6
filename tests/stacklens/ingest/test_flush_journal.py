"""The front door's journals: written whole and private, found again oldest first, a drain's sources
replaced."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from stacklens.ingest.flush_journal import FlushJournal, Insert, Unchecked


def insert(table: str = "events", token: str = "t:1") -> Insert:
    return Insert(table, ("org_id", "payload"), (b'{"org_id":1}',), token, "202611")


def test_a_journal_is_found_again_whole_and_private(tmp_path: Path) -> None:
    journal = FlushJournal(tmp_path / "front_door")
    unchecked = Unchecked(1, "events", ("org_id",), None, ((1, 10, "id", b"{}", [], "202611", []),))
    journal.write("a-1", [insert()], unchecked=[unchecked])
    assert oct((tmp_path / "front_door").stat().st_mode & 0o777) == "0o700"
    assert oct((tmp_path / "front_door" / "a-1.flush").stat().st_mode & 0o777) == "0o600"
    [found] = FlushJournal(tmp_path / "front_door").pending()
    assert (found.name, found.inserts, found.unchecked, found.sources) == (
        "a-1",
        (insert(),),
        (unchecked,),
        (),
    )
    journal.remove("a-1")
    assert journal.pending() == []


def test_a_drain_found_again_replaces_the_journals_it_holds(tmp_path: Path) -> None:
    journal = FlushJournal(tmp_path)
    journal.write("a-1", [insert(token="a-1")])
    journal.write("a-2", [insert(token="a-2")])
    journal.write("a-3", [insert(token="a-3")])
    journal.write("d-1", [insert(token="d-1")], sources=("a-1", "a-2"))
    found = journal.pending()
    assert sorted(j.name for j in found) == ["a-3", "d-1"]
    assert sorted(p.name for p in tmp_path.glob("*.flush")) == ["a-3.flush", "d-1.flush"]


def test_an_unreadable_journal_is_set_aside_and_a_stale_partial_one_removed(tmp_path: Path) -> None:
    journal = FlushJournal(tmp_path)
    (tmp_path / "broken.flush").write_bytes(b"not a journal")
    partial = tmp_path / "a-9.tmp"
    partial.write_bytes(b"cut off")
    old = time.time() - 3600
    os.utime(partial, (old, old))
    young = tmp_path / "a-10.tmp"
    young.write_bytes(b"being written")
    assert journal.pending() == []
    assert (tmp_path / "broken.unreadable").exists()
    assert not partial.exists()
    assert young.exists()  # perhaps another process's journal, being written now


def test_journal_names_never_repeat_across_journals_of_one_folder(tmp_path: Path) -> None:
    # A name is also its inserts' deduplication token: a name used again by a restarted process would have the
    # engine drop the new blocks as already landed.
    first, restarted = FlushJournal(tmp_path), FlushJournal(tmp_path)
    names = [first.new_name("a") for _ in range(5_000)] + [restarted.new_name("a") for _ in range(5_000)]
    assert len(set(names)) == 10_000
    assert all(name.startswith("a-") for name in names)
    assert first.new_name("d").startswith("d-")


def test_a_journal_written_in_one_piece_reads_back_large(tmp_path: Path) -> None:
    journal = FlushJournal(tmp_path)
    rows = tuple(b'{"payload":"' + bytes([97 + n % 26]) * 70_000 + b'"}' for n in range(40))
    journal.write("a-big", [Insert("events", ("payload",), rows, "a-big:events", "202611")])
    [found] = journal.pending()
    assert found.inserts[0].rows == rows
    assert not list(tmp_path.glob("*.tmp"))


def _record_syncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path]]:
    """The real ``os.fsync`` and ``os.replace``, each call recorded with the path it touched, in order."""
    calls: list[tuple[str, Path]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append(("fsync", Path(os.readlink(f"/proc/self/fd/{fd}"))))
        real_fsync(fd)

    def replace(source: str | Path, target: str | Path) -> None:
        calls.append(("replace", Path(target).resolve()))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return calls


def test_a_journal_is_synced_then_renamed_then_its_folder_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Power loss (issue #62): the file's data is on disk before its name, the name before write returns."""
    calls = _record_syncs(monkeypatch)
    folder = (tmp_path / "front_door").resolve()
    journal = FlushJournal(folder)
    assert calls == [("fsync", folder.parent)]  # the new folder's own entry
    calls.clear()
    journal.write("a-1", [insert()])
    assert calls == [
        ("fsync", folder / "a-1.tmp"),
        ("replace", folder / "a-1.flush"),
        ("fsync", folder),
    ]
    calls.clear()
    journal.write("d-1", [insert(token="d-1")], sources=("a-1",))  # a drain's, before its sources go
    assert [call for call, _ in calls] == ["fsync", "replace", "fsync"]
    assert [found.name for found in journal.pending()] == ["d-1"]


def test_spool_sync_off_writes_the_same_journal_without_syncing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record_syncs(monkeypatch)
    journal = FlushJournal(tmp_path / "front_door", sync=False)
    journal.write("a-1", [insert()])
    assert [call for call, _ in calls] == ["replace"]
    assert [found.inserts for found in journal.pending()] == [(insert(),)]
