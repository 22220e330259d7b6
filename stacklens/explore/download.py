"""Explore's downloads (``?format=csv|parquet|json``): the full result, up to 1,000,000 rows, streamed as the
engine sends its blocks — the answer starts with the engine's first block and never holds the whole result in
memory (one block of ~65,000 rows and a few encoded chunks at a time).

Each download reads on a warehouse connection of its own, opened for it and closed after: the shared client
runs one query at a time and a streaming query holds its connection until its last block is read, so a slow
reader on the shared client would stall every page and ingest insert. The connection's calls all run on one
thread of the download's own (the embedded engine ties an open stream to the thread that opened it); the
encoded chunks reach the web server through a small queue, so a reader that stops reading stops the engine
too. A download holds one of its organization's query slots for as long as it streams: until its last chunk is
handed to the web server or its reader leaves — not until the engine's last block, which comes while the queue
and the sockets still hold the file's tail — and a download nobody takes a chunk of for two minutes is given
up.

Before the first byte the download knows: the query ran (a time or memory limit, or a bad value, still answers
400 with a plain message) and whether it was cut at its row limit — every row carries the count of all groups
(``count() OVER ()``), so ``X-Explore-Truncated`` is a header, not a guess. Cells: CSV text neutralised
against spreadsheet formulas (:mod:`stacklens.csv_cells`); Parquet in one row group per engine block; JSON
as the query answer (``{"columns", "rows", "series": [], "meta"}``, ``meta.rows_read`` null: a stream does
not know it). Numbers stay raw, in the catalog's unit that each column's name carries (``lcp_p75_ms``)."""

from __future__ import annotations

import asyncio
import io
import json
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clickhouse_connect.driver.client import Client

from stacklens.csv_cells import neutralise_frame
from stacklens.explore.datasets import NUMBER
from stacklens.explore.query import Query
from stacklens.explore.run import engine_limits, take_org_slot
from stacklens.explore.sql import BLOCK_ROWS, Limits, table_statement

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("csv", "parquet", "json")
MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
    "json": "application/json",
}
# Encoded chunks waiting for the web server: a reader slower than the engine holds the engine back, not
# memory.
QUEUED_CHUNKS = 4
# How long the producer waits for a stalled reader before it looks whether the download was abandoned.
_PUT_WAIT_SECONDS = 0.5
# A download whose reader never took a chunk for this long is given up (its slot freed): a web server that
# never started the answer's iterator (the client left before the first byte) never tells it the reader is
# gone.
_UNREAD_SECONDS = 120.0
COUNT_FUNCTIONS = ("count", "unique_users")


def schema(query: Query) -> pa.Schema:
    """The download's columns, named as the JSON answer names them: group fields as text (numbers as float64),
    counts as int64, every other aggregate as float64 (null where it has no value)."""
    import pyarrow as pa  # loaded by the first download, not by the server's start (~30 MiB)

    columns: list[pa.Field] = []
    for name in query.group_by:
        number = not name.startswith("tag:") and query.dataset.fields[name].type == NUMBER
        columns.append(pa.field(name, pa.float64() if number else pa.string()))
    for aggregate in query.aggregates:
        counted = aggregate.fn in COUNT_FUNCTIONS
        columns.append(pa.field(aggregate.column, pa.int64() if counted else pa.float64()))
    columns.append(pa.field("samples", pa.int64()))
    return pa.schema(columns)


def _aliases(query: Query) -> list[str]:
    return [
        *(f"g{i}" for i in range(len(query.group_by))),
        *(f"a{i}" for i in range(len(query.aggregates))),
        "samples",
    ]


