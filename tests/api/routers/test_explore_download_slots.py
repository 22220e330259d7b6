"""Explore's download slots through a real uvicorn server: with one key, two concurrent CSV downloads that
read slowly hold the organization's two query slots for as long as they stream, a third answers 429 with
Retry-After, and once a reader has read to the end or left, a new download is answered 200 (docs/explore.md).

The slot is held until the server has sent the last byte (or sees the reader gone), not until the engine's
last block is encoded: the download queues a few encoded chunks ahead of the reader, and before, a reader
still taking the queued tail of its file held no slot — every one of 30 slow readers of a small CSV was
answered 200. The CSV here is ~13 MB so that the tail outlasts the sockets' buffers: a CSV that fits in
them is sent at once whoever reads it, and no server can tell then whether its reader is slow."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from stacklens.explore.run import MAX_CONCURRENT_PER_ORG
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.api.live import serve

GROUPS = 600_000  # ~22 bytes a CSV row: ~13 MB
CHUNK = 64 * 1024
# Where the readers slow down: past it, the engine has encoded every block (the queued chunks and the sockets'
# buffers hold the rest), so only the stream being under way holds the slot.
SLOW_FROM = 7_000_000
BODY = {
    "dataset": "pageloads",
    "since": "2026-11-01T00:00:00Z",
    "until": "2026-11-20T00:00:00Z",
    "group_by": ["url"],
    "aggregates": [{"fn": "count"}],
    "order_by": "url",
}


@pytest.fixture
def live(stores: Settings, org_factory) -> Iterator[tuple[str, dict[str, Any]]]:
    org = org_factory("Slots", "Web Slots")
    # One page load per URL: every URL is a row of the CSV.
    get_warehouse(stores).command(
        f"""INSERT INTO transactions (org_id, project_id, event_id, timestamp, received_at, op, url, duration_ms)
            SELECT {org["org_id"]}, {org["project_id"]}, generateUUIDv4(number),
                   toDateTime64('2026-11-02 00:00:00', 3, 'UTC') + number, now64(3), 'pageload',
                   concat('/checkout/p/', leftPad(toString(number), 7, '0')), number % 1000
            FROM numbers({GROUPS})"""  # noqa: S608 - fixed numbers
    )
    with serve(stores) as base:
        yield base, org


class SlowReader:
    """A CSV download read a chunk at a time on a thread of its own: briskly up to ``slow_from`` bytes,
    then with a pause between chunks, until told to read the rest at once (``hurry``) or to leave
    (``leave``)."""

    def __init__(self, base: str, org: dict[str, Any], slow_from: int = 0) -> None:
        self.slow_from = slow_from
        self.slowed = threading.Event()
        # A small receive buffer, fixed: left to autotune, loopback's can grow to 32 MB (tcp_rmem on some
        # machines) and take the whole file, so the server finished sending while the reader had not read it.
        transport = httpx.HTTPTransport(socket_options=[(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)])
        self.http = httpx.Client(base_url=base, timeout=60, transport=transport)
        self.stack = ExitStack()
        self.stack.callback(self.http.close)
        self.response = self.stack.enter_context(
            self.http.stream(
                "POST",
                "/api/explore/query",
                params={"format": "csv"},
                json={**BODY, "project": org["project"]},
                headers={"Authorization": f"Bearer {org['api_key']}"},
            )
        )
        self.status = self.response.status_code
        self.received = 0
        self.hurry = threading.Event()
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        if self.status == 200:
            self.thread = threading.Thread(target=self._read, daemon=True)
            self.thread.start()
        else:
            self.response.read()

    def _read(self) -> None:
        try:
            for chunk in self.response.iter_bytes(CHUNK):
                self.received += len(chunk)
                if self.received >= self.slow_from:
                    self.slowed.set()
                if self.slowed.is_set() and not self.hurry.is_set():
                    time.sleep(0.5)
        except httpx.HTTPError:
            pass  # left on purpose
        finally:
            self.done.set()

    def read_to_the_end(self) -> None:
        self.hurry.set()
        assert self.done.wait(120), "the download never ended"

    def leave(self) -> None:
        self.stack.close()


def _new_download_is_200(base: str, org: dict[str, Any], seconds: float = 15) -> bool:
    """Whether a new download is answered 200 within ``seconds`` (a freed slot is seen at once, or nearly)."""
    deadline = time.monotonic() + seconds
    while True:
        reader = SlowReader(base, org)
        status = reader.status
        reader.hurry.set()
        if status == 200:
            reader.read_to_the_end()
        reader.leave()
        if status == 200 or time.monotonic() > deadline:
            return status == 200
        time.sleep(0.2)


def test_two_slow_downloads_hold_the_slots_and_a_third_is_429(live) -> None:
    base, org = live
    readers: list[SlowReader] = []
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            readers = list(
                pool.map(lambda _: SlowReader(base, org, SLOW_FROM), range(MAX_CONCURRENT_PER_ORG + 1))
            )
        assert sorted(r.status for r in readers) == [200] * MAX_CONCURRENT_PER_ORG + [429]
        refused = next(r for r in readers if r.status == 429)
        assert refused.response.headers["retry-after"] == "1"
        reading = [r for r in readers if r.status == 200]

        # Both read on into the file's tail, then slowly: the engine is done, the answers are not, still 429.
        for r in reading:
            assert r.slowed.wait(60), "a reader never reached the file's tail"
        time.sleep(2)
        assert all(not r.done.is_set() for r in reading)
        late = SlowReader(base, org)
        late.leave()
        assert late.status == 429

        # One reads to the end: its slot is free again.
        reading[0].read_to_the_end()
        assert reading[0].received > 10_000_000
        assert _new_download_is_200(base, org)
        # The other leaves half-way: its slot is free too, and then two downloads run again at once.
        assert not reading[1].done.is_set()
        reading[1].leave()
        again = [SlowReader(base, org) for _ in range(MAX_CONCURRENT_PER_ORG)]
        if any(
            r.status != 200 for r in again
        ):  # the left reader's slot is freed when the server sees it gone
            for r in again:
                r.hurry.set()
                r.leave()
            assert _new_download_is_200(base, org)
        else:
            for r in again:
                r.leave()
    finally:
        for r in readers:
            r.hurry.set()
            r.leave()
