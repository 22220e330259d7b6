"""Original frames for grouping: what ingest hands to grouping v3 for an event whose map was uploaded.

Maps are applied for display when a page is shown; grouping, though, happens once at ingest, and a
fingerprint made of minified names (``app.min.js:xq``) splits an issue with every build. So for each
JavaScript error event the ingest service (the server process, which reads the warehouse) asks the
organization's :class:`~stacklens.sourcemaps.index.MapIndex` (cached, :mod:`stacklens.sourcemaps.manifest`)
whether a map may exist — one set look-up, all an event without a map pays — and, when one may, resolves the
raised exception's frames to their original file, function, in-app flag and source line with the same
matching and cached maps as the issue page. Ingest records the answer in the payload and groups the event by
v3 (:mod:`stacklens.ingest.grouping.v3`).

Never at the line's expense: a map that cannot be read, a frame no map covers or any error leaves the event
grouped by its minified frames (v2) and is logged; resolving (which may fetch and parse a map the process has
not seen) runs in a helper thread, and one batch waits for it at most :data:`WAIT_SECONDS` in all.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.blocking import may_block
from stacklens.ingest.grouping.v1 import exception_values, frames_of
from stacklens.sourcemaps.index import MapIndex
from stacklens.sourcemaps.manifest import Manifest, manifest_for
from stacklens.sourcemaps.sourcemap import MapCache
from stacklens.sourcemaps.symbolicate import (
    DEFAULT_CACHE,
    Resolver,
    context_line,
    original_path,
    original_path_in_app,
    resolve_frames,
)

log = logging.getLogger(__name__)

# A batch's total wait for resolving its events' frames. The first event of a release whose map this process
# has not parsed yet waits for that parse (a 5 MB map: ~0.1–0.4 s); beyond this bound the event is grouped
# by its minified frames and the parse finishes in the background for the events after it.
WAIT_SECONDS = 2.0
_executor = ThreadPoolExecutor(2, thread_name_prefix="sourcemap-grouping")


def original_frames(resolver: Resolver, payload: dict[str, Any]) -> list[dict[str, Any] | None] | None:
    """One entry per frame of the raised exception's stack (outermost first, as v2 groups it): ``None`` for
    a frame no map covers, else its original ``filename``, ``function`` (the name as reported when the map
    names none),
    ``in_app`` and ``context_line``. ``None`` when no frame is mapped (the event keeps v2)."""
    frames: list[dict[str, Any]] = []
    for value in reversed(exception_values(payload)):
        frames = frames_of(value)
        if frames:
            break
    if not frames:
        return None
    answers = resolve_frames(resolver, payload, frames[::-1])[::-1]
    entries: list[dict[str, Any] | None] = []
    for frame, answer in zip(frames, answers, strict=True):
        if answer is None or answer.parsed is None or answer.original is None:
            entries.append(None)
            continue
        path = original_path(answer.original.source)
        entries.append(
            {
                "filename": path,
                # Without an original name from the map the name as reported stands, as on the issue page
                # (a build that did not rename the function reports its original name).
                "function": answer.name or str(frame.get("function") or ""),
                "in_app": original_path_in_app(path),
                "context_line": context_line(answer.parsed, answer.original),
            }
        )
    return entries if any(entries) else None


class SourceMapGrouping:
    """One batch's source-map look-ups for grouping (made per batch: the wait bound is the batch's)."""

    def __init__(
        self,
        client: Client,
        org_id: int,
        *,
        manifest: Manifest | None = None,
        cache: MapCache = DEFAULT_CACHE,
        wait_seconds: float = WAIT_SECONDS,
    ) -> None:
        self.client = client
        self.org_id = org_id
        self.manifest = manifest or manifest_for(client)
        self.cache = cache
        self.wait_seconds = wait_seconds
        self._deadline: float | None = None

    def index(self) -> MapIndex | None:
        """The organization's uploads; ``None`` when it has none (or they cannot be read now)."""
        try:
            found = self.manifest.index(self.org_id)
        except Exception:  # any warehouse error: the batch lands, grouped without maps
            log.warning(
                "source maps: cannot read organization %d's uploads; its events are grouped by their "
                "minified frames",
                self.org_id,
                exc_info=True,
            )
            return None
        return found if found.projects else None

    def __call__(self, project_id: int, payload: dict[str, Any]) -> list[dict[str, Any] | None] | None:
        """The event's original frames (see :func:`original_frames`), or ``None`` to group it as sent."""
        may_block("loading an event's source maps")
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self.wait_seconds
        remaining = self._deadline - now
        event_id = payload.get("event_id")
        if remaining <= 0:
            log.warning(
                "source maps: event %s of project %d grouped by its minified frames: this batch "
                "already waited %.1f s for maps",
                event_id,
                project_id,
                self.wait_seconds,
            )
            return None
        resolver = Resolver(self.client, self.org_id, project_id, self.cache, self.manifest)
        future = _executor.submit(original_frames, resolver, payload)
        try:
            return future.result(timeout=remaining)
        except FutureTimeout:
            log.warning(
                "source maps: event %s of project %d grouped by its minified frames: its maps took over "
                "%.1f s to load (they stay loading for the next events)",
                event_id,
                project_id,
                self.wait_seconds,
            )
        except Exception:  # a map that cannot be read never fails the line
            log.warning(
                "source maps: event %s of project %d grouped by its minified frames: resolving them failed",
                event_id,
                project_id,
                exc_info=True,
            )
        return None
