"""Where a backup may go (checked before anything is made) and what a failed one takes away (only what it
made), on real directories; no engine runs here."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from stacklens.operations.backup_target import BackupError, check_target, claim_target, make_private
from tests.conftest import make_settings


@pytest.fixture
def installation(tmp_path: Path):
    data_dir = tmp_path / "data"
    (data_dir / "dagster").mkdir(parents=True)
    (data_dir / "control.db").write_bytes(b"live")
    return make_settings(data_dir, f"chdb://{tmp_path / 'engine'}")


def test_what_a_backup_may_not_be_written_into(installation, tmp_path: Path) -> None:
    data_dir = installation.data_dir
    (tmp_path / "a-file").write_text("x")
    (data_dir / "backups" / "old").mkdir(parents=True)
    (tmp_path / "to-data").symlink_to(data_dir)
    refused = {
        data_dir: "is the data directory",
        tmp_path / "to-data": "is the data directory",  # a link to it is it
        tmp_path / "to-data" / "x": "is inside the data directory",
        tmp_path: "holds the data directory",
        data_dir / "control.db": "is inside the data directory",
        data_dir / "backups" / "old": "already exists: inside the data directory",
        tmp_path / "engine": "is the warehouse engine's directory",
        tmp_path / "a-file": "is not a directory",
    }
    for target, message in refused.items():
        with pytest.raises(BackupError, match=message):
            check_target(installation, target)
    assert check_target(installation, data_dir / "backups" / "new") == data_dir / "backups" / "new"
    assert check_target(installation, tmp_path / "elsewhere" / "b") == tmp_path / "elsewhere" / "b"
    assert not (data_dir / "backups" / "new").exists() and not (tmp_path / "elsewhere").exists()


def test_a_claimed_target_discards_only_what_it_made(installation, tmp_path: Path) -> None:
    claimed = claim_target(installation, tmp_path / "x" / "y" / "b")
    assert claimed.created == [tmp_path / "x", tmp_path / "x" / "y", tmp_path / "x" / "y" / "b"]
    assert stat.S_IMODE(claimed.path.stat().st_mode) == 0o700
    (claimed.entry("warehouse") / "data").mkdir(parents=True)
    claimed.entry("control.db").write_bytes(b"copy")
    (claimed.path / "control.db.sealed").write_bytes(b"sealed copy")
    claimed.discard()
    assert not (tmp_path / "x").exists()

    kept = tmp_path / "operators"
    kept.mkdir()
    os.chmod(kept, 0o750)
    claimed = claim_target(installation, kept)
    assert claimed.created == [] and stat.S_IMODE(kept.stat().st_mode) == 0o700
    claimed.entry("manifest.json").write_text("{}")
    (kept / "foreign").write_text("someone else's")
    (kept / "warehouse").symlink_to(installation.data_dir)  # a link where the run's name was: unlinked only
    claimed.entry("warehouse")
    claimed.discard()
    assert sorted(p.name for p in kept.iterdir()) == ["foreign"]
    assert stat.S_IMODE(kept.stat().st_mode) == 0o750
    assert (installation.data_dir / "control.db").read_bytes() == b"live"


def test_make_private_follows_no_link(installation, tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "warehouse").mkdir(parents=True)
    (root / "warehouse" / "part.bin").write_bytes(b"x")
    os.chmod(root / "warehouse" / "part.bin", 0o644)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the backup's")
    os.chmod(outside, 0o644)
    (root / "link").symlink_to(outside)
    make_private(root)
    assert stat.S_IMODE((root / "warehouse" / "part.bin").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "warehouse").stat().st_mode) == 0o700
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
