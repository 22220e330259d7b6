"""The checks a restore makes on a backup's names, links and engine index, and the manifest's signature, on
real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stacklens.operations.backup_contents import (
    check_engine_index,
    check_tree,
    copy_no_follow,
    inventory,
    plain_name,
    signature,
    signature_holds,
)
from stacklens.operations.backup_target import BackupError


def test_only_plain_relative_names_pass() -> None:
    for name in ("control.db", "dagster/history/runs.db", "warehouse/.backup"):
        assert plain_name(name).as_posix() == name
    bad: object
    for bad in ("../x", "a/../../x", "/etc/hostname", "a//b", "./a", "", "a\\..\\b", "a\0b", 3, None):
        with pytest.raises(BackupError, match="refused"):
            plain_name(bad)


def test_the_signature_covers_every_field_and_needs_the_secret() -> None:
    manifest = {"format": 2, "database": "stacklens", "files": {"control.db": {"size": 4}}}
    manifest["signature"] = signature(manifest, b"the-installations-secret")
    assert signature_holds(manifest, b"the-installations-secret")
    assert not signature_holds(manifest, b"another-secret-entirely")
    for field, value in (("database", "other"), ("files", {}), ("extra", 1)):
        changed = {**manifest, field: value}
        assert not signature_holds(changed, b"the-installations-secret"), field
    assert not signature_holds(
        {k: v for k, v in manifest.items() if k != "signature"}, b"the-installations-secret"
    )


def test_a_tree_is_checked_against_its_list(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "warehouse" / "data" / "db").mkdir(parents=True)
    (root / "warehouse" / "data" / "db" / "part.bin").write_bytes(b"part")
    (root / "warehouse" / ".backup").write_text("<config><name>data/db/part.bin</name></config>")
    (root / "control.db").write_bytes(b"control")
    (root / "manifest.json").write_text("{}")
    listed = inventory(root, frozenset({"manifest.json"}))
    assert set(listed) == {"warehouse/data/db/part.bin", "warehouse/.backup", "control.db"}
    assert "sha256" not in listed["warehouse/data/db/part.bin"] and "sha256" in listed["control.db"]
    assert check_tree(root, listed, frozenset({"manifest.json"})) == []
    check_engine_index(root / "warehouse" / ".backup")

    (root / "left.txt").write_text("not listed")
    assert check_tree(root, listed, frozenset({"manifest.json"})) == ["left.txt"]
    (root / "control.db").write_bytes(b"CONTROL")
    with pytest.raises(BackupError, match="not the file its manifest records"):
        check_tree(root, listed, frozenset({"manifest.json"}))
    (root / "control.db").unlink()
    with pytest.raises(BackupError, match=r"lacks control\.db"):
        check_tree(root, listed, frozenset({"manifest.json"}))
    os.mkfifo(root / "control.db")
    with pytest.raises(BackupError, match="not a regular file or directory"):
        check_tree(root, listed, frozenset({"manifest.json"}))
    (root / "control.db").unlink()
    (root / "warehouse" / "data" / "linked").symlink_to(tmp_path)
    with pytest.raises(BackupError, match="linked is a symbolic link"):
        check_tree(root, None, frozenset({"manifest.json"}))

    for index in (
        b"<config><name>/etc/passwd</name></config>",
        b"<config><data_file_name>data/../../x</data_file_name></config>",
        b"<config><name>&#46;&#46;/x</name></config>",
        b'<!DOCTYPE x [<!ENTITY a "..">]><config><name>&a;/x</name></config>',
    ):
        (root / "warehouse" / ".backup").write_bytes(index)
        with pytest.raises(BackupError, match="refused"):
            check_engine_index(root / "warehouse" / ".backup")


def test_copies_follow_no_link(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("outside")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(BackupError, match="symbolic link"):
        copy_no_follow(tmp_path / "link", tmp_path / "copy")
    (tmp_path / "source").write_text("backup's")
    (tmp_path / "target-link").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError, match="symbolic links"):
        copy_no_follow(tmp_path / "source", tmp_path / "target-link")
    assert (tmp_path / "secret").read_text() == "outside"
    copy_no_follow(tmp_path / "source", tmp_path / "d" / "copy")
    assert (tmp_path / "d" / "copy").read_text() == "backup's" and (
        tmp_path / "d" / "copy"
    ).stat().st_mode & 0o777 == 0o600
