"""tracker.json generations: atomic writes, checksum, backup recovery, removal, mid-write crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shipper.tracker import TrackerStore, TrackerUnwritable, decode, encode


def body(offset: int) -> dict:
    return {"files": {"g": {"path": "stacklens-2026-11-21.log", "offset": offset}}, "stats": {}}


def test_generations_and_backup(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "tracker.json")
    store.save(body(1))
    store.save(body(2))
    assert store.load()["files"]["g"]["offset"] == 2
    assert decode(store.backup.read_bytes())["files"]["g"]["offset"] == 1
    assert os.stat(store.path).st_mode & 0o777 == 0o600


def test_corrupt_tracker_is_set_aside_and_backup_used(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "tracker.json")
    store.save(body(1))
    store.save(body(2))
    size = store.path.stat().st_size
    with open(store.path, "r+b") as fh:  # NUL-filled in place, as after a power cut on some file systems
        fh.write(b"\0" * size)
    assert store.load()["files"]["g"]["offset"] == 1
    assert list(tmp_path.glob("tracker.json.corrupt-*"))
    # Truncated: same recovery; a checksum mismatch (edited by hand) too.
    store.save(body(3))
    store.save(body(4))
    store.path.write_bytes(store.path.read_bytes()[:40])
    assert store.load()["files"]["g"]["offset"] == 3
    store.path.write_bytes(encode(body(5)).replace(b'"offset": 5', b'"offset": 6'))
    assert store.load()["files"]["g"]["offset"] == 3


def test_both_generations_bad_means_start_over(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "tracker.json")
    store.path.write_bytes(b"{")
    store.backup.write_bytes(b"")
    assert store.load() == {"files": {}, "stats": {}}


def test_removed_tracker_delivers_everything_again(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "tracker.json")
    store.save(body(1))
    store.save(body(2))
    store.path.unlink()
    assert store.load()["files"] == {}
    assert not store.backup.exists()


def test_crash_mid_write_leaves_the_previous_generation(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "tracker.json")
    store.save(body(7))
    code = (
        "import sys; from pathlib import Path; from shipper.tracker import TrackerStore;"
        f"TrackerStore(Path({str(store.path)!r})).save({{'files': {{}}, 'stats': {{}}}})"
    )
    env = dict(os.environ, STACKLENS_SHIPPER_FAULT="mid_tracker_write")
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=Path(__file__).parents[2])
    assert result.returncode == -9
    assert store.tmp.exists()
    assert store.load()["files"]["g"]["offset"] == 7
    assert not store.tmp.exists()


def test_unwritable_directory(tmp_path: Path) -> None:
    store = TrackerStore(tmp_path / "missing" / "tracker.json")
    with pytest.raises(TrackerUnwritable, match="missing"):
        store.check_writable()
