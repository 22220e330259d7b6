"""The storage report: bytes per table from the engine, rows and estimated bytes per project, the oldest
event, the growth of the last 7 days and days until the disk is full; and its lines for people."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stacklens.operations.storage import measure_storage
from stacklens.operations.storage_lines import storage_lines
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise RuntimeError("stored")


def test_the_report_names_tables_projects_and_the_rate(stores, org_factory) -> None:
    big, small = org_factory("Big", "Shop"), org_factory("Small", "Blog")
    old = sdk_event(_fail)
    old["timestamp"] = (datetime.now(UTC) - timedelta(days=20)).isoformat()
    land(big["org_id"], big["project_id"], [old] + [sdk_event(_fail) for _ in range(5)])
    land(small["org_id"], small["project_id"], [sdk_event(_fail)])
    report = measure_storage(stores)
    events = next(t for t in report.tables if t.table == "events")
    assert events.rows == 7 and events.bytes_on_disk > 0
    assert [(p.name, p.rows) for p in report.projects] == [("big/shop", 6), ("small/blog", 1)]
    assert report.projects[0].bytes_estimated > report.projects[1].bytes_estimated > 0
    assert report.oldest_event is not None and report.oldest_event < datetime.now(UTC) - timedelta(days=19)
    assert report.bytes_per_day > 0 and report.free_bytes > 0
    assert report.days_until_full == report.free_bytes / report.bytes_per_day
    text = "\n".join(storage_lines(report.as_json()))
    assert "big/shop" in text and "7 days' rate" in text and " KB" not in text


def test_an_empty_installation_says_so(stores) -> None:
    report = measure_storage(stores)
    assert report.projects == [] and report.oldest_event is None and report.days_until_full is None
    lines = storage_lines(report.as_json())
    assert "(no raw data yet)" in lines and any("no growth measured" in line for line in lines)
