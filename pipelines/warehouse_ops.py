"""What the assets do in the warehouse: run a named INSERT … SELECT, count what it wrote, keep watermarks.

Watermarks (table ``pipeline_watermarks``) record how far, by ``received_at``, each asset has read the raw
layer. A tick reads rows received after ``watermark - OVERLAP``: re-reading a few seconds is harmless (every
mart row is replaced, not added) and covers an insert that committed with a slightly older ``received_at``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal, get_args

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.client import give_back_engine_memory
from stacklens.warehouse.queries import identifier, load_query

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OVERLAP = timedelta(seconds=30)
WATERMARK_TAG = "stacklens/watermark"
DAYS_TAG = "stacklens/days"
# The marts whose rows a run stamps with its version (``materialized_at``) and counts with
# queries/pipelines/written/stamped.sql: the only tables that query's ``{table:Identifier}`` may name.
StampedTable = Literal["issues", "session_periods"]
STAMPED_TABLES: tuple[str, ...] = get_args(StampedTable)


def asset_tag(base: str, asset: str) -> str:
    """The per-asset form of a run tag (``stacklens/days.pageload_facts``), used when one run serves many
    jobs."""
    return f"{base}.{asset}"


def now_version() -> datetime:
    return datetime.now(UTC)


def run_insert(client: Client, name: str, parameters: dict[str, Any]) -> None:
    """Run ``queries/pipelines/<name>.sql`` (an ``INSERT … SELECT``) with server-side parameters; the memory
    it freed in an embedded engine goes back at once (the next statement of a run seldom reuses it)."""
    client.command(load_query(f"pipelines/{name}"), parameters=parameters)
    give_back_engine_memory(client)


def rows_written(client: Client, table: StampedTable, version: datetime) -> int:
    """Rows of ``table`` the run stamped with ``version``."""
    parameters = {"table": identifier(table, STAMPED_TABLES), "v": version}
    return int(client.query(load_query("pipelines/written/stamped"), parameters=parameters).result_rows[0][0])


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def get_watermarks(client: Client, assets: Iterable[str]) -> dict[str, datetime]:
    names = list(assets)
    rows = client.query(load_query("pipelines/watermarks"), parameters={"names": names}).result_rows
    found = {str(a): _utc(w) for a, w in rows}
    return {name: found.get(name, EPOCH) for name in names}


def read_since(client: Client, assets: Iterable[str]) -> datetime:
    """Where a run over ``assets`` starts reading: the oldest of their watermarks, minus the overlap."""
    oldest = min(get_watermarks(client, assets).values())
    return EPOCH if oldest <= EPOCH else oldest - OVERLAP


def set_watermark(client: Client, asset: str, watermark: datetime) -> None:
    client.command(
        load_query("pipelines/pipeline_watermarks"),
        parameters={"asset": asset, "watermark": _utc(watermark), "updated_at": datetime.now(UTC)},
    )


def max_received(client: Client) -> datetime | None:
    value = client.query(load_query("pipelines/max_received")).result_rows[0][0]
    value = _utc(value) if value is not None else None
    return None if value is None or value <= EPOCH else value


def dirty_days(client: Client, tables: list[str], since: datetime) -> list[date]:
    rows = client.query(
        load_query("pipelines/dirty_days"), parameters={"tables": tables, "since": since}
    ).result_rows
    return [row[0] for row in rows]


def dirty_hours(
    client: Client, tables: list[str], since: datetime, start: datetime, end: datetime
) -> list[datetime]:
    """Hours in ``[start, end)`` that received rows of ``tables`` after ``since``."""
    rows = client.query(
        load_query("pipelines/dirty_hours"),
        parameters={"tables": tables, "since": since, "start": start, "end": end},
    ).result_rows
    return [_utc(row[0]) for row in rows]


def hour_ranges(hours: Iterable[datetime]) -> list[tuple[datetime, datetime]]:
    """Contiguous runs of hours as half-open ``[first, last + 1 hour)`` ranges."""
    out: list[tuple[datetime, datetime]] = []
    for hour in sorted(set(hours)):
        if out and out[-1][1] == hour:
            out[-1] = (out[-1][0], hour + timedelta(hours=1))
        else:
            out.append((hour, hour + timedelta(hours=1)))
    return out


def day_ranges(days: Iterable[date]) -> list[tuple[date, date]]:
    """Contiguous runs of days as half-open ``[first, last + 1 day)`` ranges."""
    out: list[tuple[date, date]] = []
    for day in sorted(set(days)):
        if out and out[-1][1] == day:
            out[-1] = (out[-1][0], day + timedelta(days=1))
        else:
            out.append((day, day + timedelta(days=1)))
    return out


def day_bounds(start: date, end: date) -> dict[str, datetime]:
    """Query parameters for ``[start, end)`` as UTC datetimes."""
    return {
        "start": datetime(start.year, start.month, start.day, tzinfo=UTC),
        "end": datetime(end.year, end.month, end.day, tzinfo=UTC),
    }
