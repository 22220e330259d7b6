"""The front door's drainer (stacklens/ingest/front_door/drain.py): envelope rows checked by the drain, and
the spool completed by the next start, each row once."""

from __future__ import annotations

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest import writer
from stacklens.ingest.front_door import FrontDoor, doors, drain, settle_front_doors
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
    monkeypatch.setattr(
        stopped.drainer, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed"))
    )
    monkeypatch.setitem(doors._doors, doors._door_key(settings), stopped)
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
    monkeypatch.setattr(
        stopped.drainer, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed"))
    )
    monkeypatch.setitem(doors._doors, doors._door_key(settings), stopped)
    fresh = error_line()
    assert land(settings, fresh, figures=False).accepted == 1
    assert land(settings, stored_before, figures=False).accepted == 1  # its answer does not look it up
    stopped.close(timeout=0)
    assert count(warehouse, "events") == 1
    FrontDoor(settings).recover()
    assert count(warehouse, "events") == 2
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []


def test_a_large_drain_gives_the_engines_memory_back_and_a_small_one_does_not(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backlog's or a history's drain purges the engine's allocator once it is done, through the drains'
    client; the live traffic's small drains leave that to the periodic purge (their CPU per event)."""
    purged: list[Client] = []
    monkeypatch.setattr(drain, "give_back_engine_memory", purged.append)
    monkeypatch.setattr(drain, "PURGE_AFTER_ROWS", 20)
    assert land(settings, b"\n".join(error_line() for _ in range(3))).accepted == 3
    assert settle_front_doors()
    assert purged == []
    assert land(settings, b"\n".join(error_line() for _ in range(30))).accepted == 30
    assert settle_front_doors()
    assert count(warehouse, "events") == 33
    assert purged == [doors.front_door(settings).state.inserter]
