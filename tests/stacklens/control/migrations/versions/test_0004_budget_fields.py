"""Revision 0004: a budget's statistic, window and minimum samples."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {"budgets": {"statistic", "window_days", "min_samples"}}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0004", "0003", ADDED)
