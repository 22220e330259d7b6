"""Every warehouse table or view a page, an API answer, an alert or an export reads is an asset of the
Dagster graph, so the graph answers "what does this page read, and what fills it?": the tables the
pipelines build are assets, and the ones filled at ingest or by the API (raw rows, the views' insert-time
states, the workflow tables) are specs of their own (pipelines/assets/live_tables.py). Checked against the
engine's own list of a migrated database and every named query outside the pipelines' and ingest's own
plumbing."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.assets.live_tables import PLUMBING
from pipelines.definitions import defs
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import migrated

QUERIES = Path(__file__).resolve().parents[3] / "warehouse_sql" / "queries"
# Queries of the pipelines themselves, of ingest's and the migration runner's bookkeeping and of a merge's
# regroup: they write or check, no reader sees them.
OWN = ("pipelines/", "ingest/", "warehouse/", "issues/merges/")


def _read_by_readers(tables: set[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(QUERIES.rglob("*.sql")):
        if path.relative_to(QUERIES).as_posix().startswith(OWN):
            continue
        text = path.read_text()
        for table in tables:
            if re.search(rf"(?<![\w.]){re.escape(table)}(?!\w)", text):
                found.setdefault(table, []).append(str(path.relative_to(QUERIES)))
    return found


def test_every_table_a_reader_reads_is_in_the_graph(settings: Settings) -> None:
    client = migrated(settings)
    tables = {
        str(name)
        for (name,) in client.query(
            "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine != 'MaterializedView'"
        ).result_rows
    }
    graph = {key.path[-1] for key in defs.resolve_asset_graph().get_all_asset_keys()}
    read = _read_by_readers(tables)
    missing = {table: readers[:3] for table, readers in read.items() if table not in graph | PLUMBING}
    assert not missing, " ".join(sorted(missing))
    # The plumbing left out is plumbing: no reader's query names it.
    assert not (PLUMBING & set(read)), sorted(PLUMBING & set(read))
    assert tables >= PLUMBING  # and each still exists (a dropped one leaves this list)
