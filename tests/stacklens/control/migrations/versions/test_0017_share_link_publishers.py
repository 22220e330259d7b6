"""Revision 0017: who may publish public share links, an organization's setting."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"organizations": {"share_links_by"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0017", "0016", ADDED)
