"""The keys the warehouse holds, as 64-bit digests in memory, so the front door's acceptor asks the warehouse
only about keys that may be stored.

Every accept group of `/api/ingest` batches and OTLP exports looked its event ids (and a keyed batch its
Idempotency-Key) up in the warehouse before its answer, and almost every key is new: one-line batches spent
two thirds of the acceptor's time in those look-ups (~5 ms each on the embedded engine under load, a
statement whatever it reads), and the look-up grows with the table. Here every stored key is known by the
first 8 bytes of the MD5 of ``"<org>:<table>:<key>"`` — the same text the look-ups compare (``<project>:<event
id>`` and its kin per table, the batch id for ``ingest_batches``): a key whose digest is absent is not stored,
and only a key whose digest is present (stored, spooled, or a collision) goes to the warehouse, which says
for sure. A wrong "absent" would land a duplicate and miscount an answer, so the index answers "absent" only
where it knows every key:

- **Only where this process owns the warehouse**: the embedded engine's directory is opened by one process at
  a time and every keyed row enters through this process's front door. With a ClickHouse server several API
  workers write, so there the index is never trusted and every key is looked up as before.
- **Loaded after what a stopped process left in the spool landed**: the load reads every key of the keyed
  tables (one statement, the digests computed by the engine: ``ingest/stored_key_digests.sql``); until it
  finished, every key is looked up.
- **Every key accepted is added at once** (once the process declared it owns the warehouse, before its first
  request), before its rows drain, whether the index is loaded yet or not: a key landed while the load reads
  is in one of the two.

Keys deleted later (retention, a project removed) stay in the index: they only cost a look-up. Memory: 8
bytes per stored key (a million events, 8 MB), sorted for a binary search, plus sets of the keys added since
the last merge.

**No request waits for a merge.** Keys are added to a small set (``recent``); once it holds
:data:`MERGE_AT` keys it is frozen (``merging``) and a thread of the index's own builds a new sorted array
with them inserted (``np.searchsorted`` + ``np.insert``: one pass over the stored keys, 0.1–0.3 s at 10 M
instead of ``np.union1d``'s sort of everything, 21.5 s), then puts it in place of the old one. The merge
used to run in the accept step, under its lock: every request, and on the event loop every page, waited for
it (bench/key_index.py). A look-up reads ``recent``, then ``merging``, then the sorted array; a key only
ever moves forward along that order, and each move puts it in the next place before taking it out of the
previous one (``merging`` is set before ``recent`` is replaced; the new array before ``merging`` is
cleared), so a look-up that starts after a key was added finds it wherever the key is by then: a key
accepted is never answered "absent", which exactly-once after kill -9 relies on.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterable

import numpy as np
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.warehouse.queries import load_query

log = logging.getLogger("stacklens.ingest.front_door")

# The batch records' "table" in a digest's text (their key is the batch id, with no project).
BATCHES = "ingest_batches"
# Keys added since the last merge are kept in a set; past this many they are merged into the sorted array,
# in the background (a set costs ~60 bytes a key against the array's 8; a merge is one pass over the array).
MERGE_AT = 50_000


def key_digest(org_id: int, table: str, key: str) -> int:
    """The digest of one key as ``ingest/stored_key_digests.sql`` computes it in the engine: the first 8
    bytes of the MD5 of ``"<org>:<table>:<key>"``, little-endian (``reinterpretAsUInt64``)."""
    text = f"{org_id}:{table}:{key}".encode()
    return int.from_bytes(hashlib.md5(text, usedforsecurity=False).digest()[:8], "little")


def merge_sorted(held: np.ndarray, more: np.ndarray) -> np.ndarray:
    """A new sorted array of the digests of ``held`` (sorted, distinct) and ``more`` (any order), each once:
    the new ones inserted where a binary search places them, one pass over ``held`` (no sort of it)."""
    more = np.unique(more.astype(np.uint64, copy=False))
    if not len(held):
        return more
    at = held.searchsorted(more)
    known = held[np.minimum(at, len(held) - 1)] == more
    return np.insert(held, at[~known], more[~known])


class StoredKeyIndex:
    """The digests of every key stored in the keyed tables, once :meth:`load` has read them."""

    def __init__(self) -> None:
        # Held to add keys and to freeze them for a merge (short: never for the merge itself).
        self._lock = threading.Lock()
        # Held while a new sorted array is built (the background merge, the load): one at a time.
        self._merge_lock = threading.Lock()
        self._sorted = np.empty(0, dtype=np.uint64)
        self._merging: set[int] | None = None  # keys being merged into the sorted array (no longer added to)
        self._recent: set[int] = set()  # keys added since the last merge began
        # The index's merging thread, started with the load (or the first merge), woken by _due: an add that
        # makes a merge due only sets the event (starting a thread waits for it to run, milliseconds under
        # load, and the add runs inside the accept step).
        self._merger: threading.Thread | None = None
        self._due = threading.Event()
        self._merge_running = False
        self._loaded = False
        # Set by own_warehouse before the first request: only then are keys digested and kept (elsewhere the
        # index would grow by 8 bytes a key and never be asked).
        self.owned = False
        self.merges = 0  # merges finished (the status and the bench read it)
        self.last_merge_seconds = 0.0

    @property
    def trusted(self) -> bool:
        """Whether "absent" is an answer: loaded, in a process that owns the warehouse."""
        return self._loaded

    @property
    def size(self) -> int:
        """Digests held (a key added since the last merge that was stored before counts twice until then)."""
        merging = self._merging
        return len(self._sorted) + len(self._recent) + (len(merging) if merging is not None else 0)

    @property
    def merging(self) -> bool:
        """Whether a merge is under way (its keys are answered from a set meanwhile)."""
        return self._merging is not None

    def may_hold(self, digest: int) -> bool:
        """False only when the key is surely not stored (see the module doc); True before the load."""
        if not self._loaded:
            return True
        # In this order, each read once: a key moves recent -> merging -> sorted, never back (module doc).
        if digest in self._recent:
            return True
        merging = self._merging
        if merging is not None and digest in merging:
            return True
        held = self._sorted
        at = int(held.searchsorted(np.uint64(digest)))
        return at < len(held) and int(held[at]) == digest

    def add(self, digests: Iterable[int]) -> None:
        """Remember keys about to be stored (called by the acceptor for every key it spools). Never waits for
        a merge: one that is due starts in the background."""
        with self._lock:
            self._recent.update(digests)
            self._start_merge_if_due()

    def _start_merge_if_due(self) -> None:
        """Start a merge in the background if one is due and none runs (called holding ``_lock``)."""
        if len(self._recent) < MERGE_AT or self._merge_running:
            return
        if self._merging is None:
            # Set before recent is replaced: a key is in one of the two at every moment.
            self._merging = self._recent
            self._recent = set()
        # (else a merge that failed left its keys in merging: they are merged now, recent waits)
        self._merge_running = True
        self._start_merger()
        self._due.set()

    def _start_merger(self) -> None:
        """Start the merging thread if it is not running yet (called holding ``_lock``)."""
        if self._merger is None:
            self._merger = threading.Thread(target=self._merge_loop, name="stored-key-merge", daemon=True)
            self._merger.start()

    def _merge_loop(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            self._merge()

    def _merge(self) -> None:
        started = time.monotonic()
        merged = False
        try:
            with self._merge_lock:
                merging = self._merging
                if merging is not None:
                    more = np.fromiter(merging, dtype=np.uint64, count=len(merging))
                    # The new array before merging is cleared: a key is in one of the two at every moment.
                    self._sorted = merge_sorted(self._sorted, more)
                    self._merging = None
                    self.merges += 1
                    self.last_merge_seconds = time.monotonic() - started
                    merged = True
        except Exception:  # the keys stay in merging (still answered); the next add retries
            log.exception("front door: merging the stored keys' index failed; retried at the next add")
        finally:
            with self._lock:
                self._merge_running = False
                if merged:  # keys enough for another merge may have arrived during this one
                    self._start_merge_if_due()

    def settle(self, timeout: float = 60.0) -> bool:
        """Wait for the merge under way, if any (tests, the bench); whether none is under way after."""
        deadline = time.monotonic() + timeout
        while self._merge_running and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._merge_running

    def load(self, client: Client) -> int:
        """Read every stored key's digest from the warehouse; from then on "absent" is trusted."""
        raw = client.raw_query(load_query("ingest/stored_key_digests"), fmt="RowBinary")
        return self.load_digests(np.frombuffer(raw, dtype="<u8"))

    def load_digests(self, stored: np.ndarray) -> int:
        """Take ``stored`` (the digests of every stored key, any order) as loaded; the number of distinct
        ones. Keys added meanwhile stay where they are (recent, merging or the array, merged into it)."""
        stored = np.unique(stored.astype(np.uint64, copy=False))
        with self._lock:
            self._start_merger()  # here, off the accept step: its first merge only wakes it
        with self._merge_lock:
            self._sorted = merge_sorted(stored, self._sorted)
            self._loaded = True
        return len(stored)


