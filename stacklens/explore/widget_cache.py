"""Dashboard widgets' answers kept for a minute, per organization and question, as Grafana and Metabase keep a
panel's answer: a dashboard viewed again within :data:`TTL_SECONDS` — by its author, a colleague, the shared
link's refresh — is drawn from memory instead of asking the engine again. Over 10 M page loads the demo's
dashboard costs the engine 2–3 s of CPU per view (bench/RESULTS.md, "Analyst dashboards"); from here a view
costs milliseconds.

- **Key**: the organization, the projects the question reads, the widget's kind and the question exactly as it
  runs (filter bar applied, JSON with sorted keys) with its window as a length instead of an end, so views a
  few seconds apart share an answer. An entry is only ever found by the organization that asked it, and one
  cache serves one warehouse (:func:`widget_cache_for`: two installations in one process never share answers).
- **Age**: an answer is served for :data:`TTL_SECONDS` after its question was asked, never longer; the page
  says when its answers were taken ("as of"). Errors (a busy organization, a limit) are never kept: the next
  view asks again.
- **One computation per question**: views of a question nobody has answered yet wait for the first one's
  answer instead of each asking the engine (ten people opening a dashboard after a deploy cost one answer, not
  ten, and do not run into the organization's two Explore slots).
- **Bounded**: at most :data:`MAX_CELLS` rows and series points are held; the oldest entries go first.
- **Beside the answers** (:meth:`WidgetCache.kept`): what a page draws with its widgets and reads from the
  same warehouse (a chart's release markers) is kept as long, so it is as fresh as the widgets and a kept
  view asks the engine nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from stacklens.explore.query import Query
from stacklens.explore.run import Result
from stacklens.settings import Settings

# How long an answer is served: a dashboard's windows are days long and its figures move little within a
# minute, while a viewer who just deployed sees the new release within one.
TTL_SECONDS = 60.0
# Rows and series points held by one installation's cache (a widget's answer is tens to a few thousand).
MAX_CELLS = 500_000
# Values kept beside the answers (MAX_KEPT keys, each a page's read: an organization's markers of a window).
MAX_KEPT = 1_000

T = TypeVar("T")

CacheKey = tuple[int, tuple[int, ...], str, str]


@dataclass(frozen=True)
class KeptAnswer:
    """A widget's question as it ran (its window included) and its answers, taken at ``taken_at``."""

    body: dict[str, Any]
    query: Query | None  # None for a SQL widget's statement (stacklens.explore.sql_panel)
    result: Result
    previous: Result | None
    taken_at: datetime
    others: Result | None = None  # the rows beyond a cut line's groups (stacklens.explore.widget_others)


def answer_key(org_id: int, project_ids: list[int], kind: str, body: dict[str, Any]) -> CacheKey:
    """The cache key of a widget's question: ``body`` is the question as run (with ``since`` and ``until``),
    keyed by its window's length rather than its end."""
    question = {k: v for k, v in body.items() if k not in ("since", "until")}
    question["window_seconds"] = (_parse(body["until"]) - _parse(body["since"])).total_seconds()
    text = json.dumps(question, sort_keys=True, default=str)
    return (org_id, tuple(sorted(project_ids)), kind, text)


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _cells(answer: KeptAnswer) -> int:
    results = [r for r in (answer.result, answer.previous) if r is not None]
    return sum(len(r.rows) + sum(len(line["t"]) for line in r.series) for r in results) + 1


class WidgetCache:
    """Kept widget answers of one warehouse."""

    def __init__(
        self,
        ttl: float = TTL_SECONDS,
        max_cells: int = MAX_CELLS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_cells = max_cells
        self.clock = clock
        # key → (expiry on the clock, answer, its cells); oldest first
        self._entries: OrderedDict[CacheKey, tuple[float, KeptAnswer, int]] = OrderedDict()
        self._cells = 0
        self._lock = threading.Lock()
        self._computing: dict[CacheKey, threading.Lock] = {}
        # key → (expiry on the clock, value); oldest first (kept)
        self._kept: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()

    def get(self, key: CacheKey) -> KeptAnswer | None:
        """The kept answer of ``key`` while it is younger than the TTL."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            if found[0] <= self.clock():
                self._drop(key)
                return None
            return found[1]

    def put(self, key: CacheKey, answer: KeptAnswer, asked_at: float | None = None) -> None:
        """Keep ``answer`` for the TTL from ``asked_at`` (on the cache's clock; now when not given): an answer
        is as old as the moment its question was asked, not the moment the engine finished."""
        cells = _cells(answer)
        if cells > self.max_cells:
            return
        with self._lock:
            if key in self._entries:
                self._drop(key)
            while self._entries and self._cells + cells > self.max_cells:
                self._drop(next(iter(self._entries)))
            expires = (self.clock() if asked_at is None else asked_at) + self.ttl
            self._entries[key] = (expires, answer, cells)
            self._cells += cells

    def answer(self, key: CacheKey, compute: Callable[[], KeptAnswer]) -> KeptAnswer:
        """The kept answer of ``key``, else ``compute()``'s, kept; one computation per key at a time (the
        others wait for it). An exception of ``compute`` is raised to its caller and nothing is kept."""
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            computing = self._computing.setdefault(key, threading.Lock())
        with computing:
            found = self.get(key)  # computed while this view waited
            if found is not None:
                return found
            try:
                asked_at = self.clock()
                answer = compute()
                self.put(key, answer, asked_at)  # before the lock is dropped, so a view arriving now finds it
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return answer

    def kept(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s value kept for the TTL under ``key``, which must name everything the value depends
        on (its organization first) and differ from any other caller's. Unlike :meth:`answer`, two views
        asking together may both compute: what is kept here is one small read, not a widget's query."""
        now = self.clock()
        with self._lock:
            found = self._kept.get(key)
            if found is not None and found[0] > now:
                return cast(T, found[1])
        value = compute()
        with self._lock:
            self._kept.pop(key, None)
            while len(self._kept) >= MAX_KEPT:
                self._kept.popitem(last=False)
            self._kept[key] = (now + self.ttl, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._cells = 0
            self._kept.clear()

    def _drop(self, key: CacheKey) -> None:
        _, _, cells = self._entries.pop(key)
        self._cells -= cells


_caches: dict[tuple[str, str], WidgetCache] = {}
_caches_lock = threading.Lock()


def widget_cache_for(settings: Settings) -> WidgetCache:
    """The process's widget cache of ``settings``' warehouse (its URL and database)."""
    name = (settings.resolved_warehouse_url, settings.warehouse_database)
    with _caches_lock:
        found = _caches.get(name)
        if found is None:
            found = _caches[name] = WidgetCache()
        return found
