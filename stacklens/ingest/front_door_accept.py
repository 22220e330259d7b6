"""The front door's acceptor: every request waiting taken as one group, replays answered and duplicates
dropped with one look-up for the group, the group written to its journal and its requests answered; it starts
the drainer. See :mod:`stacklens.ingest.front_door`."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import replace

from stacklens.blocking import WouldBlock, loop_only
from stacklens.errors import Unavailable
from stacklens.ingest import writer
from stacklens.ingest.flush_journal import Unchecked
from stacklens.ingest.front_door_drain import IDLE_SECONDS, Drainer
from stacklens.ingest.front_door_state import log
from stacklens.ingest.landing import (
    Blocks,
    Landing,
    Spooled,
    answer_replay,
    inserts_of,
    keep_fresh,
)
from stacklens.ingest.stored_key_index import BATCHES, key_digest
from stacklens.ingest.timeparse import format_ms
from stacklens.outcomes.counting import SPOOL_UNAVAILABLE, WAREHOUSE_UNAVAILABLE

# A lone request lands before its answer only when the door accepted nothing for this long (see _accept_loop).
QUIET_SECONDS = 1.0
# Rows a flush takes at most: a flush of a million rows would hold every later request for seconds.
MAX_ROWS_PER_FLUSH = 20_000
# Rows a group accepted on the event loop takes at most: a turn's one-event envelopes and small batches
# (tens of microseconds a row), never a 1,000-line batch (milliseconds of digests and journal, during which
# every page waits), which goes to the acceptor's thread with the requests after it.
LOOP_GROUP_ROWS = 200


class Acceptor(Drainer):
    """The acceptor's thread and its look-ups, handing its groups to the drainer it is built on."""

    # -- accepting: look-ups and the spool, for every request waiting -------------------------------------

    def _accept_loop(self) -> None:
        while True:
            with self._condition:
                # Woken for other news (a drain ended) the thread waits on: it stops only after a quiet
                # IDLE_SECONDS, not after each group (a thread started per request costs more than its work).
                idle_until = time.monotonic() + IDLE_SECONDS
                while not self._waiting and not self._closing and time.monotonic() < idle_until:
                    self._condition.wait(max(0.0, idle_until - time.monotonic()))
                if not self._waiting:
                    self._acceptor = None
                    self._condition.notify_all()
                    return
            with self._accepting:
                with self._condition:
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
        if self.journal.sync or not self._accepting.acquire(blocking=False):
            # A synced journal waits for the disk (milliseconds, after the group's quotas are spent, so it
            # cannot step aside): never on the event loop. The thread syncs while the loop takes more
            # requests, which share the next sync.
            self._wake_acceptor()
            return
        try:
            with self._condition:
                taken = self._take_group(LOOP_GROUP_ROWS, at_least_one=False)
            answer_now: list[Landing] = []
            if taken:
                try:
                    with loop_only():
                        answer_now = self._accept_group(taken)
                except WouldBlock:
                    # Nothing of the group took effect (its look-up comes before its quotas and the spool):
                    # back to the front of the queue, for the thread.
                    with self._condition:
                        self._back_to_the_front(taken)
        finally:
            self._accepting.release()
        with self._condition:
            left = bool(self._waiting)
        if left:
            self._wake_acceptor()
        for landing in answer_now:
            landing.finish()

    def _wake_acceptor(self) -> None:
        with self._condition:
            if self._acceptor is None:
                self._acceptor = threading.Thread(
                    target=self._accept_loop, name="front-door-accept", daemon=True
                )
                self._acceptor.start()
            self._condition.notify_all()

    def _back_to_the_front(self, landings: list[Landing]) -> None:
        """Queue ``landings`` again before every other request (called with the condition held)."""
        self._waiting.extendleft(reversed(landings))
        self._rows_waiting += sum(landing.rows for landing in landings)

    def _take_group(self, most_rows: int = MAX_ROWS_PER_FLUSH, *, at_least_one: bool = True) -> list[Landing]:
        """The requests waiting, oldest first, up to ``most_rows`` rows (at least one request however many
        rows it has, unless ``at_least_one`` is False: the event loop's bound); called with the condition
        held."""
        taken: list[Landing] = []
        rows = 0
        while self._waiting and ((at_least_one and not taken) or rows + self._waiting[0].rows <= most_rows):
            landing = self._waiting.popleft()
            taken.append(landing)
            rows += landing.rows
        self._rows_waiting -= rows
        return taken

    def _accept_group(self, taken: list[Landing]) -> list[Landing]:
        """Accept ``taken`` (called holding ``_accepting``: one group at a time, whichever thread); the
        requests to answer now."""
        started = time.monotonic()
        try:
            spooled, aside = self.accept(taken)
        except Exception as exc:  # noqa: BLE001 - every waiting request gets the group's error
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
            spooled, aside = None, []
        if aside:
            taken = taken[: len(taken) - len(aside)]
            with self._condition:
                self._back_to_the_front(aside)
            if not taken:
                return []
        with self._condition:
            # A request is alone at a quiet door only when no group was accepted for a while: one sender
            # posting in sequence (an SDK's one transport thread) is answered from the spool after its
            # first request, instead of paying a whole landing for every event.
            quiet = not self._accepts or started - self._accepts[-1][0] >= QUIET_SECONDS
            self._accepts.append(
                (
                    time.monotonic(),
                    len(taken),
                    time.monotonic() - started,
                    sum(started - landing.queued for landing in taken),
                )
            )
            answer_now = taken
            if spooled is not None:
                self._spooled_seq += 1
                # A quiet, idle door lands a lone request before answering it (see the module doc): it
                # waits one insert, and its events are visible everywhere at its 200. A group of several,
                # one arriving while others wait or drain, or the next of a sender posting in sequence is
                # answered once spooled: holding senders until their drain would bind each to the drain's
                # pace (they come back, find the door idle again, and wait again). Not while a backup
                # holds the drains: the request is answered spooled, and lands after it.
                idle = (
                    quiet
                    and len(taken) == 1
                    and not self._waiting
                    and not self._draining
                    and not self._spooled
                    and not self._holds
                )
                spooled = replace(spooled, seq=self._spooled_seq, waiters=tuple(taken) if idle else ())
                answer_now = [] if idle else taken
                self._hurry = self._hurry or idle
                self._spooled.append(spooled)
                self._rows_spooled += spooled.weight
                if self._drainer is None:
                    self._drainer = threading.Thread(
                        target=self._drain_loop, name="front-door-drain", daemon=True
                    )
                    self._drainer.start()
                self._condition.notify_all()
        return answer_now

    def accept(self, landings: list[Landing]) -> tuple[Spooled | None, list[Landing]]:
        """Answer replays, drop duplicates and spool the fresh rows of ``landings`` (see the module doc); the
        spooled group, and the requests set aside (on the event loop only: see :meth:`accept_here`)."""
        keyed: defaultdict[int, list[str]] = defaultdict(list)
        wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
        with self._condition:
            # Pending first, then the warehouse: a key drained between the two reads is found by the second.
            known = {key: set(keys) for key, keys in self._pending_keys.items()}
            records = dict(self._pending_batches)
        # Only keys that may be stored go to the warehouse (stacklens/ingest/stored_key_index.py): where the
        # process owns it, a new key's absence is known in memory. Each key is digested once per group, here,
        # and the digests of the keys spooled are added to the index below.
        index = self.index
        digests: dict[tuple[int, str, str], int] = {}

        def may_hold(org_id: int, table: str, key: str) -> bool:
            if not index.owned:
                return True
            digest = digests[(org_id, table, key)] = key_digest(org_id, table, key)
            return index.may_hold(digest)

        checked: set[int] = set()  # envelopes whose rows are surely new: they skip the drain's look-up
        for landing in landings:
            org_id = landing.org_id
            if (
                landing.keyed
                and (org_id, landing.batch_id) not in records
                and may_hold(org_id, BATCHES, landing.batch_id)
            ):
                keyed[org_id].append(landing.batch_id)
            if landing.counts_duplicates:
                for table, rows in landing.prepared.tables.items():
                    wanted[(org_id, table)].extend(
                        (row[1], row[2]) for row in rows if may_hold(org_id, table, f"{row[1]}:{row[2]}")
                    )
            elif index.trusted and not any(
                may_hold(org_id, table, f"{row[1]}:{row[2]}")
                for table, rows in landing.prepared.tables.items()
                for row in rows
            ):
                checked.add(id(landing))
        # The group's replays and duplicates in one statement (the engine parses and plans each statement).
        found = writer.look_up(self.client, dict(keyed), {k: v for k, v in wanted.items() if v})
        records.update(found.batches)
        fresh: list[Landing] = []
        again: list[tuple[Landing, Landing]] = []  # (a request, the earlier one of this group with its batch)
        first_of: dict[tuple[int, str], Landing] = {}
        aside: list[Landing] = []
        for number, landing in enumerate(landings):
            key = (landing.org_id, landing.batch_id)
            record = records.get(key)
            if record is not None:
                answer_replay(landing, record)
            elif key in first_of:
                again.append((landing, first_of[key]))
            else:
                try:
                    spent = landing.spend()
                except WouldBlock:
                    # On the event loop, a quota that must be read or asked of Redis: this request and the
                    # rest are set aside before any of their effects (the ones before have spent theirs).
                    aside = landings[number:]
                    break
                if spent:
                    first_of[key] = landing
                    fresh.append(landing)
        for key, keys in found.keys.items():
            known.setdefault(key, set()).update(keys)
        blocks: Blocks = defaultdict(list)
        unchecked: list[Unchecked] = []
        batch_rows: list[bytes] = []
        added: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        batches: dict[tuple[int, str], writer.BatchRecord] = {}
        for landing in fresh:
            direct = landing.counts_duplicates or id(landing) in checked
            keep_fresh(landing, known, blocks if direct else None, added, unchecked)
            record = landing.result.record(landing.prepared.lines, landing.prepared.body_hash)
            batch_rows.append(writer.batch_row(landing.org_id, record, format_ms(landing.received)))
            batches[(landing.org_id, landing.batch_id)] = record
        for landing, first in again:
            answer_replay(landing, batches[(first.org_id, first.batch_id)])
        if not fresh:
            return None, aside
        name = self.journal.new_name("a")
        inserts = inserts_of(name, blocks, batch_rows)
        self.journal.write(name, inserts, unchecked=unchecked)
        if index.owned:
            spooled = [(org_id, table, key) for (org_id, table), keys in added.items() for key in keys]
            spooled += [(org_id, BATCHES, batch_id) for org_id, batch_id in batches]
            index.add(digests.get(each) or key_digest(*each) for each in spooled)
        with self._condition:
            for key, keys in added.items():
                self._pending_keys[key].update(keys)
            self._pending_batches.update(batches)
        queued = min(landing.queued for landing in fresh)
        return Spooled(name, inserts, dict(added), tuple(batches), queued, unchecked), aside
