"""The insert-time counters against the stored events after a landing cut off between the events and their
views: what is found short, what is added back, what is left for later, what is never touched."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from stacklens.issues.counters import COUNTED_TABLES, IN_FLIGHT_LIMIT, CounterRepair, repair_counters
from stacklens.settings import Settings
from tests.pipelines.counter_figures import differences
from tests.stacklens.issues.crashed_landing import (
    PROJECT,
    event_lines,
    land,
    land_with_views_lost,
    transaction_lines,
    views_of,
)

COUNTED = {t.name for t in COUNTED_TABLES}


def run(client: Client, limit: timedelta = IN_FLIGHT_LIMIT, arrived: datetime | None = None) -> CounterRepair:
    now = datetime.now(UTC)
    return repair_counters(
        client, now - timedelta(days=2), now, arrived=arrived or now, in_flight_limit=limit
    )


def missing(report: CounterRepair) -> dict[str, int]:
    return {t.table: t.missing for t in report.tables}


def test_a_resent_batch_whose_views_were_lost_is_counted_again(settings: Settings, warehouse: Client) -> None:
    assert land(settings, event_lines(30), "batch-a").accepted == 30
    lost = event_lines(20, start=30)
    land_with_views_lost(settings, warehouse, lost, "batch-b")
    resent = land(settings, lost, "batch-b")
    # What the shipper is told when it resends after the crash: every event is already stored.
    assert (resent.accepted, resent.duplicates) == (0, 20)
    short = differences(warehouse, PROJECT, marts=False)
    assert COUNTED | {"issue_rollup", "raw_arrival_hours"} <= set(short), short

    report = run(warehouse)

    assert [(a.source, a.batch_id, a.rows) for a in report.dead] == [("events", "batch-b", 20)]
    assert report.in_flight == [] and report.resume_from is None
    # Every lost event is found missing in every counted table (each event carries one tag pair)...
    assert missing(report) == dict.fromkeys(COUNTED, 20)
    assert all(t.short_keys > 0 and t.excess == 0 and t.in_flight == 0 for t in report.tables), report.tables
    # ...and added back: every figure equals the events again, with nothing left over.
    assert report.remaining == 0
    assert differences(warehouse, PROJECT, marts=False) == {}

    # Handled once: the next run (which re-reads the last seconds) neither finds nor feeds it again.
    assert warehouse.query("SELECT batch_id, rows FROM event_counter_repairs").result_rows == [
        ("batch-b", 20)
    ]
    again = run(warehouse)
    assert again.dead == [] and again.tables == []
    assert differences(warehouse, PROJECT, marts=False) == {}, "a second run counted something twice"


def test_only_the_views_that_lost_their_block_are_short(settings: Settings, warehouse: Client) -> None:
    land(settings, event_lines(30), "batch-a")
    lost = event_lines(20, start=30)
    land_with_views_lost(
        settings, warehouse, lost, "batch-b", ["issue_live_counters_mv", "release_error_counts_mv"]
    )
    land(settings, lost, "batch-b")

    report = run(warehouse)

    assert missing(report) == {
        **dict.fromkeys(COUNTED, 0),
        "issue_live_counters": 20,
        "release_error_counts": 20,
    }
    assert differences(warehouse, PROJECT, marts=False) == {}


def test_an_attempt_still_landing_is_left_until_it_is_dead(settings: Settings, warehouse: Client) -> None:
    land(settings, event_lines(30), "batch-a")
    land_with_views_lost(settings, warehouse, event_lines(10, start=30), "batch-b")  # no resend (yet)

    waiting = run(warehouse)

    # Received a moment ago, without a record: it may still be landing, its views' blocks on their way.
    assert waiting.dead == [] and [a.batch_id for a in waiting.in_flight] == ["batch-b"]
    assert waiting.tables == [] and waiting.resume_from is not None
    assert waiting.resume_from < waiting.in_flight[0].received_at  # the next run reads it again
    assert "issue_live_counters" in differences(warehouse, PROJECT, marts=False)

    # Once older than the in-flight limit (here: at once) no landing can still be on its way: dead.
    report = run(warehouse, limit=timedelta(0))
    assert [a.batch_id for a in report.dead] == ["batch-b"]
    assert missing(report) == dict.fromkeys(COUNTED, 10)
    assert differences(warehouse, PROJECT, marts=False) == {}


def test_a_key_with_rows_still_landing_is_compared_next_run(settings: Settings, warehouse: Client) -> None:
    land(settings, event_lines(30), "batch-a")
    lost = event_lines(12, start=30)
    land_with_views_lost(settings, warehouse, lost, "batch-b")
    land(settings, lost, "batch-b")  # resent: batch-b's first attempt is dead
    land_with_views_lost(
        settings, warehouse, event_lines(12, start=42), "batch-c"
    )  # landing now (same issues)

    report = run(warehouse)

    assert [a.batch_id for a in report.dead] == ["batch-b"]
    assert [a.batch_id for a in report.in_flight] == ["batch-c"]
    live = next(t for t in report.tables if t.table == "issue_live_counters")
    # batch-c's rows may have view blocks on the way: its issues are not repaired from a moving count.
    assert live.in_flight == live.keys and live.missing == 0
    assert report.resume_from is not None and report.resume_from < report.dead[0].received_at

    later = run(warehouse, limit=timedelta(0))
    assert {a.batch_id for a in later.dead} == {"batch-b", "batch-c"}
    assert missing(later)["issue_live_counters"] == 24
    assert differences(warehouse, PROJECT, marts=False) == {}


def test_finished_batches_are_never_compared(settings: Settings, warehouse: Client) -> None:
    land(settings, event_lines(30), "batch-a")
    land(settings, event_lines(30, start=30), None)  # no Idempotency-Key: a batch id of its own, recorded

    report = run(warehouse, limit=timedelta(0))

    assert report.dead == [] and report.in_flight == [] and report.tables == []
    assert report.resume_from is None


def test_a_counter_above_the_events_is_reported_never_subtracted(
    settings: Settings, warehouse: Client
) -> None:
    land(settings, event_lines(30), "batch-a")
    lost = event_lines(20, start=30)
    land_with_views_lost(settings, warehouse, lost, "batch-b", ["issue_totals_daily_mv"])
    land(settings, lost, "batch-b")
    issue = warehouse.query("SELECT any(issue_id) FROM events WHERE batch_id = 'batch-b'").result_rows[0][0]
    # What the retention leaves behind: the counter still counts 5 events no longer stored.
    warehouse.command(
        "INSERT INTO issue_live_counters (org_id, project_id, issue_id, events) VALUES (5, {p:UInt64}, {i:UInt64}, 5)",
        parameters={"p": PROJECT, "i": issue},
    )

    report = run(warehouse)

    live = next(t for t in report.tables if t.table == "issue_live_counters")
    assert (live.missing, live.excess) == (0, 5)
    assert missing(report)["issue_totals_daily"] == 20 and report.remaining == 0
    counted = warehouse.query(
        "SELECT sum(events) FROM issue_live_counters WHERE issue_id = {i:UInt64}", parameters={"i": issue}
    ).result_rows[0][0]
    stored = warehouse.query(
        "SELECT count() FROM events WHERE issue_id = {i:UInt64}", parameters={"i": issue}
    ).result_rows[0][0]
    assert counted == stored + 5


def test_the_hours_of_lost_transactions_are_marked_arrived(settings: Settings, warehouse: Client) -> None:
    body = transaction_lines(3, time.time())
    land_with_views_lost(settings, warehouse, body, "batch-t", views_of(warehouse, "transactions"))
    land(settings, body, "batch-t")
    assert warehouse.query(
        "SELECT count() FROM raw_arrival_hours WHERE source = 'transactions'"
    ).result_rows == [(0,)]
    arrived = datetime.now(UTC).replace(microsecond=0)

    report = run(warehouse, arrived=arrived)

    assert [(a.source, a.rows) for a in report.dead] == [("transactions", 3)]
    assert report.tables == []  # no events: no counter to compare
    hours = warehouse.query(
        "SELECT hour, max(received) FROM raw_arrival_hours WHERE source = 'transactions' GROUP BY hour ORDER BY hour"
    ).result_rows
    stored = warehouse.query(
        "SELECT DISTINCT toStartOfHour(timestamp) AS h FROM transactions ORDER BY h"
    ).result_rows
    assert [h for h, _ in hours] == [h for (h,) in stored] and all(
        r == arrived.replace(tzinfo=None) for _, r in hours
    )
    assert warehouse.query(
        "SELECT max(received) FROM raw_received WHERE source = 'transactions'"
    ).result_rows == [(arrived.replace(tzinfo=None),)]


def test_an_attempt_handled_earlier_leaves_the_next_one_comparable(
    settings: Settings, warehouse: Client
) -> None:
    land(settings, event_lines(30), "batch-a")
    for key, start in (("batch-b", 30), ("batch-c", 42)):
        lost = event_lines(12, start=start)
        land_with_views_lost(settings, warehouse, lost, key)
        land(settings, lost, key)
        report = run(warehouse)
        # batch-b, handled by the first run, is neither found again nor taken for a landing by the second.
        assert [a.batch_id for a in report.dead] == [key] and report.in_flight == []
        assert all(t.in_flight == 0 for t in report.tables) and report.resume_from is None
        assert missing(report)["issue_live_counters"] == 12
    assert differences(warehouse, PROJECT, marts=False) == {}
