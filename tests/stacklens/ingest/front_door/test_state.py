"""A front door's shared state (stacklens/ingest/front_door/state.py): its journal folder in the data
directory, an empty queue and spool, and two clients of the one warehouse — the shared one for look-ups and
one of its own for the drains' inserts."""

from __future__ import annotations

import stat

from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door.state import RECENT_KEPT, DoorState
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse


def test_a_new_door_state_is_empty_and_journals_in_the_data_directory(settings: Settings) -> None:
    state = DoorState(settings)
    folder = settings.data_dir / "front_door"
    assert state.journal.folder == folder and folder.is_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # the journals hold events: owner only
    assert not state.waiting and not state.spooled and state.rows_waiting == state.rows_spooled == 0
    assert (state.spooled_seq, state.landed_seq, state.holds) == (0, 0, 0)


def test_look_ups_and_inserts_use_two_clients_of_one_warehouse(settings: Settings, warehouse: Client) -> None:
    state = DoorState(settings)
    assert state.client is get_warehouse(settings)
    assert state.inserter is state.inserter and state.inserter is not state.client
    database = settings.warehouse_database
    for client in (state.client, state.inserter):
        assert client.query("SELECT currentDatabase()").result_rows == [(database,)]
    # What the drains' client inserts, the look-ups' client reads.
    state.inserter.command("CREATE TABLE door_state_probe (n UInt8) ENGINE = Memory")
    state.inserter.command("INSERT INTO door_state_probe VALUES (7)")
    assert state.client.query("SELECT n FROM door_state_probe").result_rows == [(7,)]


def test_the_recent_figures_of_a_door_nobody_reads_stay_bounded(settings: Settings) -> None:
    """The status trims its figures when read; a door whose status is never read keeps the newest
    RECENT_KEPT of them, not one per accept group for ever."""
    state = DoorState(settings)
    for n in range(RECENT_KEPT + 10):
        state.accepts.append((float(n), 1, 0.001, 0.0))
        state.drains.append((float(n), 1, 0.01))
    assert len(state.accepts) == len(state.drains) == RECENT_KEPT
    assert state.accepts[-1][0] == RECENT_KEPT + 9 and state.accepts[0][0] == 10
