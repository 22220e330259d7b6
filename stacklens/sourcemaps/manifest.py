"""The process's cache of manifest rows, so a cached event is mapped (and grouped) without a warehouse query.

Three kinds of entries, each read once and then kept for :data:`TTL_SECONDS`:

- an organization's :class:`~stacklens.sourcemaps.index.MapIndex` (which releases and debug ids have
  uploads), which ingest consults for every JavaScript event and which spares the queries below for an
  event whose release and debug ids have nothing;
- the files of one (organization, project, release, dist);
- the files of one (organization, project, debug id).

An upload or a delete made by this process drops the organization's entries at once (``store.generation``);
one made by another server process is seen within the TTL. Every key starts with the organization and the
project and every query filters by both, so no entry ever holds another organization's rows. One
:class:`Manifest` per warehouse client (:func:`manifest_for`): two warehouses in one process (tests) never
share entries.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

from clickhouse_connect.driver.client import Client

from stacklens.blocking import may_block
from stacklens.sourcemaps import store
from stacklens.sourcemaps.index import MapIndex
from stacklens.sourcemaps.store import StoredFile

# How long another server process's upload or delete may go unseen here: short, since an upload is usually
# followed at once by the release's first events, and a refresh is one small query per organization.
TTL_SECONDS = 10.0
MAX_ENTRIES = 20_000  # beyond this the oldest half is dropped (a bound, not a working-set size)

T = TypeVar("T")


class Manifest:
    """Cached manifest look-ups of one warehouse."""

    def __init__(
        self, client: Client, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.clock = clock
        # key → (organization's generation when read, expiry time, value)
        self._entries: dict[tuple[Any, ...], tuple[int, float, Any]] = {}
        self._lock = threading.Lock()

    def _cached(self, key: tuple[Any, ...], org_id: int, read: Callable[[], T]) -> T:
        now, current = self.clock(), store.generation(org_id)
        with self._lock:
            found = self._entries.get(key)
        if found is not None and found[0] == current and found[1] > now:
            return cast(T, found[2])  # stored by this method for this key: what read() returned
        may_block("a read of the source-map manifest")
        value = read()
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                for old in list(self._entries)[: MAX_ENTRIES // 2]:
                    del self._entries[old]
            self._entries[key] = (current, now + self.ttl, value)
        return value

    def index(self, org_id: int) -> MapIndex:
        """Which releases and debug ids of the organization's projects have uploads."""
        return self._cached(("index", org_id), org_id, lambda: store.map_index(self.client, org_id))

    def candidate_files(
        self, org_id: int, project_id: int, release: str, dist: str, debug_ids: list[str]
    ) -> list[StoredFile]:
        """What :func:`store.candidate_files` answers (the same rows, the same order), from the cache."""
        index = self.index(org_id).projects.get(project_id)
        if index is None:
            return []
        found: dict[tuple[str, str], StoredFile] = {}
        if release and (release, dist) in index.releases:
            for item in self._cached(
                ("release", org_id, project_id, release, dist),
                org_id,
                lambda: store.release_files(self.client, org_id, project_id, release, dist),
            ):
                found[(item.bundle_id, item.url)] = item
        for debug_id in sorted(set(debug_ids) & index.debug_ids):
            for item in self._cached(
                ("debug_id", org_id, project_id, debug_id),
                org_id,
                lambda: store.debug_id_files(self.client, org_id, project_id, [debug_id]),  # noqa: B023 - `_cached` calls it at once
            ):
                found[(item.bundle_id, item.url)] = item
        # store's order: newest upload first, then bundle and URL (a re-upload wins).
        by_name = sorted(found.values(), key=lambda f: (f.bundle_id, f.url))
        return sorted(by_name, key=lambda f: f.uploaded_at, reverse=True)


_manifests: weakref.WeakKeyDictionary[Client, Manifest] = weakref.WeakKeyDictionary()
_manifests_lock = threading.Lock()


def manifest_for(client: Client) -> Manifest:
    """The process's manifest cache of ``client``'s warehouse."""
    with _manifests_lock:
        found = _manifests.get(client)
        if found is None:
            found = _manifests[client] = Manifest(client)
        return found
