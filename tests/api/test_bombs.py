"""Decompression bombs through a real uvicorn server: 1 GiB of newlines in every Content-Encoding.

Each is answered 413 for under a second of CPU (the server's and its ingest workers': 0.1–0.3 s on a quiet
machine; inflating the whole gigabyte would take seconds), the server's resident memory growing by less than
100 MB; a key that is not the project's is refused before anything is inflated. CPU, not wall time, is held to
the second: beside other tests on two cores, a request's wall time grew past it (1.04 s once) while its work
did not; the wall time is held to :data:`WALL_SECONDS`. The server runs in this process (tests/api/live),
so its memory is this process's: :class:`~tests.stacklens.ingest.bombs.PeakGrowth` resets the peak before
each request and reads it after. ``/api/ingest`` hands large bodies to its worker processes (started before
the requests, as the first large batch starts them): their peaks are read the same way.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from stacklens.ingest.workers import pool_for
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.stacklens.ingest.bombs import PeakGrowth, bomb

# (the bomb, the Content-Encoding that names it)
ENVELOPE_BOMBS = [
    ("gzip", "gzip"),
    ("deflate", "deflate"),
    ("deflate-raw", "deflate"),
    ("br", "br"),
    ("zstd", "zstd"),
]
UNKNOWN_KEY = "stacklens_app_" + "Z" * 24
WALL_SECONDS = 5.0


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    """The Sentry endpoints refuse bombs before anything reaches the warehouse: no tables needed."""
    with serve(settings) as url:
        yield url


@pytest.fixture
def ingest_server(settings: Settings) -> Iterator[str]:
    apply_migrations(settings)
    pool = pool_for(settings)
    assert pool is not None, "two cores or more: /api/ingest has worker processes"
    pool.warm_up()  # as the first large batch does, in the background
    with serve(settings) as url:
        yield url


def _cpu_seconds(pids: list[int]) -> float:
    """The CPU seconds (user and system) this process and the processes ``pids`` (its ingest workers) have
    spent so far."""
    total = time.process_time()
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):  # exited since
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    return total


def _timed(
    http: httpx.Client, url: str, workers: list[int] | None = None, **kwargs: Any
) -> tuple[httpx.Response, float, float]:
    """The answer, the CPU seconds this process and ``workers`` spent on it, and the growth of this process's
    peak memory (MiB) meanwhile; a request slower than :data:`WALL_SECONDS` fails here."""
    with PeakGrowth() as peak:
        started, spent = time.perf_counter(), _cpu_seconds(workers or [])
        answer = http.post(url, **kwargs)
        spent, elapsed = _cpu_seconds(workers or []) - spent, time.perf_counter() - started
    assert elapsed < WALL_SECONDS, f"{url}: {elapsed:.2f} s"
    return answer, spent, peak.mib


def test_envelope_and_store_bombs_are_413_fast_and_small(server: str, make_org) -> None:
    org = make_org()
    with httpx.Client(base_url=server, timeout=30) as http:
        assert http.options(f"/api/{org['project_id']}/envelope/").status_code == 200  # connected
        for name, coding in ENVELOPE_BOMBS:
            body = bomb(name)  # built before anything is measured
            headers = {"Content-Encoding": coding}
            for endpoint in ("envelope", "store"):
                url = f"/api/{org['project_id']}/{endpoint}/"
                answer, cpu, grown = _timed(
                    http, url, params={"sentry_key": org["app_key"]}, content=body, headers=headers
                )
                assert answer.status_code == 413, answer.text
                assert "exceeds 64 MiB" in answer.json()["detail"]
                assert answer.headers["access-control-allow-origin"] == "*", "SDKs read the refusal"
                assert cpu < 1.0, f"{endpoint} {name}: {cpu:.2f} s of CPU"
                assert grown < 100, f"{endpoint} {name}: the server grew by {grown:.0f} MiB"

                # A key that is no key of this project: refused before a byte is inflated.
                answer, cpu, grown = _timed(
                    http, url, params={"sentry_key": UNKNOWN_KEY}, content=body, headers=headers
                )
                assert answer.status_code == 403, answer.text
                assert cpu < 1.0 and grown < 10, (endpoint, name, cpu, grown)
            # No key in the URL: only the envelope header (the first line) is inflated; it names no key.
            answer, cpu, grown = _timed(
                http, f"/api/{org['project_id']}/envelope/", content=body, headers=headers
            )
            assert answer.status_code == 401 and "no DSN key" in answer.json()["detail"], answer.text
            # The first line's decoder (a brotli window is 4 MiB here) and nothing more.
            assert cpu < 1.0 and grown < 20, (name, cpu, grown)


def test_a_key_in_the_envelope_header_is_checked_before_the_rest_is_inflated(server: str, make_org) -> None:
    import brotli

    org = make_org()
    piece = b"\n" * (1024 * 1024)
    for dsn_key, status in ((UNKNOWN_KEY, 403), (org["app_key"], 413)):
        compressor = brotli.Compressor(quality=1)
        header = f'{{"dsn": "http://{dsn_key}@127.0.0.1/{org["project_id"]}"}}\n'.encode()
        body = b"".join([compressor.process(header)] + [compressor.process(piece) for _ in range(256)])
        body += compressor.finish()  # the header, then 256 MiB of newlines
        with httpx.Client(base_url=server, timeout=30) as http:
            answer, cpu, grown = _timed(
                http, f"/api/{org['project_id']}/envelope/", content=body, headers={"Content-Encoding": "br"}
            )
        assert answer.status_code == status, answer.text
        assert cpu < 1.0 and grown < 100, (status, cpu, grown)
        if status == 403:  # the header line's decoder alone (a 4 MiB brotli window), not the 64 MiB
            assert grown < 20, f"an unknown key in the header cost {grown:.0f} MiB"


def test_bombs_sent_at_once_share_two_slots(server: str, make_org) -> None:
    """Eight brotli bombs at once: each holds 64 MiB while it inflates, but only two inflate at a time (eight
    at once would be 512 MiB)."""
    org = make_org()
    body = bomb("br")
    url = f"{server}/api/{org['project_id']}/envelope/"

    def send(_: int) -> int:
        answer = httpx.post(
            url,
            params={"sentry_key": org["app_key"]},
            content=body,
            headers={"Content-Encoding": "br"},
            timeout=60,
        )
        return answer.status_code

    with PeakGrowth() as peak, ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(send, range(8)))
    assert statuses == [413] * 8
    assert peak.mib < 4 * 64, f"eight bombs at once grew the server by {peak.mib:.0f} MiB"


def _workers() -> list[int]:
    """The process ids of this process's running children (the ingest worker processes). A child an earlier
    test started that has exited but is not reaped yet (a zombie: no memory, no ``VmRSS``) is not one."""
    found: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        try:
            found += [int(pid) for pid in (task / "children").read_text().split()]
        except FileNotFoundError:  # a thread that ended since the listing
            continue
    return [pid for pid in found if _running(pid)]


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # reaped since the listing
        return False
    return "\nVmRSS:" in status and "\nState:\tZ" not in status


def test_ingest_bombs_are_413_fast_and_small(ingest_server: str, make_org) -> None:
    org = make_org()
    workers = _workers()
    assert len(workers) >= 2
    with httpx.Client(base_url=ingest_server, timeout=30) as http:
        assert http.get("/api/health").status_code == 200
        for coding in ("gzip", "zstd"):
            body = bomb(coding)
            headers = {"Authorization": f"Bearer {org['api_key']}", "Content-Encoding": coding}
            with PeakGrowth(workers) as in_workers:
                answer, cpu, grown = _timed(http, "/api/ingest", workers, content=body, headers=headers)
            assert answer.status_code == 413 and "exceeds 64 MiB" in answer.json()["detail"], answer.text
            assert cpu < 1.0, f"{coding}: {cpu:.2f} s of CPU"
            assert grown < 100, f"{coding}: the server grew by {grown:.0f} MiB"
            # A large body (the 1 MB gzip one) is decoded by each worker process, bounded the same way; a
            # small one (the 32 KB zstd one) in the server.
            assert in_workers.mib < 100, in_workers.each

            unknown = {**headers, "Authorization": "Bearer stacklens_api_" + "Z" * 32}
            answer, cpu, grown = _timed(http, "/api/ingest", workers, content=body, headers=unknown)
            assert answer.status_code == 401, answer.text
            assert cpu < 1.0 and grown < 10, (coding, cpu, grown)
