"""What the server's process loads: libraries it does not use stay out of it (issue 63, the footprint).

A fresh interpreter does what `stacklens serve` does on an empty data directory — migrate both stores (the
warehouse's first inserts), build the app, run every pipeline job once (the start-up catch-up skips an empty
warehouse, tests/pipelines/test_idle.py), answer a request — then streams an Explore download in each
format. pandas (~55 MiB resident) is never loaded: not by
clickhouse-connect's insert, not by the downloads (whose Arrow arrays polars builds), and so no thread can
import it half-way while a figure asks plotly whether it is there. polars (~35 MiB) and pyarrow (~40 MiB with
what it brings; the engine's connection module is imported without it) are loaded by the first download,
not before; the MCP SDK (~30 MiB) by the first request to `/mcp` or its OAuth routes. The ingest worker
processes are not started by the server (the first large batch starts them).
"""

from __future__ import annotations

from pathlib import Path

from tests.fresh_server import run_fresh

SCRIPT = """
import json, sys
from stacklens.settings import get_settings
from stacklens.cli.serve import migrate_all
from stacklens.cli.app import build_app
from pipelines.embedded import EmbeddedRunner
from starlette.testclient import TestClient

settings = get_settings()
migrate_all(settings)
app = build_app(settings)
outcomes = EmbeddedRunner(settings).run_now()  # every job once: the empty warehouse skips the catch-up
LIBRARIES = ("pandas", "polars", "pyarrow", "mcp")
with TestClient(app) as http:
    health = http.get("/api/health").status_code
    served = {m: m in sys.modules for m in LIBRARIES}
    refused = http.post("/mcp", json={}).status_code  # no bearer token: refused before the SDK is needed
    unloaded = "mcp" in sys.modules
    metadata = http.get("/.well-known/oauth-protected-resource/mcp").json()
seen = {"health": health, "runs": len(outcomes), "served": served, "mcp": [refused, unloaded, "mcp" in sys.modules, metadata["resource"]]}

from stacklens.explore.download import open_download
from stacklens.explore.query_parser import parse_query
from stacklens.warehouse.client import get_warehouse, own_client

get_warehouse(settings).command(
    "INSERT INTO transactions (org_id, project_id, event_id, timestamp, received_at, op, url, duration_ms,"
    " measurements) SELECT 1, 11, generateUUIDv4(number), now64(3) - number, now64(3), 'pageload',"
    " concat('/p/', toString(number)), number, if(number % 2 = 0, map(), map('lcp', toFloat64(number)))"
    " FROM numbers(50)"
)
query = parse_query(
    {"dataset": "pageloads", "group_by": ["url"],
     "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "lcp"}]},
    download=True,
)
sizes = {}
for fmt in ("csv", "parquet", "json"):
    download = open_download(
        lambda: own_client(settings.resolved_warehouse_url, settings.warehouse_database), query, 1, [11], fmt
    )
    body = b""
    while (chunk := download.next_chunk()) is not None:
        body += chunk
    sizes[fmt] = len(body)
seen["downloaded"] = {m: m in sys.modules for m in LIBRARIES[:3]}
seen["sizes"] = sizes
print(json.dumps(seen))
"""


def test_the_server_never_loads_pandas_and_loads_polars_and_pyarrow_only_for_a_download(
    tmp_path: Path,
) -> None:
    seen = run_fresh(SCRIPT, tmp_path)

    assert seen["health"] == 200 and seen["runs"] >= 0
    assert seen["served"] == {"pandas": False, "polars": False, "pyarrow": False, "mcp": False}
    # The MCP SDK loads with the first request that needs it: not for a request refused at the door.
    refused, loaded_by_refusal, loaded, resource = seen["mcp"]
    assert (refused, loaded_by_refusal, loaded) == (401, False, True) and resource.endswith("/mcp"), seen[
        "mcp"
    ]
    assert seen["downloaded"] == {"pandas": False, "polars": True, "pyarrow": True}
    assert all(size > 0 for size in seen["sizes"].values()), seen["sizes"]
