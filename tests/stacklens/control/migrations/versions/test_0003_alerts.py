"""Revision 0003: the alerting tables: channels, rules and their states and evaluations, notifications,
deliveries."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "alert_channels": {"org_id", "index:ix_alert_channels_org_id"},
    "alert_deliveries": {"channel_id", "started_at", "index:ix_alert_deliveries_channel_time"},
    "alert_notifications": {"id"},
    "alert_rules": {"id"},
    "alert_evaluations": {"id"},
    "alert_rule_states": {"rule_id"},
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0003", "0002", ADDED)
