"""The front door's wait, on the event loop: a request hands its admitted rows to the door and awaits their
landing without holding a thread (stacklens.ingest.front_door answers many requests per spool write; a thread
blocked per request would cap concurrent senders at the thread pool's size and pay a thread switch each)."""

from __future__ import annotations

import asyncio

from stacklens.errors import Unavailable
from stacklens.ingest.front_door import WAIT_SECONDS
from stacklens.ingest.service import Admitted, BatchResult


async def landed(admitted: BatchResult | Admitted) -> BatchResult:
    """The answer of ``admitted`` once the front door has its rows (a replay's answer at once)."""
    if isinstance(admitted, BatchResult):
        return admitted
    loop = asyncio.get_running_loop()
    taken: asyncio.Future[None] = loop.create_future()

    def tell() -> None:  # in the door's thread
        loop.call_soon_threadsafe(_resolve, taken)

    admitted.submit(tell)
    try:
        await asyncio.wait_for(taken, WAIT_SECONDS)
    except TimeoutError:
        raise Unavailable(f"the front door did not take the rows within {WAIT_SECONDS:g} s; retry") from None
    return admitted.answer()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():  # a request gone (its task cancelled) is not told
        future.set_result(None)
