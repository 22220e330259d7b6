"""Budgets benchmark: evaluating B budgets, and the budgets page's reads, over N page loads.

    nice -n 10 .venv/bin/python bench/budgets.py                          # 100 budgets, 1M transactions
    nice -n 10 .venv/bin/python bench/budgets.py --transactions 100000 --budgets 30

In a fresh embedded warehouse (own temporary data directory, every migration applied): N transactions (70 %
page loads over 20 routes, 30 % API calls) over 5 projects and 14 days with 4 spans each, generated as
bench/pipelines.py generates them; the page-load and endpoint states the views read built once (what
the pageload_states and endpoint_states assets keep). B budgets over the projects: every metric and
statistic, scopes `*`, a route and a pattern, windows 1 / 7 / 14 days. Printed: the `budget_status`
evaluation of all B (what the asset does every 5 minutes, failing ones with their 30-day history for
failing-since), the page's 30-day history of one budget per kind (page-load states: a timing, bytes, FCP;
raw transactions: error %), and the page's status read (the mart's rows)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUNDS = 3
METRIC_STATS = [
    ("load_time_ms", "p75"),
    ("load_time_ms", "p95"),
    ("load_time_ms", "avg"),
    ("lcp_ms", "p75"),
    ("inp_ms", "p75"),
    ("cls", "p75"),
    ("ttfb_ms", "p50"),
    ("fcp_ms", "p75"),
    ("js_bytes", "avg"),
    ("transfer_bytes", "avg"),
    ("api_p95_ms", "p95"),
    ("error_pct", "avg"),
]


def _median(fn: Any) -> float:
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 3)


def run(transactions: int, budgets: int) -> dict[str, Any]:
    from bench.alerts import build_states
    from bench.pipelines import DAYS, PROJECTS, _generate
    from stacklens.control.budgets import BudgetRow
    from stacklens.performance.budget_eval import BudgetSpec, evaluate, history
    from stacklens.performance.budget_status import with_status
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-budgets-"))
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    override_settings(settings)
    apply_migrations(settings)
    client = get_warehouse(settings)
    started = time.perf_counter()
    _generate(client, 0, transactions * 10, age_s=600, span_s=DAYS * 86400, as_they_happen=True)
    build_states(client, DAYS)
    build_s = time.perf_counter() - started
    rng = random.Random(3)
    specs = []
    for i in range(budgets):
        metric, statistic = METRIC_STATS[i % len(METRIC_STATS)]
        scope = rng.choice(["*", f"/page/{rng.randint(0, 19)}", "/page/1*"])
        value = rng.choice([500.0, 2000.0, 300_000.0, 0.1, 5.0])
        specs.append(
            BudgetSpec(
                i + 1, rng.randint(1, PROJECTS), metric, statistic, scope, value, rng.choice([1, 7, 14]), 20
            )
        )
    evaluated = evaluate(client, specs, datetime.now(UTC))
    evaluate_s = _median(lambda: evaluate(client, specs, datetime.now(UTC)))
    by_source = {}
    for metric in ("load_time_ms", "js_bytes", "fcp_ms", "error_pct"):
        spec = next(s for s in specs if s.metric == metric)
        by_source[metric] = _median(lambda spec=spec: history(client, spec))
    rows = [
        BudgetRow(
            s.id, 1, s.project_id, "p", s.metric, s.scope, s.value, "", "", s.statistic, s.window_days, 20, ""
        )
        for s in specs
        if s.project_id == 1
    ]
    # The page's read of one project's budgets, before any mart row exists (every budget evaluated on read).
    status_s = _median(lambda: with_status(client, rows))
    count = int(client.query("SELECT count() FROM transactions").result_rows[0][0])
    reset_clients()
    override_settings(None)
    shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "transactions": count,
        "budgets": budgets,
        "build_s": round(build_s, 1),
        "statuses": {
            s: sum(1 for e in evaluated if e.status == s) for s in ("pass", "fail", "insufficient_data")
        },
        "evaluate_all_median_s": evaluate_s,
        "history_30d_median_s": by_source,
        "page_status_read_s": {"budgets": len(rows), "median_s": status_s},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--budgets", type=int, default=100)
    args = parser.parse_args()
    print(json.dumps(run(args.transactions, args.budgets)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
