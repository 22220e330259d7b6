"""Per-tenant work of one tick (notifications to send, tickets to read back) run side by side, one task per
organization, each with its own deadline, so one organization's slow receiver cannot hold the others'.

The schedule runner is one thread: sending every organization's notifications one after another let a
single webhook that drips a byte every 5 s delay every other organization's alerts by minutes (494 s were
measured). Here each organization's items run in order in a task of their own (their order and the
channel's rate cap stay as they were), at most :data:`WORKERS` tasks at once, and a task stops starting
new items once its organization's :data:`TENANT_BUDGET_S` is spent: what is left stays due for the next tick.
The budget is also handed to the items (an outbound client's ``not_after``), so the call under way ends by
it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Four tasks at once: the work is waiting on other hosts, not CPU, and four slow organizations (each held
# for at most its budget) still leave the rest a worker within a tick.
WORKERS = 4
# An organization's share of a tick (the alerts job runs every minute): whatever it has not sent by then
# waits for the next tick instead of delaying the next run.
TENANT_BUDGET_S = 40.0


@dataclass(frozen=True)
class Tenant(Generic[Item]):
    """One organization's items and the monotonic instant its task stops starting new ones."""

    key: Hashable
    items: list[Item]
    not_after: float

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.not_after


def by_tenant(items: Iterable[Item], key: Callable[[Item], Hashable]) -> dict[Hashable, list[Item]]:
    """``items`` grouped by ``key``, each group in the order given."""
    groups: dict[Hashable, list[Item]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def run_per_tenant(
    groups: dict[Hashable, list[Item]],
    work: Callable[[Tenant[Item]], Result],
    *,
    workers: int = WORKERS,
    budget_s: float = TENANT_BUDGET_S,
) -> list[Result]:
    """``work`` once per tenant, side by side; their results in the order of ``groups``.

    Each tenant's budget starts when its task starts (a tenant queued behind slow ones still gets its whole
    share). An exception from ``work`` is raised here after every task has ended: ``work`` isolates its
    items' failures itself, so what escapes is what every tenant shares (the control store is down).
    """
    if not groups:
        return []

    def task(key: Hashable, items: list[Item]) -> Result:
        return work(Tenant(key, items, time.monotonic() + budget_s))

    if len(groups) == 1:  # nothing to isolate from: no thread
        ((key, items),) = groups.items()
        return [task(key, items)]
    with ThreadPoolExecutor(min(workers, len(groups)), thread_name_prefix="stacklens-tenant") as pool:
        futures = [pool.submit(task, key, items) for key, items in groups.items()]
        return [future.result() for future in futures]


__all__ = ["TENANT_BUDGET_S", "WORKERS", "Tenant", "by_tenant", "run_per_tenant"]
