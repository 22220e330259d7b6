"""Where the entrances admit a request (its key, body, prepared rows and quotas) off the event loop: small
bodies on a few threads of their own, large ones on the general thread pool.

Admitting a one-event request is about half a millisecond of work under the interpreter lock. On the general
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

# Enough that an admission waiting for the control store (or Redis) leaves others running; few enough that
# the threads rarely take the interpreter lock from one another (2 and 4 gave the same rates, 8 less).
ADMISSION_THREADS = 4
# Bodies up to this size (as sent) are admitted on the admission threads: every SDK's one-event envelope,
# OTLP exports of a few hundred spans, /api/ingest batches of tens of lines. Below the size whose lines the
# ingest worker processes prepare (stacklens.ingest.workers.POOL_MIN_RAW_BYTES, judged from a compressed body
# at ten times its size): a batch waiting for those processes never holds an admission thread.
SMALL_BODY_BYTES = 64 * 1024

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
    """``func(*args, **kwargs)`` run off the event loop: on the admission threads for a body of at most
    :data:`SMALL_BODY_BYTES`, else on the general pool. The request's context variables go with it, as
    with the general pool."""
    if body_bytes > SMALL_BODY_BYTES:
        return await run_in_threadpool(func, *args, **kwargs)
    context = contextvars.copy_context()
    call = functools.partial(context.run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(admission_threads(), call)
