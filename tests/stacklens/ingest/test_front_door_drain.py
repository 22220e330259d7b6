"""The front door's drainer (stacklens/ingest/front_door_drain.py): envelope rows checked by the drain, and
the spool completed by the next start, each row once."""

from __future__ import annotations

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest import front_door as front_door_module
from stacklens.ingest import writer
from stacklens.ingest.front_door import FrontDoor, front_door, settle_front_doors
from stacklens.ingest.front_door_drain import (
    MAX_GATHER_SECONDS,
    MIN_GATHER_SECONDS,
    VISIBLE_WITHIN_SECONDS,
    gather_seconds,
)
from stacklens.settings import Settings
from tests.stacklens.ingest.front_door_seed import (
    count,
    error_line,
    land,
    transaction_line,
)


def test_envelope_rows_are_checked_by_the_drain(settings: Settings, warehouse: Client) -> None:
    """An envelope's rows skip the warehouse look-up at answer time; the drain drops those already stored."""
    line = error_line()
    assert land(settings, line).accepted == 1
    assert settle_front_doors()
    resent = land(settings, line, figures=False)  # its answer is its event id: no look-up before it
    assert resent.accepted == 1
    assert settle_front_doors()
    assert count(warehouse, "events") == 1


def test_the_spool_is_completed_by_the_next_start(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answered rows whose process stopped before draining them land at the next start, exactly once; a drain
    cut off between its inserts is completed from its journal without doubling what it had inserted."""
    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed")))
    monkeypatch.setitem(front_door_module._doors, front_door_module._door_key(settings), stopped)
    lines = [transaction_line(), error_line(), transaction_line(spans=5)]
    answered = land(settings, b"\n".join(lines))
    assert answered.accepted == 3
    journals = list((settings.data_dir / "front_door").glob("*.flush"))
    assert len(journals) == 1
    assert count(warehouse, "events") == 0
    stopped.close(timeout=0)

    # A second process state finds the journal; its drain is cut off after its first insert (the spans).
    restarted = FrontDoor(settings)
    inserted: list[str] = []
    real_insert = writer.insert_encoded

    def cut_off(client: Client, table: str, columns: list[str], rows: list[bytes], token: str) -> None:
        if inserted:
            raise RuntimeError("killed between two inserts")
        inserted.append(table)
        real_insert(client, table, columns, rows, token)

    monkeypatch.setattr(writer, "insert_encoded", cut_off)
    with pytest.raises(RuntimeError):
        restarted.recover()
    monkeypatch.setattr(writer, "insert_encoded", real_insert)
    assert inserted == ["spans"]
    assert count(warehouse, "spans") == 8 and count(warehouse, "transactions") == 0

    FrontDoor(settings).recover()
    assert (count(warehouse, "spans"), count(warehouse, "transactions"), count(warehouse, "events")) == (
        8,
        2,
        1,
    )
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []
    FrontDoor(settings).recover()  # nothing left: nothing lands twice
    assert (count(warehouse, "spans"), count(warehouse, "transactions")) == (8, 2)


def test_envelope_rows_left_in_the_spool_land_at_the_next_start_once(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An envelope's rows are spooled unchecked; the next start looks them up and lands only the new ones."""
    stored_before = error_line()
    assert land(settings, stored_before).accepted == 1
    assert settle_front_doors()
    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed")))
    monkeypatch.setitem(front_door_module._doors, front_door_module._door_key(settings), stopped)
    fresh = error_line()
    assert land(settings, fresh, figures=False).accepted == 1
    assert land(settings, stored_before, figures=False).accepted == 1  # its answer does not look it up
    stopped.close(timeout=0)
    assert count(warehouse, "events") == 1
    FrontDoor(settings).recover()
    assert count(warehouse, "events") == 2
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []


def test_the_gather_leaves_the_next_insert_its_time_inside_the_second() -> None:
    """A drain gathers what the visibility second leaves after the last insert (with half again to spare):
    longer after fast inserts (fewer drains, each paying every view once), shorter after slow ones, within
    the bounds; gather and expected insert never pass the second's share where the bounds allow."""
    assert gather_seconds(0.0) == MAX_GATHER_SECONDS
    assert gather_seconds(10.0) == MIN_GATHER_SECONDS
    fast, slow = gather_seconds(0.1), gather_seconds(0.3)
    assert fast > slow
    for last in (0.05, 0.1, 0.2, 0.3, 0.4):
        gathered = gather_seconds(last)
        assert MIN_GATHER_SECONDS <= gathered <= MAX_GATHER_SECONDS
        if gathered > MIN_GATHER_SECONDS:
            assert gathered + 1.5 * last <= VISIBLE_WITHIN_SECONDS + 1e-9


def test_a_drain_records_how_long_it_took_for_the_next_gather(settings: Settings, warehouse: Client) -> None:
    """The next gather is judged by the drain this door just made, as its status reports it."""
    door = front_door(settings)
    assert land(settings, error_line()).accepted == 1
    assert settle_front_doors()
    assert count(warehouse, "events") == 1
    last = door._drains[-1]
    assert door._last_drain_seconds == last[2] > 0
