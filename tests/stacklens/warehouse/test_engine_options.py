"""Opening the warehouse: the embedded engine's startup options."""

from __future__ import annotations

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse


def test_embedded_engine_runs_merges_at_a_lower_cpu_priority(settings: Settings) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    value = client.query(
        "SELECT value FROM system.server_settings WHERE name = 'os_threads_nice_value_merge_mutate'"
    ).result_rows[0][0]
    assert int(value) == 10
