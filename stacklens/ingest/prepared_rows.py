"""What preparing a batch yields and reads (:mod:`stacklens.ingest.prepare`): rows ready to insert, table by
table (:class:`Prepared`, plain data that pickles cheaply between processes), who sent them
(:class:`Attribution`) and what every line of a batch shares (:class:`BatchContext`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from stacklens.ingest.in_app import NO_RULES, InAppRules
from stacklens.outcomes.counting import Outcomes
from stacklens.scrubbing.apply import NO_RULES as NO_SCRUBBING
from stacklens.scrubbing.apply import ScrubRules
from stacklens.sourcemaps.index import MapIndex

# Tables with one row per stored line (spans are their children), and `sessions`: one row per session update,
# or per bucket and status of a session aggregate (its `dedup_key` names the line, see :func:`line_of`);
# `logs`: one row per log record (keyed by its `dedup_key`).
TABLES = ("events", "transactions", "replays", "replay_segments", "sessions", "logs")


@dataclass(frozen=True)
class Attribution:
    project_id: int
    service: str | None
    app_key_id: int
    replay_enabled: bool = (
        True  # the project's setting: replay lines of a project that turned it off are skipped
    )
    # The project's in-app module prefixes: which frames give an event's culprit (never its grouping).
    in_app: InAppRules = NO_RULES
    # The project's merged fingerprints → the issue that holds them (stacklens.issues.merges): grouping stays
    # as its version made it, only the issue id follows the recorded merge.
    issue_overrides: Mapping[str, int] = field(default_factory=dict, hash=False, compare=False)
    # The project's data scrubbing rules (stacklens.scrubbing), run after the built-in scrubbing on every
    # payload before anything is stored.
    scrubbing: ScrubRules = field(default=NO_SCRUBBING, hash=False, compare=False)


# One row ready for the warehouse: (app_key_id, project_id, event_id, JSONEachRow text of the row, the
# JSONEachRow texts of its child span rows, the row's partition (month of its time, "YYYY-MM"), its
# children's partitions). Plain tuples: a worker hands ~1,000 of them back per batch.
ReadyRow = tuple[int, int, str, bytes, list[bytes], str, list[str]]
# What gives an event's original frames for grouping (stacklens.sourcemaps.grouping.SourceMapGrouping):
# (project id, scrubbed payload) → the payload's `grouping_frames` entries, or None to group it as sent.
OriginalFrames = Callable[[int, dict[str, Any]], list[Any] | None]


@dataclass
class Prepared:
    """A batch (or one part of it) read line by line."""

    tables: dict[str, list[ReadyRow]] = field(default_factory=lambda: {t: [] for t in TABLES})
    columns: dict[str, list[str]] = field(default_factory=dict)  # table → column names of its rows
    lines: int = 0  # every line of the body, blank ones aside: stored, skipped and rejected alike
    stored: int = 0  # lines of a stored type (event, transaction, session, span with INP) that parsed
    attributed: int = 0  # of those, lines whose app key belongs to the organization
    skipped: int = 0  # lines of item types the service does not store
    rejected: list[dict[str, Any]] = field(default_factory=list)
    body_hash: str = ""  # digest of the whole decoded body (set by whoever decoded it)
    # (line number, raw line) of events a worker left to the server process: their source maps may give
    # original frames for grouping, and only the server process reads the maps.
    deferred: list[tuple[int, bytes]] = field(default_factory=list)
    # What became of each line's item, by (project, category, outcome, reason) (stacklens.outcomes): the
    # quotas spend the accepted ones, the tally counts them all.
    outcomes: Outcomes = field(default_factory=Counter)

    def merge(self, other: Prepared) -> None:
        """Append a later part of the same batch (parts keep their lines' numbers)."""
        for table, rows in other.tables.items():
            self.tables.setdefault(table, []).extend(rows)
        for table, names in other.columns.items():
            self.columns.setdefault(table, names)
        self.lines += other.lines
        self.stored += other.stored
        self.attributed += other.attributed
        self.skipped += other.skipped
        self.rejected.extend(other.rejected)
        self.deferred.extend(other.deferred)
        self.outcomes.update(other.outcomes)
        self.body_hash = self.body_hash or other.body_hash


@dataclass(frozen=True)
class BatchContext:
    """What every line of one batch shares."""

    org_id: int
    batch_id: str
    received: float  # epoch seconds
    header_app_key: str | None
    # The warehouse's retention: times it would expire at once are replaced (:mod:`stacklens.ingest.clock`).
    retention_days: int = 90
    # The organization's source-map uploads (None when it has none): which events to group by original frames.
    maps: MapIndex | None = None
    # The `logs` table's own retention (STACKLENS_LOG_RETENTION_DAYS): which log times it keeps.
    log_retention_days: int = 30


def line_of(dedup_key: str) -> str:
    """The line a ``sessions`` row came from: its key up to the bucket and status of an aggregate row."""
    return dedup_key.split(":", 1)[0]


def encode_row(
    who: Attribution,
    table: str,
    row: dict[str, Any],
    children: list[dict[str, Any]],
    prepared: Prepared,
    key: str | None = None,
) -> ReadyRow:
    if table not in prepared.columns:
        prepared.columns[table] = list(row)
    if children and "spans" not in prepared.columns:
        prepared.columns["spans"] = list(children[0])
    return (
        who.app_key_id,
        row["project_id"],
        row["event_id"] if key is None else key,
        orjson.dumps(row),
        [orjson.dumps(child) for child in children],
        row["timestamp"][:7],
        [child["timestamp"][:7] for child in children],
    )
