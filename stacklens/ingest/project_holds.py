"""One project's events held at the front door while a merge or split regroups its issues, and the merged
fingerprints' events redirected as they land (issue #62).

A merge clears the moved issues' insert-time tables and feeds them again from the stored events: an event of
those issues landing in between would be counted twice. The drainer therefore keeps the ``events`` rows of a
held project in the spool (answered, durable) and lands everything else as usual; a merge of one project
never holds another organization's landing. Spans, transactions, logs and the rest feed no table keyed by
issue and are not held.

An event stamps its issue when its request is prepared, from the project's overrides as they were then (read
at most a second before, :mod:`stacklens.control.remembered`). One prepared before the merge committed and
landing after its move would bring the merged issue back. So the merge, once its overrides are committed and
while the project is still held, names the moved fingerprints here (:meth:`ProjectHold.redirect`), and the
drainer stamps every ``events`` row of them with the issue that now holds them as it lands, for
:data:`REDIRECT_SECONDS` — longer than any answered request waits to land in this process.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

from stacklens.ingest.flush_journal import Insert
from stacklens.ingest.landing import Blocks

# How long a merge's redirects apply to the rows landing after it: a request waits at most two minutes for its
# group to be spooled (front_door.WAIT_SECONDS), and its group lands in the next drain.
REDIRECT_SECONDS = 300.0

# An event row's stamp, as the row encoder writes it (stacklens.ingest.normalise.event_row: `issue_id` then
# `fingerprint`, after the payload). The payload is embedded as raw JSON and may hold the same text, so the
# row's own stamp is the last one: every column after it is an escaped string or a list of them.
_STAMP_KEY = b'"issue_id":'
_STAMP = re.compile(rb'"issue_id":(\d+),"fingerprint":"([^"\\]*)"')


class ProjectHold:
    """What a merge holding its project's landing may do inside the hold."""

    def __init__(self, holds: ProjectHolds, project_id: int) -> None:
        self._holds, self.project_id = holds, project_id

    def redirect(self, moves: Mapping[str, int]) -> None:
        """Land the events of ``moves``' fingerprints on the issue each names from now on (overrides
        committed)."""
        self._holds.redirect(self.project_id, moves)


class ProjectHolds:
    """The projects whose events a front door holds (counted: two holds of one project end when both end;
    changed under the door's condition), and the redirects of recent merges (behind a lock of their own: the
    drainer reads them outside the condition)."""

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()
        self._lock = threading.Lock()
        self._redirects: dict[int, tuple[float, dict[str, int]]] = {}

    def held(self) -> frozenset[int]:
        return frozenset(project for project, count in self.counts.items() if count > 0)

    def hold(self, project_id: int) -> None:
        self.counts[project_id] += 1

    def release(self, project_id: int) -> None:
        self.counts[project_id] -= 1
        if self.counts[project_id] <= 0:
            del self.counts[project_id]

    def redirect(self, project_id: int, moves: Mapping[str, int]) -> None:
        now = time.monotonic()
        with self._lock:
            self._forget_old(now)
            _, current = self._redirects.get(project_id, (0.0, {}))
            # A later merge or split of a fingerprint replaces an earlier one's issue.
            self._redirects[project_id] = (now + REDIRECT_SECONDS, {**current, **moves})

    def _forget_old(self, now: float) -> None:
        for project_id in [p for p, (until, _) in self._redirects.items() if until <= now]:
            del self._redirects[project_id]

    def rewrite(self, inserts: list[Insert]) -> list[Insert]:
        """``inserts`` with every ``events`` row of a redirected fingerprint stamped with its issue now (the
        same list, untouched, when no merge is recent: the common case costs one test)."""
        if not self._redirects:
            return inserts
        with self._lock:
            self._forget_old(time.monotonic())
            redirects = {project: dict(moves) for project, (_, moves) in self._redirects.items()}
        if not redirects:
            return inserts
        out: list[Insert] = []
        for insert in inserts:
            if insert.table != "events" or not any(key[1] in redirects for key in insert.keys):
                out.append(insert)
                continue
            rows = tuple(
                restamped(row, redirects.get(key[1]))
                for row, key in zip(insert.rows, insert.keys, strict=True)
            )
            out.append(replace(insert, rows=rows))
        return out


def restamped(row: bytes, moves: Mapping[str, int] | None) -> bytes:
    """An encoded ``events`` row with its issue set to the one ``moves`` names for its fingerprint (the row
    itself when it names none, or that one already)."""
    if not moves:
        return row
    at = row.rfind(_STAMP_KEY)
    found = _STAMP.match(row, at) if at >= 0 else None
    if found is None:
        return row
    target = moves.get(found.group(2).decode("utf-8", "replace"))
    if target is None or int(found.group(1)) == target:
        return row
    return row[: found.start(1)] + str(int(target)).encode() + row[found.end(1) :]


def take_held(blocks: Blocks, held: frozenset[int]) -> Blocks:
    """Take the ``events`` rows of the ``held`` projects out of a drain's ``blocks``; what was taken, by
    block."""
    taken: Blocks = {}
    for block, rows in blocks.items():
        if block[0] != "events":
            continue
        kept = [each for each in rows if each[1] is None or each[1][1] not in held]
        if len(kept) < len(rows):
            taken[block] = [each for each in rows if each[1] is not None and each[1][1] in held]
            rows[:] = kept
    for block in [b for b, rows in blocks.items() if not rows]:
        del blocks[block]
    return taken


def holds_events_of(inserts: list[Insert], held: frozenset[int]) -> bool:
    """Whether ``inserts`` hold an ``events`` row of a ``held`` project."""
    return any(insert.table == "events" and any(key[1] in held for key in insert.keys) for insert in inserts)
