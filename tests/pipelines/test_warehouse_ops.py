"""What the assets keep in the warehouse (watermarks, what arrived) and the ranges they run over."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pipelines import warehouse_ops as ops
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

H = datetime(2026, 11, 20, 10, tzinfo=UTC)


def test_contiguous_hours_and_days_become_half_open_ranges() -> None:
    hours = [H + timedelta(hours=2), H, H + timedelta(hours=1), H + timedelta(hours=5), H]
    assert ops.hour_ranges(hours) == [
        (H, H + timedelta(hours=3)),
        (H + timedelta(hours=5), H + timedelta(hours=6)),
    ]
    days = [date(2026, 11, 3), date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 9)]
    assert ops.day_ranges(days) == [
        (date(2026, 11, 1), date(2026, 11, 4)),
        (date(2026, 11, 9), date(2026, 11, 10)),
    ]
    assert ops.hour_ranges([]) == [] and ops.day_ranges([]) == []
    assert ops.day_bounds(date(2026, 11, 1), date(2026, 11, 4)) == {
        "start": datetime(2026, 11, 1, tzinfo=UTC),
        "end": datetime(2026, 11, 4, tzinfo=UTC),
    }
    assert ops.asset_tag(ops.DAYS_TAG, "pageload_facts") == "stacklens/days.pageload_facts"


def test_watermarks_and_what_arrived(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    assert ops.get_watermarks(client, ["issues", "related_issues"]) == {
        "issues": ops.EPOCH,
        "related_issues": ops.EPOCH,
    }
    assert ops.read_since(client, ["issues"]) == ops.EPOCH and ops.max_received(client) is None
    ops.set_watermark(client, "issues", H)
    ops.set_watermark(client, "issues", H + timedelta(minutes=5))  # the latest write wins
    assert ops.get_watermarks(client, ["issues"]) == {"issues": H + timedelta(minutes=5)}
    # A run over several assets starts at the oldest watermark, less the overlap.
    assert ops.read_since(client, ["issues", "related_issues"]) == ops.EPOCH
    ops.set_watermark(client, "related_issues", H)
    assert ops.read_since(client, ["issues", "related_issues"]) == H - ops.OVERLAP

    client.insert("raw_received", [["events", H + timedelta(hours=1)]], column_names=["source", "received"])
    client.insert(
        "raw_arrival_hours",
        [
            ["events", 1, H - timedelta(days=1), H + timedelta(hours=1)],
            ["spans", 1, H, H + timedelta(hours=1)],
        ],
        column_names=["source", "project_id", "hour", "received"],
    )
    assert ops.max_received(client) == H + timedelta(hours=1)
    assert ops.dirty_days(client, ["events"], H) == [date(2026, 11, 19)]
    assert ops.dirty_days(client, ["events"], H + timedelta(hours=2)) == []
    assert ops.dirty_hours(client, ["events", "spans"], H, H - timedelta(days=2), H + timedelta(hours=1)) == [
        H - timedelta(days=1),
        H,
    ]


def test_each_pipeline_statement_gives_the_engines_memory_back(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's statements allocate on whichever engine thread takes them: each gives back what it freed
    through its own client once it ends (stacklens.warehouse.client.give_back_engine_memory)."""
    apply_migrations(settings)
    client = get_warehouse(settings)
    purged: list[object] = []
    monkeypatch.setattr(ops, "give_back_engine_memory", purged.append)
    ops.run_insert(client, "issue_users_full", {})
    assert purged == [client]