_indexes: dict[tuple[str, str], StoredKeyIndex] = {}
_registry_lock = threading.Lock()


def _key(settings: Settings) -> tuple[str, str]:
    return (settings.resolved_warehouse_url, settings.warehouse_database)


def stored_key_index(settings: Settings) -> StoredKeyIndex:
    """The process's index of ``settings``' warehouse (one per warehouse, whatever front door adds to it)."""
    with _registry_lock:
        index = _indexes.get(_key(settings))
        if index is None:
            index = _indexes[_key(settings)] = StoredKeyIndex()
        return index


def own_warehouse(settings: Settings) -> bool:
    """Declare that this process is the only writer of ``settings``' warehouse (`stacklens serve` with the
    embedded engine), so its index may be loaded and trusted; False (and nothing done) with a ClickHouse
    server. The caller loads it (:func:`load_owned_index`) once the spool a stopped process left landed."""
    if not settings.embedded_warehouse:
        return False
    stored_key_index(settings).owned = True
    return True


def load_owned_index(settings: Settings, client: Client) -> None:
    """Load the index of ``settings``' warehouse if this process owns it; a failure leaves it untrusted (every
    key looked up, as with a server) and is logged."""
    index = stored_key_index(settings)
    if not index.owned or index.trusted:
        return
    try:
        count = index.load(client)
    except Exception as exc:  # noqa: BLE001 - the door works without the index, at a look-up per group
        log.warning("front door: the stored keys could not be read, every key is looked up: %s", exc)
        return
    log.info("front door: %d stored keys indexed; only keys that may be stored are looked up", count)
