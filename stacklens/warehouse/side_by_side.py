"""Two independent reads of one view at the same time, each on its own client of the same warehouse.

A view's time is mostly the engine analysing and planning each query (docs/decisions.md), work that runs on
one core per query; a view that needs two unrelated queries (the recommendations: the resource list and the
endpoint list) takes about the longer of the two instead of their sum when they run on two clients at once
(a client runs one query at a time). The engine releases the interpreter while it works, so a thread
suffices."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.client import second_client

A = TypeVar("A")
B = TypeVar("B")

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="warehouse-side-by-side")


def side_by_side(client: Client, first: Callable[[Client], A], second: Callable[[Client], B]) -> tuple[A, B]:
    """``(first(client), second(other))``, the two run at once: ``other`` is the second client of the
    warehouse of ``client`` (stacklens.warehouse.client.second_client); one after the other on ``client``
    when it has none (a client this process did not open through the shared clients)."""
    other = second_client(client)
    if other is None:
        return first(client), second(client)
    later = _pool.submit(second, other)
    try:
        return first(client), later.result()
    finally:
        later.cancel()
