"""The front door's drainer: every accept group spooled, inserted into the warehouse many at a time (one
block per table and partition, with tokens of the drain), then the journals removed; a journal found again (a
failed drain, the next start after a kill) is inserted whole with the same tokens. See
:mod:`stacklens.ingest.front_door`."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict, deque
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from stacklens.ingest import writer
from stacklens.ingest.flush_journal import Insert, sync_filesystem
from stacklens.ingest.front_door.state import DoorState, log
from stacklens.ingest.landing import (
    Blocks,
    Spooled,
    add_blocks,
    inserts_of,
    received_now,
)
from stacklens.ingest.project_holds import holds_events_of, take_held
from stacklens.warehouse.client import give_back_engine_memory

# Landed journals wait at most this long for the warehouse's sync that lets them go (Drainer.settle_retired).
RETIRE_SECONDS = 2.0
# Retirement is shared by a door's drainer and its recovery (and a drainer that ends while the next starts).
_retiring = threading.Lock()
# A flusher thread with nothing to do for this long ends (a new request starts another).
IDLE_SECONDS = 10.0
# A drain that failed (the warehouse down) is tried again after this long; its rows stay in the spool.
DRAIN_RETRY_SECONDS = 1.0
# A drain starts at most this often, unless DRAIN_NOW_ROWS rows wait or a reader waits (Drainer._take_drain):
# each drain pays every view behind `events` once (~110 ms of CPU for one row), and half a second keeps an
# answered event visible within a second (docs/decisions.md).
DRAIN_INTERVAL_SECONDS = 0.5
DRAIN_NOW_ROWS = 5_000
# A drain this large gives the engine's freed memory back when done: ~10 ms beside its second or more (a
# backlog's, a history's); the live traffic's small drains leave it to the periodic purge.
PURGE_AFTER_ROWS = 1_000


class Drainer:
    """The drainer's thread and its inserts, over a front door's ``state``."""

    def __init__(self, state: DoorState) -> None:
        self.state = state
        self.thread: threading.Thread | None = None  # the drainer's thread, while one runs
        # The events a drain kept back for a merge's hold (stacklens.ingest.project_holds), as a group of
        # their own: back into the spool after the drain, whether it landed or failed.
        self._held_back: Spooled | None = None
        # The drain being inserted, as it is tried again if it fails.
        self._in_flight: Spooled | None = None
        # Journals whose rows are inserted, removed at the next sync of the warehouse (see _retire), and when.
        self._retired: list[str] = []
        self._retired_at = 0.0
        self._last_drain_started = 0.0
        # The drainer waits out its gathering moment (see _take_drain), read and written under the condition.
        self._gathering = False

    def wake(self) -> None:
        """Groups were spooled (called holding the condition): start the drainer's thread if none runs, and
        wake it."""
        state = self.state
        if self.thread is None:
            self.thread = threading.Thread(target=self._drain_loop, name="front-door-drain", daemon=True)
            self.thread.start()
        elif self._gathering and not state.hurry and state.rows_spooled < DRAIN_NOW_ROWS:
            # A gathering drainer takes every group spooled when its moment ends: woken for each group, it
            # only waited again — a thread switch and a turn of the interpreter lock per request, for nothing.
            return
        state.condition.notify_all()

    # -- draining: the spooled rows into the warehouse, many accept groups at once -------------------------

    def _drain_loop(self) -> None:
        state = self.state
        while True:
            while (next_drain := self._take_drain()) is not None:
                self._land(*next_drain)
            # An idle or closing door keeps no landed journal; the thread ends only after this (a shutdown
            # waits for it), and goes on if rows were spooled meanwhile.
            self.settle_retired()
            with state.condition:
                if state.spooled and not (state.closing and state.drain_error):
                    continue
                self.thread = None
                state.condition.notify_all()
                return

    def _take_drain(self) -> tuple[list[Spooled], frozenset[int]] | None:
        """Wait for groups to drain, gather for a moment, and take them out of the spool; with the projects
        held at that moment. ``None`` when the door is idle for :data:`IDLE_SECONDS`, or closing after a drain
        failed (the rest stays in the spool for the next start)."""
        state = self.state
        with state.condition:
            while True:
                idle_until = time.monotonic() + IDLE_SECONDS
                while not state.spooled and not state.closing and time.monotonic() < idle_until:
                    state.condition.wait(max(0.0, idle_until - time.monotonic()))
                if not state.spooled or (state.closing and state.drain_error):
                    return None
                if state.holds and not state.closing:
                    # A backup holds the drains (drains_held): the rows stay in the spool, answered and
                    # durable.
                    state.condition.wait(0.05)
                    continue
                held = state.projects.held()
                if held and not self._ready(held):
                    # Only events a merge holds back (held even when closing: they land at the next start).
                    state.condition.wait(0.05)
                    continue
                # Gather for a moment after the last drain began: each drain pays every materialized view
                # once, so fewer, larger drains cost less per row; the wait stays well inside the second in
                # which an answered event must be visible.
                gather_until = self._last_drain_started + DRAIN_INTERVAL_SECONDS
                self._gathering = True
                try:
                    while (
                        not state.closing
                        and not state.hurry
                        and state.rows_spooled < DRAIN_NOW_ROWS
                        and time.monotonic() < gather_until
                    ):
                        state.condition.wait(max(0.0, gather_until - time.monotonic()))
                finally:
                    self._gathering = False
                held = state.projects.held()  # read again: a merge may have begun holding while gathering
                ready = self._ready(held)
                if not ready:
                    continue
                # A drain that failed goes again alone, under its own journal and tokens.
                taken = [ready[0]] if ready[0].attempted else ready
                if len(taken) == len(state.spooled):
                    state.spooled.clear()
                else:
                    gone = {id(group) for group in taken}
                    state.spooled = deque(group for group in state.spooled if id(group) not in gone)
                state.draining = True
                state.hurry = False
                return taken, held

    def _land(self, taken: list[Spooled], held: frozenset[int]) -> None:
        """Drain ``taken`` (out of the spool), then count it landed, or put it back to be tried again."""
        started = self._last_drain_started = time.monotonic()
        self._in_flight = None
        self._held_back = None
        try:
            self.drain(taken, held)
            error = ""
        except Exception as exc:  # noqa: BLE001 - kept and retried: the rows are safe in the spool
            error = str(exc).splitlines()[0][:300]
            log.warning("front door: draining %d spooled groups failed, retrying: %s", len(taken), error)
        state = self.state
        with state.condition:
            state.draining = False
            state.drain_error = error
            back, self._held_back = self._held_back, None
            if back is not None:
                # Counted in the queue and pending as it was (its rows were the taken groups'): on success
                # those groups are forgotten below, so its rows and keys are counted again here.
                state.spooled.appendleft(back)
                if not error:
                    state.rows_spooled += back.weight
            if error:
                # Tried again as the drain's own journal (its groups' journals are gone once it was
                # written), its rows already stored skipped: never under new tokens.
                retry = self._in_flight
                if retry is None:
                    state.spooled.extendleft(reversed([replace(g, attempted=True) for g in taken]))
                else:
                    state.spooled.appendleft(retry)
            else:
                self._forget(taken, back, started)
            state.condition.notify_all()
        # Requests held for their own landing are answered either way: their rows are in the spool, which
        # the next drain (or the next start) lands.
        for spooled in taken:
            for landing in spooled.waiters:
                landing.finish()
        # After the answers and the readers' wake-up: the sync that lets landed journals go waits for the
        # disk, and nobody waits for it.
        self.settle_retired(force=False)
        if not error and sum(spooled.weight for spooled in taken) >= PURGE_AFTER_ROWS:
            # The engine's freed memory back now (ENGINE_ALLOCATOR_CONF in stacklens/warehouse/engine.py): a
            # failed purge is the periodic purge's to redo (stacklens/cli/serve.py); the drains go on.
            with contextlib.suppress(Exception):
                give_back_engine_memory(self.state.inserter)
        if error:
            time.sleep(DRAIN_RETRY_SECONDS)

    def _forget(self, taken: list[Spooled], back: Spooled | None, started: float) -> None:
        """``taken`` landed (called holding the condition): out of the counters and the pending keys, the
        events held ``back`` pending again."""
        state = self.state
        rows = sum(s.weight for s in taken)
        state.rows_spooled -= rows
        state.drains.append((time.monotonic(), rows, time.monotonic() - started))
        state.landed_seq = max(state.landed_seq, max(spooled.seq for spooled in taken))
        for spooled in taken:
            for key, keys in spooled.keys.items():
                state.pending_keys[key].difference_update(keys)
                if not state.pending_keys[key]:
                    del state.pending_keys[key]
            for batch in spooled.batches:
                state.pending_batches.pop(batch, None)
        if back is not None:
            for key, keys in back.keys.items():
                state.pending_keys[key] |= keys

    def _ready(self, held: frozenset[int]) -> list[Spooled]:
        """The spooled groups a drain may take now: all but those holding events of a ``held`` project."""
        if not held:
            return list(self.state.spooled)
        return [group for group in self.state.spooled if group.held.isdisjoint(held)]

    def drain(self, groups: list[Spooled], holding: frozenset[int] = frozenset()) -> None:
        """Insert the rows of ``groups`` together, one insert per table and partition, then forget their
        journals. Rows spooled unchecked are looked up first (one query for the drain) and stored ones
        dropped. The drain's own journal names the groups' journals: found again, it replaces them
        (flush_journal). A group tried before (``attempted``: a failed drain, a journal found at start)
        skips its rows that are stored already: inserted again, their block would be deduplicated by its
        token but each view behind the table would count it a second time.

        The ``events`` rows of the ``holding`` projects (a merge's hold) are kept back as a group of their own
        (:attr:`_held_back`), written to its journal before the drain's own journal replaces the groups'."""
        unchecked = [rows for group in groups for rows in group.unchecked]
        again = any(group.attempted for group in groups)
        if (
            len(groups) == 1
            and not unchecked
            and not (holding and holds_events_of(groups[0].inserts, holding))
        ):
            self._in_flight = replace(groups[0], attempted=True)
            self._insert_all(groups[0].inserts, again)
            self._retire(groups[0].name)
            return
        name = self.state.journal.new_name("d")
        blocks: Blocks = defaultdict(list)
        batch_rows: list[bytes] = []
        for group in groups:
            for insert in group.inserts:
                if insert.table == "ingest_batches":
                    batch_rows.extend(insert.rows)
                else:
                    keys = insert.keys or (None,) * len(insert.rows)
                    blocks[(insert.table, insert.columns, insert.partition)].extend(
                        zip(insert.rows, keys, strict=True)
                    )
        if unchecked:
            wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
            for each in unchecked:
                wanted[(each.org_id, each.table)].extend((row[1], row[2]) for row in each.rows)
            stored = writer.stored_keys(self.state.inserter, dict(wanted))
            for each in unchecked:
                known = stored[(each.org_id, each.table)]
                fresh = [row for row in each.rows if f"{row[1]}:{row[2]}" not in known]
                add_blocks(each.org_id, each.table, each.columns, each.span_columns, fresh, blocks)
        back = self._hold_back(groups, take_held(blocks, holding), again) if holding else None
        inserts = inserts_of(name, blocks, batch_rows)
        try:
            self.state.journal.write(name, inserts, tuple(group.name for group in groups))
        except BaseException:
            if back is not None:
                self.state.journal.remove(back.name)  # the groups' journals still hold its rows
            raise
        merged_keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        for group in groups:
            for pending, held in group.keys.items():
                merged_keys[pending] |= held
        self._in_flight = Spooled(
            name,
            inserts,
            dict(merged_keys),
            tuple(batch for group in groups for batch in group.batches),
            min(group.queued for group in groups),
            seq=max(group.seq for group in groups),
            attempted=True,
            weight=max(0, sum(group.weight for group in groups) - (back.weight if back else 0)),
        )
        self._held_back = back
        for group in groups:
            self.state.journal.remove(group.name)
        self._insert_all(inserts, again)
        self._retire(name)

    def _retire(self, name: str) -> None:
        """The journal ``name``'s rows are inserted: remove it — with the spool synced (the default) and the
        embedded engine, once the engine's new parts are on the disk (it does not sync them itself), so a
        power loss cannot keep the removal and lose the rows. One sync of the warehouse's filesystem covers
        every journal retired since the last, at most every :data:`RETIRE_SECONDS` (a sync per drain cost
        the drains ~0.2 s each on a busy disk). A ClickHouse server's parts are its own
        (``fsync_after_insert``)."""
        if not (self.state.journal.sync and self.state.settings.embedded_warehouse):
            self.state.journal.remove(name)
            return
        with _retiring:
            self._retired.append(name)

    def settle_retired(self, force: bool = True) -> None:
        """Sync the warehouse's filesystem and remove the journals retired, if any (unless ``force``, only
        when the last sync is :data:`RETIRE_SECONDS` old). A journal left by a kill before its sync is found
        at the next start and lands again, its stored rows skipped (see :meth:`drain`)."""
        with _retiring:
            if not self._retired or (not force and time.monotonic() - self._retired_at < RETIRE_SECONDS):
                return
            # Removed under the lock too: a caller that finds nothing retired may count on the files gone.
            sync_filesystem(Path(urlsplit(self.state.settings.resolved_warehouse_url).path))
            self._retired_at = time.monotonic()
            for name in self._retired:
                self.state.journal.remove(name)
            self._retired = []

    def _hold_back(self, groups: list[Spooled], kept: Blocks, again: bool) -> Spooled | None:
        """A group of the events ``kept`` back, its journal written (found again after a kill, it lands at
        the next start; rows of it landed through the groups' own journals are skipped as stored)."""
        if not kept:
            return None
        name = self.state.journal.new_name("h")
        inserts = inserts_of(name, kept, [])
        self.state.journal.write(name, inserts)
        keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        projects: set[int] = set()
        for (table, _, _), rows in kept.items():
            for _, key in rows:
                if key is not None:
                    org_id, project_id, event_key = key
                    keys[(org_id, table)].add(f"{project_id}:{event_key}")
                    projects.add(project_id)
        return Spooled(
            name,
            inserts,
            dict(keys),
            (),
            min(group.queued for group in groups),
            seq=max(group.seq for group in groups),
            attempted=again,
            weight=sum(len(rows) for rows in kept.values()),
            held=frozenset(projects),
        )

    def recover(self) -> None:
        """Land every journal a stopped process left in the spool (a kill, a crash), before any new row:
        the first request, or the start (:func:`~stacklens.ingest.front_door.doors.recover_and_index`),
        calls it."""
        with self.state.condition:
            if self.state.recovered:
                return
            for journal in self.state.journal.pending():
                log.warning("front door: landing what a stopped server left in the spool (%s)", journal.name)
                # Through a drain: rows spooled unchecked (envelopes') are looked up before they land.
                found = Spooled(
                    journal.name, list(journal.inserts), {}, (), 0.0, list(journal.unchecked), attempted=True
                )
                self.drain([found])
            self.settle_retired()
            self.state.recovered = True

    def _insert_all(self, inserts: list[Insert], again: bool = False) -> None:
        """Insert each block with its token; ``again``: skip the rows of each block that are stored already
        (see :meth:`drain`), so a block that landed before is not inserted a second time."""
        # Rows prepared before a merge committed are stamped with the issue it just emptied: land them on the
        # issue that holds their fingerprint now (stacklens.ingest.project_holds).
        inserts = self.state.projects.rewrite(inserts)
        stored: dict[tuple[int, str], set[str]] = {}
        if again:
            wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
            for insert in inserts:
                for org_id, project_id, key in insert.keys:
                    wanted[(org_id, insert.table)].append((project_id, key))
            stored = writer.stored_keys(self.state.inserter, dict(wanted)) if wanted else {}
        landed_before = again and any(
            f"{project_id}:{key}" in stored.get((org_id, insert.table), ())
            for insert in inserts
            for org_id, project_id, key in insert.keys
        )
        for insert in inserts:
            rows, token = list(insert.rows), insert.token
            if landed_before and insert.table == "ingest_batches":
                # Rows of this drain landed before it stopped, and the views behind them may have lost their
                # blocks: the batches are recorded as received now, as a resend records them, so the counter
                # repair finds the first attempt dead and makes its counters equal to the stored events
                # (stacklens/issues/counters.py); a resend of a batch is still answered from its record.
                rows, token = [received_now(row) for row in rows], f"{token}:again"
            if again and insert.keys:
                rows = [
                    row
                    for row, (org_id, project_id, key) in zip(insert.rows, insert.keys, strict=True)
                    if f"{project_id}:{key}" not in stored[(org_id, insert.table)]
                ]
                if not rows:
                    continue  # the block landed before
                if len(rows) < len(insert.rows):
                    token = f"{token}:rest"
            writer.insert_encoded(self.state.inserter, insert.table, list(insert.columns), rows, token)
