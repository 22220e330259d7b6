"""The front door's wait, on the event loop: a request hands its admitted rows to the door and awaits their
landing without holding a thread (stacklens.ingest.front_door answers many requests per spool write; a thread
blocked per request would cap concurrent senders at the thread pool's size and pay a thread switch each)."""

from __future__ import annotations

import asyncio
import threading

from stacklens.errors import Unavailable
from stacklens.ingest.front_door import WAIT_SECONDS
from stacklens.ingest.service import Admitted, BatchResult


async def landed(admitted: BatchResult | Admitted) -> BatchResult:
    """The answer of ``admitted`` once the front door has its rows (a replay's answer at once).

    The door is asked to accept on this loop's next turn (``accept_here``): the requests of one turn make
    one group, accepted here when nothing of it would block, else by the door's thread — a thread woken per
    group, and the loop woken again with its answers, cost more than accepting a few envelopes
    (docs/decisions.md, "The front door")."""
    if isinstance(admitted, BatchResult):
        return admitted
    loop = asyncio.get_running_loop()
    taken: asyncio.Future[None] = loop.create_future()
    here = threading.get_ident()

    def tell() -> None:  # in the thread that accepted the rows
        if threading.get_ident() == here:
            _resolve(taken)
        else:
            loop.call_soon_threadsafe(_resolve, taken)

    door = admitted.submit(tell, wake=False)
    loop.call_soon(door.accept_here)
    try:
        await asyncio.wait_for(taken, WAIT_SECONDS)
    except TimeoutError:
        raise Unavailable(f"the front door did not take the rows within {WAIT_SECONDS:g} s; retry") from None
    return admitted.answer()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():  # a request gone (its task cancelled) is not told
        future.set_result(None)
