"""Where the entrances admit a request: a small body on the event loop unless a step would block (then on the
admission threads, from the start), other bodies on a few threads of their own (never more at once), large
ones on the general pool, the request's context variables carried each way."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from api.admission import ADMISSION_THREADS, LOOP_BODY_BYTES, SMALL_BODY_BYTES, admitted
from stacklens.blocking import may_block

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
        return list(
            await asyncio.gather(
                *(admitted(LOOP_BODY_BYTES + 1, admit, n) for n in range(3 * ADMISSION_THREADS))
            )
        )

    started = time.perf_counter()
    assert asyncio.run(run()) == list(range(3 * ADMISSION_THREADS)), "every answer to its own request"
    assert most == ADMISSION_THREADS
    assert time.perf_counter() - started >= 3 * 0.05, "the rest waited their turn"


def test_a_small_body_is_admitted_on_the_event_loop() -> None:
    async def run() -> tuple[tuple[str, str], str]:
        REQUEST.set("envelope 2")
        return await admitted(LOOP_BODY_BYTES, _where), threading.current_thread().name

    (thread, request), loop_thread = asyncio.run(run())
    assert thread == loop_thread and request == "envelope 2"


def test_an_admission_that_would_block_runs_again_on_a_thread_from_the_start() -> None:
    steps: list[tuple[str, str]] = []

    def admit() -> str:
        steps.append(("started", threading.current_thread().name))
        may_block("a control-store read")  # on the loop this stops it; on a thread it may wait
        steps.append(("read", threading.current_thread().name))
        return "admitted"

    async def run() -> tuple[str, str]:
        return await admitted(100, admit), threading.current_thread().name

    answer, loop_thread = asyncio.run(run())
    assert answer == "admitted"
    assert steps[0] == ("started", loop_thread)
    assert [step for step, _ in steps] == ["started", "started", "read"], "nothing past the mark on the loop"
    assert steps[1][1].startswith("stacklens-admission") and steps[2][1] == steps[1][1]


def test_an_admission_refused_on_the_loop_is_refused_once() -> None:
    calls: list[str] = []

    def admit() -> str:
        calls.append(threading.current_thread().name)
        raise ValueError("the envelope header is not JSON")

    async def run() -> None:
        await admitted(100, admit)

    with pytest.raises(ValueError, match="not JSON"):
        asyncio.run(run())
    assert len(calls) == 1 and calls[0] == "MainThread", "a refusal is an answer, not a reason to run again"
