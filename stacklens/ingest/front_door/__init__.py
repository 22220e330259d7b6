"""The front door: requests' rows spooled together and answered, then landed many requests at a time.

Every entrance (`/api/ingest`, the Sentry envelope and store endpoints, OTLP exports, the tunnel's lines
through the shipper) prepares its rows in the request and hands them here. Each insert into `events` runs
every materialized view behind it (100–200 ms on the embedded engine, whatever its size), so a one-event
request that paid its own insert could not go faster than that; here the cost is shared.

A door (:class:`~.door.FrontDoor`, one per process and warehouse: :func:`~.doors.front_door`) is three parts
over one state (:class:`~.state.DoorState`: the queue, the spool and the counters behind one condition):

- the request's side (:mod:`.door`) queues a request (``submit``; 503 when too many rows wait) and waits
  until its rows are spooled (``land``);
- the *acceptor* (:mod:`.accept`) takes every request waiting as one group (a group commit: a lone request
  goes at once, a busy door groups many; the server's event loop accepts the requests of one turn itself
  when nothing of the group would block, ``accept_here``), answers replays (`Idempotency-Key`; a keyed batch
  that is no replay spends its quotas here, so a resend costs none) and drops duplicates with one look-up for
  the group (rows spooled but not yet landed are checked in memory first, then the warehouse, for the keys
  :mod:`~stacklens.ingest.stored_key_index` may hold; an envelope's rows are checked by the drain instead,
  see :class:`~stacklens.ingest.landing.Landing`), writes the group to its journal
  (:mod:`stacklens.ingest.flush_journal`) and answers its requests;
- the *drainer* (:mod:`.drain`) takes every group spooled, at most every
  :data:`~.drain.DRAIN_INTERVAL_SECONDS` (sooner when many rows or a reader wait), and inserts them as one
  block per table and partition with tokens of the drain (spans before their transactions: the transaction
  row is what the duplicate check finds; batch records last), then removes the journals. A journal found
  again (a failed drain, the next start after a kill) is inserted whole with the same tokens: the engine
  lands exactly the blocks that were missing.

A request is answered once its rows are in the spool (docs/architecture.md §5: durable, drained exactly once)
— and, when the door is idle and quiet (a lone request: none other waiting, no drain running, nothing
spooled, nothing accepted in the last second), only once its group has landed: an occasional request waits
one insert (~0.1 s) and its event is visible everywhere at its 200, while under load, or from a sender
posting in sequence, requests are answered from the spool and their rows land in the next drain, within a
second. Reads in this process wait for rows answered before them (:func:`~.doors.settle_spooled`), so a user
always reads their own writes.
"""

from __future__ import annotations

from stacklens.ingest.front_door.door import (
    MAX_ROWS_WAITING,
    RATE_WINDOW_SECONDS,
    WAIT_SECONDS,
    FrontDoor,
    FrontDoorStatus,
    QueueFull,
)
from stacklens.ingest.front_door.doors import (
    close_front_doors,
    door_status,
    drains_held,
    front_door,
    front_door_status,
    landing_held,
    recover_and_index,
    settle_front_doors,
    settle_spooled,
)

__all__ = [
    "MAX_ROWS_WAITING",
    "RATE_WINDOW_SECONDS",
    "WAIT_SECONDS",
    "FrontDoor",
    "FrontDoorStatus",
    "QueueFull",
    "close_front_doors",
    "door_status",
    "drains_held",
    "front_door",
    "front_door_status",
    "landing_held",
    "recover_and_index",
    "settle_front_doors",
    "settle_spooled",
]
