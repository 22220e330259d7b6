"""Where the entrances admit a request (its key, body, prepared rows and quotas): a small body on the event
loop itself unless a step would block, else on a few threads of their own; a large one on the general pool.

Admitting a one-event request is a few tenths of a millisecond of work under the interpreter lock, and the
hop to a thread and back cost more: a thread woken, turns at the lock taken from the event loop, the loop
woken again with the answer. So a body of at most :data:`LOOP_BODY_BYTES` is admitted on the event loop,
inside :func:`stacklens.blocking.loop_only`: a step that may wait or run long (a control-store or warehouse
read, Redis, a decompression slot, a source map, inflating past 256 KiB) raises there before any effect of
the admission, and it runs again on the threads below (envelopes at 8 senders: 875–932 → 1,032–1,040
accepted a second in alternating runs, p99 19–22 → 16–17 ms; bench/RESULTS.md). On the general
pool (8 threads, see stacklens.cli.serve.WORKER_THREADS) every concurrent sender had a thread of its own, and
eight threads taking turns at the lock paid a futex wake and a context switch at each turn: the server spent
about twice the work's own time admitting an envelope. :data:`ADMISSION_THREADS` threads keep the turns few
and leave the general pool to pages and the API (docs/decisions.md, "The front door"). A body larger than
:data:`SMALL_BODY_BYTES` (a 1,000-line batch, a large envelope) takes its time on the general pool, so it
never holds up the one-event requests queued behind it; an admission that waits (a control-store read once a
second, a decompression slot) holds one of the few threads only for that wait.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

from stacklens.blocking import WouldBlock, loop_only

# Enough that an admission waiting for the control store (or Redis) leaves others running; few enough that
# the threads rarely take the interpreter lock from one another (2 and 4 gave the same rates, 8 less).
ADMISSION_THREADS = 4
# Bodies up to this size (as sent) are admitted on the admission threads: every SDK's one-event envelope,
# OTLP exports of a few hundred spans, /api/ingest batches of tens of lines. Below the size whose lines the
# ingest worker processes prepare (stacklens.ingest.workers.POOL_MIN_RAW_BYTES, judged from a compressed body
# at ten times its size): a batch waiting for those processes never holds an admission thread.
SMALL_BODY_BYTES = 64 * 1024
# Bodies up to this size (as sent) are first admitted on the event loop: an SDK's one-event envelope (2–8 KiB
# gzipped), a one-line batch, a small OTLP export. Its work is bounded by the 256 KiB it may inflate to.
LOOP_BODY_BYTES = 16 * 1024

P = ParamSpec("P")
T = TypeVar("T")

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def admission_threads() -> ThreadPoolExecutor:
    """The process's admission threads (started on first use)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(ADMISSION_THREADS, thread_name_prefix="stacklens-admission")
        return _executor


async def admitted(body_bytes: int, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``func(*args, **kwargs)``: on the event loop for a body of at most :data:`LOOP_BODY_BYTES` when no
    step of it would block, else on the admission threads for a body of at most :data:`SMALL_BODY_BYTES`,
    else on the general pool. The request's context variables go with it, as with the general pool.

    ``func`` must reach every step that may block (:func:`stacklens.blocking.may_block`) before any effect
    of its own, so that a call stopped there can run again on a thread."""
    if body_bytes <= LOOP_BODY_BYTES:
        try:
            with loop_only():
                return func(*args, **kwargs)
        except WouldBlock:
            pass  # nothing of it took effect: run it where it may wait
    if body_bytes > SMALL_BODY_BYTES:
        return await run_in_threadpool(func, *args, **kwargs)
    context = contextvars.copy_context()
    call = functools.partial(context.run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(admission_threads(), call)
