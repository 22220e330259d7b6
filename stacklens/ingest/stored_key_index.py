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
bytes per stored key (a million events, 8 MB), sorted for a binary search, plus a set of the keys added since
the last merge.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable

import numpy as np
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.warehouse.queries import load_query

log = logging.getLogger("stacklens.ingest.front_door")

# The batch records' "table" in a digest's text (their key is the batch id, with no project).
BATCHES = "ingest_batches"
# Keys added since the last merge are kept in a set; past this many they join the sorted array.
MERGE_AT = 50_000


def key_digest(org_id: int, table: str, key: str) -> int:
    """The digest of one key as ``ingest/stored_key_digests.sql`` computes it in the engine: the first 8
    bytes of the MD5 of ``"<org>:<table>:<key>"``, little-endian (``reinterpretAsUInt64``)."""
    text = f"{org_id}:{table}:{key}".encode()
    return int.from_bytes(hashlib.md5(text, usedforsecurity=False).digest()[:8], "little")


class StoredKeyIndex:
    """The digests of every key stored in the keyed tables, once :meth:`load` has read them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sorted = np.empty(0, dtype=np.uint64)
        self._recent: set[int] = set()
        self._loaded = False
        # Set by own_warehouse before the first request: only then are keys digested and kept (elsewhere the
        # index would grow by 8 bytes a key and never be asked).
        self.owned = False

    @property
    def trusted(self) -> bool:
        """Whether "absent" is an answer: loaded, in a process that owns the warehouse."""
        return self._loaded

    @property
    def size(self) -> int:
        """Digests held (a key added since the last merge that was stored before counts twice until then)."""
        return len(self._sorted) + len(self._recent)

    def may_hold(self, digest: int) -> bool:
        """False only when the key is surely not stored (see the module doc); True before the load."""
        if not self._loaded or digest in self._recent:
            return True
        held = self._sorted
        at = int(held.searchsorted(np.uint64(digest)))
        return at < len(held) and int(held[at]) == digest

    def add(self, digests: Iterable[int]) -> None:
        """Remember keys about to be stored (called by the acceptor for every key it spools)."""
        with self._lock:
            self._recent.update(digests)
            if len(self._recent) >= MERGE_AT:
                self._sorted = np.union1d(self._sorted, _array(self._recent))
                self._recent = set()

    def load(self, client: Client) -> int:
        """Read every stored key's digest from the warehouse; from then on "absent" is trusted."""
        raw = client.raw_query(load_query("ingest/stored_key_digests"), fmt="RowBinary")
        stored = np.unique(np.frombuffer(raw, dtype="<u8").astype(np.uint64))
        with self._lock:
            # Keys added while the load read stay in the set; a merge meanwhile went into the old array.
            self._sorted = np.union1d(stored, self._sorted)
            self._loaded = True
        return len(stored)


def _array(digests: set[int]) -> np.ndarray:
    return np.fromiter(digests, dtype=np.uint64, count=len(digests))


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
