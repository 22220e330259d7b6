"""Revision 0006: a project's replay setting."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"projects": {"replay_enabled"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0006", "0005", ADDED)
