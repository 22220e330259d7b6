"""Insert-time counters made equal to the stored events again after a crash.

Materialized views feed the issue counters (issue_live_counters, issue_totals_daily, issue_facets_daily,
issue_tags_daily), release_error_counts, issue_rollup, issue_element_arrivals and the
arrival marks (raw_arrival_hours, raw_received) in the INSERT that stores the rows. The engine commits the
stored rows' part first, then each view's part in turn: a process killed in between keeps the rows and
loses those view blocks (measured: a kill during the second of three views keeps the rows and the first
view's block only). The ingest service's resend of such a batch finds its events stored and answers them as
duplicates, so the counters would stay short for good.

What can be short is known. A *landing attempt* of the ingest service stores rows stamped with its batch id
and receive time, and its last write is the batch record (``ingest_batches``, same three values), after every
insert and the views they fed. Rows no record carries belong to an attempt still landing or to a *dead* one:
one older than :data:`IN_FLIGHT_LIMIT`, or whose batch was recorded later by a resend. Only the keys (issue,
issue-day, facet, tag pair, release) holding rows of dead attempts are compared with the stored events, and
each shortfall is added back as one correction row (the sum short by exactly that much, plus the aggregate
states of the key's stored events, which change nothing where they were already counted). A key holding rows
of an attempt still landing is left for the next run: those rows' view blocks may be on their way. A finished
attempt is never compared, so a run without a crash behind it costs two small queries. A dead attempt handled
is recorded (``event_counter_repairs``) and never handled again.

Never subtracted: a counter above the stored events (an issue whose oldest events the retention removed keeps
counting them) is reported as ``excess``; a shortfall smaller than what the retention removed from such an
issue cannot be seen."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import load_query

# An attempt without a record this long after its receive time is dead: a landing takes seconds, and the
# shipper gives a request up after its timeout (1 minute by default) and sends it again.
IN_FLIGHT_LIMIT = timedelta(minutes=5)
_MS = timedelta(milliseconds=1)


@dataclass(frozen=True)
class Attempt:
    """A landing attempt with rows stored and no batch record of its own."""

    source: str  # events | transactions
    org_id: int
    batch_id: str
    received_at: datetime
    rows: int

    @property
    def key(self) -> tuple[int, str, datetime]:
        return (self.org_id, self.batch_id, self.received_at)


@dataclass(frozen=True)
class CountedTable:
    """A table whose insert-time rows count events: how its comparison keys look."""

    name: str
    key_size: int  # the leading columns of a comparison row that form the key
    issue_keyed: bool = True  # keys start with (project_id, issue_id)


COUNTED_TABLES = (
    CountedTable("issue_live_counters", 2),
    CountedTable("issue_totals_daily", 3),
    CountedTable("issue_facets_daily", 7),
    CountedTable("issue_tags_daily", 5),
    CountedTable("release_error_counts", 2, issue_keyed=False),
)


@dataclass(frozen=True)
class TableComparison:
    """One counted table against the stored events, over the keys holding rows of dead attempts."""

    table: str
    keys: int  # keys compared
    short_keys: int  # keys that counted fewer events than are stored (before the repair)
    missing: int  # events stored but not counted (before the repair)
    excess: int  # events counted above the stored ones (reported, never subtracted)
    in_flight: int  # keys left for the next run: rows of an attempt still landing
    remaining: int  # events still missing after the repair


@dataclass
class CounterRepair:
    """What one run found and did."""

    dead: list[Attempt] = field(default_factory=list)
    in_flight: list[Attempt] = field(default_factory=list)
    tables: list[TableComparison] = field(default_factory=list)
    resume_from: datetime | None = None  # where the next run reads from (None: where this one stopped)

    @property
    def missing(self) -> int:
        return sum(t.missing for t in self.tables)

    @property
    def remaining(self) -> int:
        return sum(t.remaining for t in self.tables)

    @property
    def repaired_keys(self) -> int:
        return sum(t.short_keys for t in self.tables)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def find_attempts(
    client: Client, since: datetime, until: datetime, young: datetime
) -> tuple[list[Attempt], list[Attempt], list[tuple[int, str, datetime]]]:
    """The dead and the still-landing attempts with rows received in ``(since, until]``, and the attempts
    known finished, dead or already handled (``settled``) among those received after ``young``.

    The records are read first: a record seen then was written, with every view block of its attempt, before
    any later read, so a row the comparisons count as finished has its blocks in the tables they read.
    """
    known = [
        (str(kind), (int(org), str(batch), _utc(received)))
        for kind, org, batch, received in client.query(
            load_query("pipelines/event_counters_records"), parameters={"young": young}
        ).result_rows
    ]
    recorded_at: dict[tuple[int, str], datetime] = {}
    for kind, (org, batch, received) in known:
        if kind == "record":
            recorded_at[(org, batch)] = max(received, recorded_at.get((org, batch), received))
    dead: list[Attempt] = []
    in_flight: list[Attempt] = []
    rows = client.query(
        load_query("pipelines/event_counters_attempts"), parameters={"since": since, "until": until}
    ).result_rows
    for source, org, batch, received, count in rows:
        attempt = Attempt(str(source), int(org), str(batch), _utc(received), int(count))
        resent = recorded_at.get((attempt.org_id, attempt.batch_id))
        if attempt.received_at <= young or (resent is not None and resent > attempt.received_at):
            dead.append(attempt)
        else:
            in_flight.append(attempt)
    settled = [key for _, key in known] + [a.key for a in dead]
    return dead, in_flight, settled


def _compare(client: Client, table: CountedTable, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Rows ``(*key, stored, counted, in_flight)`` of ``table``'s comparison query."""
    rows = client.query(load_query(f"pipelines/{table.name}_compare"), parameters=parameters).result_rows
    return [(*row[: table.key_size], *(int(v) for v in row[table.key_size :])) for row in rows]


