"""Revision 0009: explore's saved queries."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"saved_queries": {"org_id", "index:ix_saved_queries_org_id"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0009", "0008", ADDED)
