"""Revision 0005: issue-tracker connections and the issues' external links."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "tracker_connections": {"org_id", "index:ix_tracker_connections_org_id"},
    "external_links": {
        "project_id",
        "issue_id",
        "connection_id",
        "index:ix_external_links_issue",
        "index:ix_external_links_connection_id",
    },
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0005", "0004", ADDED)
