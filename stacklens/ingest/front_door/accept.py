"""The front door's acceptor: every request waiting taken as one group, replays answered and duplicates
dropped with one look-up for the group, the group written to its journal and its requests answered; the
group is handed to the drainer. See :mod:`stacklens.ingest.front_door`.

One group, in order (:meth:`Acceptor.accept`): :meth:`~Acceptor._look_up` (what is pending in memory, then
one statement to the warehouse for what may be stored), :meth:`~Acceptor._admit` (replays answered, quotas
spent), :func:`rows_of` (the fresh rows into blocks), :meth:`~Acceptor._spool` (the journal written, the keys
pending); then :meth:`~Acceptor._hand_over` answers the requests or holds a lone one for its landing."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

from stacklens.blocking import WouldBlock, loop_only
from stacklens.errors import Unavailable
from stacklens.ingest import writer
from stacklens.ingest.flush_journal import Unchecked
from stacklens.ingest.front_door.drain import IDLE_SECONDS, Drainer
from stacklens.ingest.front_door.state import DoorState, log
from stacklens.ingest.landing import (
    Blocks,
    Landing,
    Spooled,
    answer_replay,
    inserts_of,
    keep_fresh,
)
from stacklens.ingest.stored_key_index import BATCHES, StoredKeyIndex, key_digest
from stacklens.ingest.timeparse import format_ms
from stacklens.outcomes.counting import SPOOL_UNAVAILABLE, WAREHOUSE_UNAVAILABLE

# A lone request lands before its answer only when the door accepted nothing for this long (see _hand_over).
QUIET_SECONDS = 1.0
# Rows a flush takes at most: a flush of a million rows would hold every later request for seconds.
MAX_ROWS_PER_FLUSH = 20_000
# Rows a group accepted on the event loop takes at most: a turn's one-event envelopes and small batches
# (tens of microseconds a row), never a 1,000-line batch (milliseconds of digests and journal, during which
# every page waits), which goes to the acceptor's thread with the requests after it.
LOOP_GROUP_ROWS = 200


@dataclass
class Seen:
    """What a group's look-up found: the keys and batch records spooled or stored, the envelopes whose rows
    are surely new (by ``id``: they skip the drain's look-up), and each key's digest, computed once."""

    index: StoredKeyIndex
    known: dict[tuple[int, str], set[str]]
    records: dict[tuple[int, str], writer.BatchRecord]
    checked: set[int] = field(default_factory=set)
    digests: dict[tuple[int, str, str], int] = field(default_factory=dict)

    def may_hold(self, org_id: int, table: str, key: str) -> bool:
        """Whether the warehouse may hold ``key`` (stacklens/ingest/stored_key_index.py): where the process
        owns it, a new key's absence is known in memory, and only the others are looked up."""
        if not self.index.owned:
            return True
        digest = self.digests[(org_id, table, key)] = key_digest(org_id, table, key)
        return self.index.may_hold(digest)


@dataclass
class Rows:
    """A group's fresh rows: blocks by table and partition, the envelopes' rows the drain checks, the batch
    records (as rows and by key), and the keys spooled."""

    blocks: Blocks = field(default_factory=lambda: defaultdict(list))
    unchecked: list[Unchecked] = field(default_factory=list)
    batch_rows: list[bytes] = field(default_factory=list)
    added: defaultdict[tuple[int, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    batches: dict[tuple[int, str], writer.BatchRecord] = field(default_factory=dict)


def rows_of(fresh: list[Landing], seen: Seen) -> Rows:
    """The rows of the ``fresh`` requests that are not duplicates, and their batch records."""
    rows = Rows()
    for landing in fresh:
        direct = landing.counts_duplicates or id(landing) in seen.checked
        keep_fresh(landing, seen.known, rows.blocks if direct else None, rows.added, rows.unchecked)
        record = landing.result.record(landing.prepared.lines, landing.prepared.body_hash)
        rows.batch_rows.append(writer.batch_row(landing.org_id, record, format_ms(landing.received)))
        rows.batches[(landing.org_id, landing.batch_id)] = record
    return rows


class Acceptor:
    """The acceptor's thread and its look-ups over a front door's ``state``, handing its groups to the
    ``drainer``."""

    def __init__(self, state: DoorState, drainer: Drainer) -> None:
        self.state = state
        self.drainer = drainer
        self.thread: threading.Thread | None = None  # the acceptor's thread, while one runs
        # Held while a group is accepted, by the acceptor's thread or the event loop (accept_here): groups
        # are accepted one at a time, so two requests carrying one key cannot both find it new.
        self.accepting = threading.Lock()

    # -- whose turn: the acceptor's thread, or the event loop ---------------------------------------------

    def wake(self) -> None:
        """Requests wait: start the acceptor's thread if none runs, and wake it."""
        with self.state.condition:
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._accept_loop, name="front-door-accept", daemon=True
                )
                self.thread.start()
            self.state.requests.notify()

    def _accept_loop(self) -> None:
        state = self.state
        while True:
            with state.condition:
                # The thread stops only after a quiet IDLE_SECONDS, not after each group (a thread started per
                # request costs more than its work).
                idle_until = time.monotonic() + IDLE_SECONDS
                while not state.waiting and not state.closing and time.monotonic() < idle_until:
                    state.requests.wait(max(0.0, idle_until - time.monotonic()))
                if not state.waiting:
                    self.thread = None
                    state.condition.notify_all()
                    return
            with self.accepting:
                with state.condition:
                    taken = self._take_group()
                answer_now = self._accept_group(taken) if taken else []
            for landing in answer_now:
                landing.finish()

    def accept_here(self) -> None:
        """Accept the requests waiting in the calling thread (the server's event loop, which submitted them
        with ``wake=False``) when nothing of it would block. A group that would look keys or batches up in
        the warehouse goes back whole to the acceptor's thread, woken now, as every group does while that
        thread is accepting one; a keyed batch whose quotas must be read (or asked of Redis) goes back with
        the requests after it, the ones before accepted here. The loop takes at most LOOP_GROUP_ROWS rows:
        a larger request and the ones after it are the thread's."""
        if self.state.journal.sync or not self.accepting.acquire(blocking=False):
            # A synced journal waits for the disk (milliseconds, after the group's quotas are spent, so it
            # cannot step aside): never on the event loop. The thread syncs while the loop takes more
            # requests, which share the next sync.
            self.wake()
            return
        try:
            with self.state.condition:
                taken = self._take_group(LOOP_GROUP_ROWS, at_least_one=False)
            answer_now: list[Landing] = []
            if taken:
                try:
                    with loop_only():
                        answer_now = self._accept_group(taken)
                except WouldBlock:
                    # Nothing of the group took effect (its look-up comes before its quotas and the spool):
                    # back to the front of the queue, for the thread.
                    with self.state.condition:
                        self._back_to_the_front(taken)
        finally:
            self.accepting.release()
        with self.state.condition:
            left = bool(self.state.waiting)
        if left:
            self.wake()
        for landing in answer_now:
            landing.finish()

    def _back_to_the_front(self, landings: list[Landing]) -> None:
        """Queue ``landings`` again before every other request (called with the condition held)."""
        self.state.waiting.extendleft(reversed(landings))
        self.state.rows_waiting += sum(landing.rows for landing in landings)

    def _take_group(self, most_rows: int = MAX_ROWS_PER_FLUSH, *, at_least_one: bool = True) -> list[Landing]:
        """The requests waiting, oldest first, up to ``most_rows`` rows (at least one request however many
        rows it has, unless ``at_least_one`` is False: the event loop's bound); called with the condition
        held."""
        waiting = self.state.waiting
        taken: list[Landing] = []
        rows = 0
        while waiting and ((at_least_one and not taken) or rows + waiting[0].rows <= most_rows):
            landing = waiting.popleft()
            taken.append(landing)
            rows += landing.rows
        self.state.rows_waiting -= rows
        return taken

    # -- one group: accepted, then handed over -----------------------------------------------------------

    def _accept_group(self, taken: list[Landing]) -> list[Landing]:
        """Accept ``taken`` (called holding ``accepting``: one group at a time, whichever thread); the
        requests to answer now."""
        started = time.monotonic()
        try:
            spooled, aside = self.accept(taken)
        except Exception as exc:  # noqa: BLE001 - every waiting request gets the group's error
            self._fail(taken, exc)
            spooled, aside = None, []
        if aside:
            taken = taken[: len(taken) - len(aside)]
            with self.state.condition:
                self._back_to_the_front(aside)
            if not taken:
                return []
        return self._hand_over(taken, spooled, started)

    @staticmethod
    def _fail(taken: list[Landing], exc: Exception) -> None:
        """Every request of a group that could not be accepted gets the group's error."""
        log.warning("front door: accepting %d requests failed: %s", len(taken), exc)
        if isinstance(exc, OSError):
            # The spool's journal could not be written (a read-only or full volume): the rows are not
            # safe anywhere yet, so the senders keep them. The path stays in the log, not the answer.
            error = Unavailable(f"the ingest spool cannot be written ({exc.strerror or exc}); retry")
            failure = SPOOL_UNAVAILABLE
        else:
            error = Unavailable(f"the warehouse did not answer: {str(exc).splitlines()[0][:300]}")
            failure = WAREHOUSE_UNAVAILABLE
        for landing in taken:
            landing.failure = landing.failure or failure  # the outcome's reason (Landing.finish)
            landing.error = landing.error or error

    def _hand_over(self, taken: list[Landing], spooled: Spooled | None, started: float) -> list[Landing]:
        """Count the group, put what it spooled in the drainer's queue; the requests to answer now (all but
        a lone request at a quiet, idle door, which is answered once its group has landed)."""
        state = self.state
        with state.condition:
            # A request is alone at a quiet door only when no group was accepted for a while: one sender
            # posting in sequence (an SDK's one transport thread) is answered from the spool after its
            # first request, instead of paying a whole landing for every event.
            quiet = not state.accepts or started - state.accepts[-1][0] >= QUIET_SECONDS
            state.accepts.append(
                (
                    time.monotonic(),
                    len(taken),
                    time.monotonic() - started,
                    sum(started - landing.queued for landing in taken),
                )
            )
            if spooled is None:
                return taken
            state.spooled_seq += 1
            # A quiet, idle door lands a lone request before answering it (see the package doc): it waits one
            # insert, and its events are visible everywhere at its 200. A group of several, one arriving while
            # others wait or drain, or the next of a sender posting in sequence is answered once spooled:
            # holding senders until their drain would bind each to the drain's pace (they come back, find the
            # door idle again, and wait again). Not while a backup holds the drains: the request is answered
            # spooled, and lands after it.
            idle = (
                quiet
                and len(taken) == 1
                and not state.waiting
                and not state.draining
                and not state.spooled
                and not state.holds
            )
            spooled = replace(spooled, seq=state.spooled_seq, waiters=tuple(taken) if idle else ())
            state.hurry = state.hurry or idle
            state.spooled.append(spooled)
            state.rows_spooled += spooled.weight
            self.drainer.wake()
        return [] if idle else taken

    # -- accepting: look-ups and the spool, for every request of the group -------------------------------

    def accept(self, landings: list[Landing]) -> tuple[Spooled | None, list[Landing]]:
        """Answer replays, drop duplicates and spool the fresh rows of ``landings`` (see the module doc); the
        spooled group, and the requests set aside (on the event loop only: see :meth:`accept_here`)."""
        seen = self._look_up(landings)
        fresh, repeats, aside = self._admit(landings, seen.records)
        if not fresh:
            return None, aside
        rows = rows_of(fresh, seen)
        for landing, first in repeats:
            answer_replay(landing, rows.batches[(first.org_id, first.batch_id)])
        return self._spool(fresh, rows, seen), aside

    def _look_up(self, landings: list[Landing]) -> Seen:
        """The keys and batch records of ``landings`` already spooled or stored: pending first, then the
        warehouse (a key drained between the two reads is found by the second), in one statement for the
        group (the engine parses and plans each statement)."""
        with self.state.condition:
            known = {key: set(keys) for key, keys in self.state.pending_keys.items()}
            records = dict(self.state.pending_batches)
        seen = Seen(self.state.index, known, records)
        keyed: defaultdict[int, list[str]] = defaultdict(list)
        wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
        for landing in landings:
            org_id = landing.org_id
            if (
                landing.keyed
                and (org_id, landing.batch_id) not in records
                and seen.may_hold(org_id, BATCHES, landing.batch_id)
            ):
                keyed[org_id].append(landing.batch_id)
            if landing.counts_duplicates:
                for table, rows in landing.prepared.tables.items():
                    wanted[(org_id, table)].extend(
                        (row[1], row[2]) for row in rows if seen.may_hold(org_id, table, f"{row[1]}:{row[2]}")
                    )
            elif seen.index.trusted and not any(
                seen.may_hold(org_id, table, f"{row[1]}:{row[2]}")
                for table, rows in landing.prepared.tables.items()
                for row in rows
            ):
                seen.checked.add(id(landing))
        found = writer.look_up(self.state.client, dict(keyed), {k: v for k, v in wanted.items() if v})
        seen.records.update(found.batches)
        for key, keys in found.keys.items():
            seen.known.setdefault(key, set()).update(keys)
        return seen

    @staticmethod
    def _admit(
        landings: list[Landing], records: dict[tuple[int, str], writer.BatchRecord]
    ) -> tuple[list[Landing], list[tuple[Landing, Landing]], list[Landing]]:
        """Replays answered from their ``records``, quotas spent: the fresh requests, the repeats of one of
        them in the group (with it), and the requests set aside (a quota that must be read or asked of Redis,
        on the event loop: that request and the rest, before any of their effects)."""
        fresh: list[Landing] = []
        repeats: list[tuple[Landing, Landing]] = []
        first_of: dict[tuple[int, str], Landing] = {}
        for number, landing in enumerate(landings):
            key = (landing.org_id, landing.batch_id)
            record = records.get(key)
            if record is not None:
                answer_replay(landing, record)
            elif key in first_of:
                repeats.append((landing, first_of[key]))
            else:
                try:
                    spent = landing.spend()
                except WouldBlock:
                    return fresh, repeats, landings[number:]
                if spent:
                    first_of[key] = landing
                    fresh.append(landing)
        return fresh, repeats, []

    def _spool(self, fresh: list[Landing], rows: Rows, seen: Seen) -> Spooled:
        """Write the group's journal, add its keys to the index and to what is pending; the spooled group."""
        journal, index = self.state.journal, seen.index
        name = journal.new_name("a")
        inserts = inserts_of(name, rows.blocks, rows.batch_rows)
        journal.write(name, inserts, unchecked=rows.unchecked)
        if index.owned:
            spooled = [(org_id, table, key) for (org_id, table), keys in rows.added.items() for key in keys]
            spooled += [(org_id, BATCHES, batch_id) for org_id, batch_id in rows.batches]
            index.add(seen.digests.get(each) or key_digest(*each) for each in spooled)
        with self.state.condition:
            for key, keys in rows.added.items():
                self.state.pending_keys[key].update(keys)
            self.state.pending_batches.update(rows.batches)
        queued = min(landing.queued for landing in fresh)
        return Spooled(name, inserts, dict(rows.added), tuple(rows.batches), queued, rows.unchecked)
