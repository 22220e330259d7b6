"""Explore's streamed downloads against the real embedded engine: 200,000 groups stream as CSV, Parquet and
JSON on a connection of their own; the first chunk comes before the engine's last block is read, a reader
that stops reading holds the engine back (bounded memory), a reader that leaves frees the organization's
query slot, and the cut at the row limit is known before the first byte."""

from __future__ import annotations

import io
import json
import time

import polars as pl
import pyarrow.parquet as pq
import pytest

from stacklens.explore.download import QUEUED_CHUNKS, open_download
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import TooManyQueries, org_slot
from stacklens.settings import Settings
from stacklens.warehouse.client import own_client
from tests.stacklens.performance.perf_seed import migrated

GROUPS = 200_000
BLOCK = 10_000  # rows per engine block: small enough that a stalled reader leaves most of the rows unread
BODY = {
    "dataset": "pageloads",
    "since": "2026-11-01T00:00:00Z",
    "until": "2026-11-10T00:00:00Z",
    "group_by": ["url"],
    "aggregates": [{"fn": "count"}, {"fn": "avg", "metric": "load_time_ms"}, {"fn": "p75", "metric": "lcp"}],
    "order_by": "url",
}


@pytest.fixture
def loaded(settings: Settings):
    client = migrated(settings)
    # One page load per URL (a third without LCP: null, not 0), and a URL that a spreadsheet would run.
    client.command(
        f"""INSERT INTO transactions (org_id, project_id, event_id, timestamp, received_at, op, url, duration_ms,
                                     measurements)
            SELECT 1, 11, generateUUIDv4(number), toDateTime64('2026-11-02 00:00:00', 3, 'UTC') + number,
                   now64(3), 'pageload',
                   if(number = 0, '=HYPERLINK("x")', concat('/p/', leftPad(toString(number), 7, '0'))),
                   number % 1000, if(number % 3 = 0, map(), map('lcp', toFloat64(number % 5000)))
            FROM numbers({GROUPS})"""  # noqa: S608 - a fixed number
    )
    return client


def _connect(settings: Settings):
    return lambda: own_client(settings.resolved_warehouse_url, settings.warehouse_database)


def _all(download) -> bytes:
    parts = []
    while (chunk := download.next_chunk()) is not None:
        parts.append(chunk)
    return b"".join(parts)


def test_parquet_streams_every_row_block_by_block(settings: Settings, loaded) -> None:
    query = parse_query(BODY, download=True)
    started = time.monotonic()
    download = open_download(_connect(settings), query, 1, [11], "parquet", block_rows=BLOCK)
    first = download.next_chunk()
    first_at = time.monotonic() - started
    assert first and first.startswith(b"PAR1") and download.truncated is False
    # A reader that does not read: the thread stops after a few chunks (one engine block each), not at the
    # end.
    time.sleep(1.0)
    assert download.rows_sent <= (QUEUED_CHUNKS + 2) * BLOCK < GROUPS
    rest = _all(download)
    total = time.monotonic() - started
    frame = pl.read_parquet(io.BytesIO(first + rest))
    assert pq.ParquetFile(io.BytesIO(first + rest)).metadata.num_row_groups == GROUPS // BLOCK
    assert frame.columns == ["url", "count", "load_avg_ms", "lcp_p75_ms", "samples"]
    assert frame.height == GROUPS and frame["count"].sum() == GROUPS
    assert frame["lcp_p75_ms"].null_count() == (GROUPS + 2) // 3  # no LCP: null, never 0
    assert frame.row(0, named=True)["url"] == "/p/0000001" and frame["url"][-1] == '=HYPERLINK("x")'
    assert first_at < total
    # The thread closed its connection and gave the organization's slot back.
    with org_slot(1), org_slot(1):
        pass


def test_csv_and_json_hold_the_same_rows_and_neutralise_formulas(settings: Settings, loaded) -> None:
    query = parse_query({**BODY, "limit": 1000, "order_by": "-url"}, download=True)
    text = _all(open_download(_connect(settings), query, 1, [11], "csv")).decode()
    lines = text.splitlines()
    assert lines[0] == "url,count,load_avg_ms,lcp_p75_ms,samples"
    assert len(lines) == 1001 and lines[1].startswith('"\'=HYPERLINK(""x"")",1,0.0,,1')
    cut = open_download(_connect(settings), query, 1, [11], "json")
    assert cut.truncated is True  # 200,000 groups, 1,000 asked for: known before the first byte
    data = json.loads(_all(cut))
    assert data["columns"] == ["url", "count", "load_avg_ms", "lcp_p75_ms", "samples"]
    assert len(data["rows"]) == 1000 and data["meta"]["truncated"] is True
    assert data["rows"][0] == {
        "url": '=HYPERLINK("x")',
        "count": 1,
        "load_avg_ms": 0.0,
        "lcp_p75_ms": None,
        "samples": 1,
    }


def test_a_reader_that_leaves_frees_the_slot(settings: Settings, loaded) -> None:
    query = parse_query(BODY, download=True)
    download = open_download(_connect(settings), query, 1, [11], "csv")
    assert download.next_chunk()
    download.cancel()
    deadline = time.monotonic() + 5
    while True:
        try:
            with org_slot(1, most=1):
                break
        except TooManyQueries:
            assert time.monotonic() < deadline, "the slot was not given back"
            time.sleep(0.1)


def test_empty_and_unscoped_downloads(settings: Settings, loaded) -> None:
    query = parse_query(
        {**BODY, "since": "2026-10-01T00:00:00Z", "until": "2026-10-02T00:00:00Z"}, download=True
    )
    assert _all(open_download(_connect(settings), query, 1, [11], "csv")).decode() == (
        "url,count,load_avg_ms,lcp_p75_ms,samples\n"
    )
    nothing = pl.read_parquet(io.BytesIO(_all(open_download(_connect(settings), query, 1, [], "parquet"))))
    assert nothing.height == 0 and nothing.columns[0] == "url"
