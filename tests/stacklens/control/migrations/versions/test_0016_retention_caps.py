"""Revision 0016: a project's event caps (most error events kept per issue and in the project)."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"projects": {"max_events_per_issue", "max_events_per_project"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0016", "0015", ADDED)
