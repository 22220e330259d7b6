"""The warehouse's liveness probe (`GET /api/health`, readiness): one statement that leaves nothing behind
on an idle server.

A statement of the embedded engine maps ~50 MiB of the engine's library back into the process (whole large
folios around the code it runs; stacklens/warehouse/engine.py). On a server that does nothing else, a load
balancer's probe every few seconds would keep them mapped for good, and the first probe after a quiet spell
raised an idle server's resident memory by that much until the next beat's release. A probe that ran alone
(no other call around it) gives them back at once: nothing else needs them, and the next statement maps
what it runs back from the page cache in a few milliseconds. A probe beside other calls leaves them, as
those calls use them."""

from __future__ import annotations

from stacklens.settings import Settings
from stacklens.warehouse.calls import alone

# A probe counts as alone when no other warehouse call ended in this many seconds before it: on a server
# that ingests or renders, calls come closer than this, and their statements keep the pages they use.
QUIET_SECONDS = 2.0


def ping(settings: Settings) -> None:
    """One statement to the warehouse; raises what the warehouse raised. On the embedded engine, a ping that
    ran alone releases the library's pages it mapped."""
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.engine import release_library_pages
    from stacklens.warehouse.queries import load_query

    statement = load_query("health/ping")
    if (
        alone(lambda: get_warehouse(settings).command(statement), QUIET_SECONDS)
        and settings.embedded_warehouse
    ):
        release_library_pages()