def _batch(target: pa.Schema, names: list[str], block: list[Any], aliases: list[str]) -> pa.RecordBatch:
    """One engine block (columns by the statement's names) as a record batch of the download's schema; NaN (an
    aggregate of no value) is null, as in the JSON answer."""
    import pyarrow as pa

    by_name = dict(zip(names, block, strict=True))
    arrays = [_array(by_name[alias], column.type) for alias, column in zip(aliases, target, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _array(values: Any, kind: pa.DataType) -> pa.Array:
    """One column as an Arrow array of ``kind`` (float64, int64 or string), NaN as null. Built by polars, not
    ``pa.array``: pyarrow imports pandas on its first ``pa.array`` (~55 MiB resident that the server never
    uses otherwise), polars hands over Arrow memory without it. polars itself is loaded here, by the first
    download, not by the server's start."""
    import polars as pl
    import pyarrow as pa

    dtype = pl.Float64 if pa.types.is_floating(kind) else pl.Int64 if pa.types.is_integer(kind) else pl.String
    series = pl.Series(values=values, dtype=dtype, strict=False, nan_to_null=True)
    return series.to_arrow().cast(kind)


class _Sink(io.RawIOBase):
    """What the Parquet writer writes, handed on chunk by chunk."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def drain(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def encode(
    fmt: str, target: pa.Schema, batches: Iterator[pa.RecordBatch], truncated: bool, started: float
) -> Iterator[bytes]:
    """The file of ``fmt`` for the batches, chunk by chunk (the first chunk before the second batch is
    read)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        sink = _Sink()
        metadata = {b"stacklens.truncated": b"true" if truncated else b"false"}
        with pq.ParquetWriter(sink, target.with_metadata(metadata), compression="zstd") as writer:
            for batch in batches:
                writer.write_batch(batch)
                yield sink.drain()
        yield sink.drain()
        return
    import polars as pl  # loaded by the first download, not by the server's start (~35 MiB)

    if fmt == "csv":
        header = True
        for batch in batches:
            frame = neutralise_frame(pl.from_arrow(batch))  # type: ignore[arg-type]  # a batch converts to a DataFrame
            yield frame.write_csv(include_header=header).encode()
            header = False
        if header:  # no rows: the header alone
            yield pl.from_arrow(target.empty_table()).write_csv().encode()  # type: ignore[union-attr]  # a table: a DataFrame
        return
    yield b'{"columns": ' + json.dumps(target.names).encode() + b', "rows": ['
    first = True
    for batch in batches:
        if batch.num_rows == 0:
            continue
        rows = pl.from_arrow(batch).write_json()  # type: ignore[union-attr]  # a batch converts to a DataFrame
        yield (b"" if first else b",") + rows[1:-1].encode()
        first = False
    elapsed = round((time.monotonic() - started) * 1000, 1)
    meta = {"rows_read": None, "elapsed_ms": elapsed, "truncated": truncated}
    yield b'], "series": [], "meta": ' + json.dumps(meta).encode() + b"}"


@dataclass
class Download:
    """A download under way: what its headers say, and its chunks as its thread produces them."""

    fmt: str
    truncated: bool
    _chunks: queue.Queue[tuple[str, Any]]
    _stop: threading.Event = field(default_factory=threading.Event)
    _progress: list[int] = field(default_factory=lambda: [0])
    _release: Callable[[], None] = lambda: None

    @property
    def rows_sent(self) -> int:
        """Rows encoded so far (the reader may not have taken them all yet)."""
        return self._progress[0]

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.fmt]

    def next_chunk(self) -> bytes | None:
        """The next chunk (blocking until the thread has it); ``None`` at the end. An error after the first
        byte is raised here: the web server can only cut the answer short."""
        while True:
            try:
                kind, value = self._chunks.get(timeout=_PUT_WAIT_SECONDS)
                break
            except queue.Empty:
                if self._stop.is_set():
                    self.cancel()  # given up by the thread (nobody read): the slot is free already
                    return None
        if kind == "chunk":
            return bytes(value)
        # The end (or an error after the first byte): every chunk before it has been handed on, so the
        # organization's slot is free from here, whoever reads (the web server's iterator or a test).
        self.cancel()
        if kind == "error":
            raise value
        return None

    def cancel(self) -> None:
        """The reader is done or went away: the thread stops the engine's stream and closes its connection,
        and the organization's query slot is free again. The slot is held until here, not until the
        engine's last block: a small result is encoded at once, and a slow reader would otherwise hold no
        slot while it reads."""
        self._stop.set()
        self._release()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The chunks for an async web server (each waited for off the event loop); a reader that leaves — the
        server closes this iterator — stops the download."""
        try:
            while (chunk := await asyncio.to_thread(self.next_chunk)) is not None:
                yield chunk
        finally:
            self.cancel()


def open_download(
    connect: Callable[[], Client],
    query: Query,
    org_id: int,
    project_ids: list[int],
    fmt: str,
    limits: Limits | None = None,
    block_rows: int = BLOCK_ROWS,
) -> Download:
    """Start the download on a thread of its own: returns once the engine answered its first block (or raises
        what stopped the query: :class:`~stacklens.explore.run.QueryTooCostly`, a refused slot
        :class:`~stacklens.explore.run.TooManyQueries`, …). ``connect`` opens the download's own warehouse
        connection; the thread closes it when the engine is done, and the organization's query slot is free
        when the
    reader has the last chunk, leaves (:meth:`Download.cancel`) or takes nothing for two minutes. The engine
        answers in blocks of ``block_rows``: one row group of a Parquet file, and what the download holds
        at a time."""
    limits = limits or Limits()
    release = take_org_slot(org_id)  # TooManyQueries here, before any thread starts
    stack = ExitStack()
    chunks: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=QUEUED_CHUNKS)
    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()
    progress = [0]
    target = schema(query)
    aliases = _aliases(query)

    def put(item: tuple[str, Any]) -> bool:
        unread_since = time.monotonic()
        while not stop.is_set():
            try:
                chunks.put(item, timeout=_PUT_WAIT_SECONDS)
                return True
            except queue.Full:
                if time.monotonic() - unread_since > _UNREAD_SECONDS and chunks.full():
                    stop.set()  # nobody reads: given up, as if the reader had left
                    release()
                continue
        return False

    def held_until_read() -> None:
        """After the last chunk is queued: the slot stays taken while the reader still has chunks to take; the
        reader's end (Download.cancel) frees it, or this once nobody took a chunk for _UNREAD_SECONDS."""
        unread_since, left = time.monotonic(), chunks.qsize()
        while not stop.wait(_PUT_WAIT_SECONDS):
            if chunks.qsize() != left:
                unread_since, left = time.monotonic(), chunks.qsize()
            elif time.monotonic() - unread_since > _UNREAD_SECONDS:
                release()
                return

    def produce() -> None:
        started = time.monotonic()
        announced = False
        try:
            with stack:
                batches: Iterator[pa.RecordBatch]
                if not project_ids:
                    truncated = False
                    batches = iter(())
                else:
                    client = connect()
                    stack.callback(client.close)
                    statement = table_statement(
                        query,
                        org_id,
                        project_ids,
                        limits,
                        query.limit,
                        total=True,
                        counts=False,
                        block_rows=block_rows,
                    )
                    with engine_limits(limits):
                        stream = stack.enter_context(
                            client.query_column_block_stream(statement.sql, parameters=statement.parameters)
                        )
                        names = list(stream.source.column_names)
                        first = next(stream, None)
                    total = int(first[names.index("total_rows")][0]) if first and first[0] else 0
                    truncated = total > query.limit
                    batches = _blocks(first, stream, names, target, aliases, limits, progress)
                ready.put(("ready", truncated))
                announced = True
                for chunk in encode(fmt, target, batches, truncated, started):
                    if chunk and not put(("chunk", chunk)):
                        return  # abandoned: leaving the stack closes the stream and the connection
                put(("end", None))
        except Exception as exc:  # noqa: BLE001 - handed to the request (before the first byte) or the reader
            if not announced:
                release()  # the request answers the error: no reader will come
                ready.put(("error", exc))
            else:
                put(("error", exc))
        if announced:
            held_until_read()

    threading.Thread(target=produce, name="explore-download", daemon=True).start()
    kind, value = ready.get()
    if kind == "error":
        raise value
    return Download(fmt, bool(value), chunks, stop, progress, release)


def _blocks(
    first: list[Any] | None,
    stream: Any,
    names: list[str],
    target: pa.Schema,
    aliases: list[str],
    limits: Limits,
    progress: list[int],
) -> Iterator[pa.RecordBatch]:
    block: list[Any] | None = first
    while block is not None:
        batch = _batch(target, names, block, aliases)
        progress[0] += batch.num_rows
        yield batch
        with engine_limits(limits):
            block = next(stream, None)
