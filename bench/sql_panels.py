"""SQL panels benchmark (issue 70 point 2): an organization's SQL panel over N page loads, through the path a
dashboard's SQL widget, the SQL editor and `POST /api/sql` take (stacklens.explore.sql_panel.answer_panel: the
operator's guard, the documented tables, the organization's row filter, the query budgets), timed.

    PYTHONPATH=$PWD .venv/bin/python bench/sql_panels.py                       # 10,000,000 page loads
    PYTHONPATH=$PWD .venv/bin/python bench/sql_panels.py --loads 1000000 --data-dir /tmp/sql-1m

An embedded warehouse in its own data directory (every migration applied), N page loads over 30 days in
`transactions` (bench/explore.py's rows: 5 releases, 20 pages, three browsers), generated inside the engine;
`--data-dir` keeps them for the next run. Each panel runs CALLS times on one analyst connection; per panel the
median and p95 wall time, the engine's own time (elapsed_ms, what the page shows), the rows read and the
budget it ran within."""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

CALLS = 7
PANELS = {
    "page loads and p75 by release": (
        "SELECT release, count() AS page_loads, round(quantile(0.75)(duration_ms)) AS p75_ms\n"
        "FROM transactions GROUP BY release ORDER BY release"
    ),
    "page loads per day": (
        "SELECT toStartOfDay(timestamp) AS day, count() AS page_loads FROM transactions\n"
        "WHERE timestamp >= {since:DateTime} GROUP BY day ORDER BY day"
    ),
    "slowest pages": (
        "SELECT page, count() AS page_loads, round(avg(duration_ms)) AS avg_ms FROM transactions\n"
        "GROUP BY page ORDER BY avg_ms DESC LIMIT 10"
    ),
}


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _fill(client: Any, loads: int, data_dir: Path) -> dict[str, Any]:
    from bench.explore import DAYS, LOADS_SQL, ORG, PROJECT, URLS

    marker = data_dir / "bench-sql-panels.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    if state.get("loads") == loads:
        return state
    started = time.perf_counter()
    client.command("TRUNCATE TABLE transactions")
    common = {"org": ORG, "project": PROJECT, "span_ms": DAYS * 86_400_000, "urls": URLS}
    chunk = 1_000_000  # bounded memory per statement on a small machine
    for start in range(0, loads, chunk):
        client.command(LOADS_SQL.format(offset=start, count=min(chunk, loads - start), **common))
        print(f"transactions: {min(start + chunk, loads):,} rows", file=sys.stderr, flush=True)
    state = {"loads": loads, "generate_s": round(time.perf_counter() - started, 1)}
    marker.write_text(json.dumps(state))
    return state


def run(loads: int, keep_dir: Path | None) -> dict[str, Any]:
    from bench.explore import ORG
    from stacklens.explore.sql import Limits
    from stacklens.explore.sql_panel import answer_panel, window_params
    from stacklens.settings import Settings
    from stacklens.warehouse.client import analyst_client, get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-sql-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    apply_migrations(settings)
    state = _fill(get_warehouse(settings), loads, data_dir)
    limits = Limits()
    out: dict[str, Any] = {"loads": loads, **state, "budget": {
        "seconds": limits.max_execution_seconds, "memory_bytes": limits.max_memory_bytes,
        "rows_to_read": limits.max_rows_to_read, "threads": limits.max_threads}, "panels": {}}  # fmt: skip
    params = window_params({"range": "30d"})
    with analyst_client(settings) as client:
        for name, sql in PANELS.items():
            wall, engine, read = [], [], 0
            for _ in range(CALLS):
                started = time.perf_counter()
                answer = answer_panel(client, "bench", ORG, sql, params, limits)
                wall.append((time.perf_counter() - started) * 1000)
                engine.append(answer.elapsed_ms)
                read = answer.rows_read
            out["panels"][name] = {
                "wall_median_ms": round(statistics.median(wall), 1),
                "wall_p95_ms": round(_p95(wall), 1),
                "elapsed_median_ms": round(statistics.median(engine), 1),
                "rows_read": read,
                "rows_answered": len(answer.rows),
            }
            print(f"{name}: {out['panels'][name]}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=10_000_000)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    print(json.dumps(run(args.loads, args.data_dir), indent=2))


if __name__ == "__main__":
    main()
