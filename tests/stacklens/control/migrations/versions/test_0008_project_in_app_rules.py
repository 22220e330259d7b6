"""Revision 0008: a project's in-app frame rules."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"projects": {"in_app_include", "in_app_exclude"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0008", "0007", ADDED)
