"""The entrances' admission threads: small bodies on a few threads of their own (never more at once), large
ones on the general pool, the request's context variables carried either way."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

from api.admission import ADMISSION_THREADS, SMALL_BODY_BYTES, admitted

REQUEST = contextvars.ContextVar("request", default="none")


def _where() -> tuple[str, str]:
    return threading.current_thread().name, REQUEST.get()


def test_small_bodies_are_admitted_on_their_own_threads_large_ones_on_the_general_pool() -> None:
    async def run() -> tuple[tuple[str, str], tuple[str, str]]:
        REQUEST.set("envelope 1")
        small = await admitted(SMALL_BODY_BYTES, _where)
        large = await admitted(SMALL_BODY_BYTES + 1, _where)
        return small, large

    (small_thread, small_request), (large_thread, large_request) = asyncio.run(run())
    assert small_thread.startswith("stacklens-admission")
    assert not large_thread.startswith("stacklens-admission") and large_thread != "MainThread"
    assert small_request == large_request == "envelope 1", "the request's context goes with it"


def test_no_more_admissions_run_at_once_than_there_are_threads() -> None:
    running = 0
    most = 0
    guard = threading.Lock()

    def admit(number: int) -> int:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with guard:
            running -= 1
        return number

    async def run() -> list[int]:
        return list(await asyncio.gather(*(admitted(1_000, admit, n) for n in range(3 * ADMISSION_THREADS))))

    started = time.perf_counter()
    assert asyncio.run(run()) == list(range(3 * ADMISSION_THREADS)), "every answer to its own request"
    assert most == ADMISSION_THREADS
    assert time.perf_counter() - started >= 3 * 0.05, "the rest waited their turn"
