"""The process's front doors, one per warehouse (and data directory), and what the rest of the service asks
of them: the door of a settings, its recovery at start, its status, reading one's own writes, the holds of a
backup and a merge, and the shutdown that drains them all."""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from stacklens.ingest.front_door.door import FrontDoor, FrontDoorStatus
from stacklens.ingest.project_holds import ProjectHold
from stacklens.ingest.stored_key_index import load_owned_index
from stacklens.settings import Settings

_doors: dict[tuple[str, str, Path], FrontDoor] = {}
_doors_lock = threading.Lock()


def _door_key(settings: Settings) -> tuple[str, str, Path]:
    # The data directory stands for the spool under it: every request asks for its door, and joining the
    # spool's path each time was 1.5 % of a one-event envelope's time on the event loop.
    return (settings.resolved_warehouse_url, settings.warehouse_database, settings.data_dir)


def front_door(settings: Settings) -> FrontDoor:
    """The process's front door of ``settings``' warehouse, its spool under ``<data_dir>/front_door``."""
    key = _door_key(settings)
    with _doors_lock:
        door = _doors.get(key)
        if door is None:
            door = _doors[key] = FrontDoor(settings)
        return door


def recover_and_index(settings: Settings) -> None:
    """At start: land what a stopped process left in the spool, then index the stored keys if this process
    owns the warehouse (:mod:`stacklens.ingest.stored_key_index`: read after those rows landed)."""
    door = front_door(settings)
    door.recover()
    load_owned_index(settings, door.state.client)


def front_door_status() -> FrontDoorStatus | None:
    """The queue of this process's busiest front door (``None`` before the first request): a server has
    one."""
    with _doors_lock:
        doors = list(_doors.values())
    states = [door.status() for door in doors]
    return max(states, key=lambda s: (s["rows_waiting"], s["flushes_per_second"]), default=None)


def door_status(settings: Settings) -> FrontDoorStatus | None:
    """The queue of ``settings``' front door in this process (``None`` before its first request): what
    readiness and the service's watch read (a test process serves several installations; a server has one)."""
    with _doors_lock:
        door = _doors.get(_door_key(settings))
    return door.status() if door is not None else None


def close_front_doors(timeout: float = 30.0) -> None:
    """Drain and stop every front door of this process (server shutdown, the interpreter's exit)."""
    with _doors_lock:
        doors = list(_doors.values())
        _doors.clear()
    for door in doors:
        door.close(timeout)


atexit.register(close_front_doors)


def settle_spooled(settings: Settings) -> None:
    """Read your writes: wait until every row this process answered before now has landed in ``settings``'
    warehouse (the API's and the pages' warehouse dependency calls this; a no-op when nothing is spooled)."""
    with _doors_lock:
        door = _doors.get(_door_key(settings))
    if door is not None:
        door.settle_spooled()


def settle_front_doors(timeout: float = 30.0) -> bool:
    """Wait until every front door of this process has drained its spool (shutdown, tests)."""
    with _doors_lock:
        doors = list(_doors.values())
    return all(door.settle(timeout) for door in doors)


@contextlib.contextmanager
def drains_held(settings: Settings, timeout: float = 60.0) -> Iterator[int]:
    """:meth:`FrontDoor.drains_held` on ``settings``' front door in this process (made when it has none yet,
    so a request arriving during the hold is held too); yields the rows waiting after the cut-off."""
    with front_door(settings).drains_held(timeout) as waiting:
        yield waiting


@contextlib.contextmanager
def landing_held(settings: Settings, project_id: int, timeout: float = 60.0) -> Iterator[ProjectHold]:
    """:meth:`FrontDoor.landing_held` on ``settings``' front door in this process (made when it has none yet,
    so an event of the project arriving during the hold is held too)."""
    with front_door(settings).landing_held(project_id, timeout) as hold:
        yield hold
