"""Revision 0007: each item's last error and next retry (tracker links, alert rules, budgets)."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "external_links": {"failures", "retry_at"},
    "alert_rules": {"last_error", "failures", "retry_at"},
    "budgets": {"last_error", "failures", "retry_at"},
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0007", "0006", ADDED)
