"""Sealed files: a round trip gives the bytes back; a wrong passphrase, a changed byte, a file cut short or a
dropped last chunk are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stacklens.operations import sealing
from stacklens.operations.sealing import SealError


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sealing, "CHUNK", 1000)  # several chunks from a few KiB


def test_a_tree_sealed_and_opened_is_the_same_bytes(tmp_path: Path) -> None:
    root = tmp_path / "backup"
    (root / "warehouse").mkdir(parents=True)
    files = {"control.db": os.urandom(4500), "warehouse/data.bin": os.urandom(3000), "empty": b""}
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "warehouse" / ".backup").write_text("<index/>")
    assert sealing.seal_tree(root, "passphrase-one") == 3
    assert not (root / "control.db").exists() and (root / "control.db.sealed").stat().st_mode & 0o777 == 0o600
    assert (root / "warehouse" / ".backup").read_text() == "<index/>"  # the index stays readable
    sealing.open_tree(root, "passphrase-one", tmp_path / "opened")
    for name, data in files.items():
        assert (tmp_path / "opened" / name).read_bytes() == data
    with pytest.raises(SealError, match="wrong passphrase"):
        sealing.open_file(root / "control.db.sealed", "passphrase-two", tmp_path / "x")


def test_changed_or_cut_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(os.urandom(2500))
    sealed = sealing.seal_file(path, "passphrase-one")
    data = sealed.read_bytes()
    changed = bytearray(data)
    changed[60] ^= 1
    for name, body in {
        "changed": bytes(changed),
        "cut": data[:-10],
        "last chunk dropped": data[: 21 + 2 * (4 + 12 + 1000 + 16)],
        "not sealed": b"plain text",
    }.items():
        bad = tmp_path / f"{name}.sealed"
        bad.write_bytes(body)
        with pytest.raises(SealError):
            sealing.open_file(bad, "passphrase-one", tmp_path / "out")