def _repair(client: Client, table: CountedTable, short: list[tuple[tuple[Any, ...], int]]) -> None:
    keys = [key for key, _ in short]
    parameters: dict[str, Any] = {
        "keys": keys,
        "missing": [missing for _, missing in short],
        "projects": sorted({int(key[0]) for key in keys}),
    }
    if table.issue_keyed:
        parameters["issues"] = sorted({int(key[1]) for key in keys})
    client.command(load_query(f"pipelines/{table.name}_repair"), parameters=parameters)


def compare_and_repair(client: Client, table: CountedTable, parameters: dict[str, Any]) -> TableComparison:
    """Compare ``table`` with the stored events over the keys of the dead attempts, add each shortfall back
    and compare again."""
    rows = _compare(client, table, parameters)
    size = table.key_size
    landing = [r for r in rows if r[size + 2] > 0]
    settled = [r for r in rows if r[size + 2] == 0]
    short = [(r[:size], r[size] - r[size + 1]) for r in settled if r[size] > r[size + 1]]
    excess = sum(r[size + 1] - r[size] for r in settled if r[size + 1] > r[size])
    missing = sum(n for _, n in short)
    remaining = missing
    if short:
        _repair(client, table, short)
        again = _compare(client, table, parameters)
        remaining = sum(r[size] - r[size + 1] for r in again if r[size + 2] == 0 and r[size] > r[size + 1])
    return TableComparison(table.name, len(rows), len(short), missing, excess, len(landing), remaining)


def repair_counters(
    client: Client,
    since: datetime,
    until: datetime,
    *,
    arrived: datetime,
    in_flight_limit: timedelta = IN_FLIGHT_LIMIT,
) -> CounterRepair:
    """Compare the insert-time tables with the rows received in ``(since, until]`` of dead attempts and add
    back what they miss; ``arrived`` stamps the rows fed again (the arrival marks the marts' runs read)."""
    young = until - in_flight_limit
    dead, in_flight, settled = find_attempts(client, since, until, young)
    report = CounterRepair(dead=dead, in_flight=in_flight)
    dead_events = [a.key for a in dead if a.source == "events"]
    dead_transactions = [a.key for a in dead if a.source == "transactions"]
    window: dict[str, Any] = {"since": since, "until": until}
    if dead_events:
        parameters = {**window, "dead": dead_events, "young": young, "settled": settled}
        report.tables = [compare_and_repair(client, t, parameters) for t in COUNTED_TABLES]
        fed_again = {**window, "dead": dead_events}
        client.command(load_query("pipelines/issue_rollup_repair"), parameters=fed_again)
        client.command(
            load_query("pipelines/issue_element_arrivals_repair"),
            parameters={**fed_again, "arrived": arrived},
        )
    if dead_events or dead_transactions:
        marks = {**window, "dead": dead_events, "dead_transactions": dead_transactions, "arrived": arrived}
        client.command(load_query("pipelines/raw_arrival_hours_repair"), parameters=marks)
        client.command(load_query("pipelines/raw_received_repair"), parameters=marks)
    # Rows still landing, and dead rows whose keys were left because of them (or are still short after the
    # repair: a comparison that met a landing between its reads), are read again next run; the dead attempts
    # handled in full are recorded, so the run that re-reads the last seconds does not handle them again.
    unsettled = any(t.in_flight or t.remaining for t in report.tables)
    held = [a.received_at for a in in_flight]
    handled = [a for a in dead if a.source == "transactions" or not unsettled]
    if unsettled:
        held += [a.received_at for a in dead if a.source == "events"]
    if handled:
        client.command(
            load_query("pipelines/event_counter_repairs"),
            parameters={"attempts": [(a.source, *a.key, a.rows) for a in handled], "repaired_at": arrived},
        )
    report.resume_from = min(held) - _MS if held else None
    return report
