"""Exports benchmark: the PDF report of 30 days of one project, and a 10,000-row CSV streamed.

    nice -n 10 .venv/bin/python bench/exports.py                    # 1,000,000 page loads (the goal: PDF ≤ 5
    s) nice -n 10 .venv/bin/python bench/exports.py --loads 100000     # small scale

In a fresh embedded warehouse and SQLite control store (own temporary data directory): the page loads,
spans and server transactions of bench/performance.py (30 days, 20 routes, 5 releases, 50 API endpoints)
with the facts and states the performance assets build from them (its `_build`), one organization and
project with three budgets. Then ROUNDS times, after one warm-up: the report's reads for the last 30 days
(``report_data``: every view the report shows plus the budgets) and the PDF's rendering (``build_pdf``),
each timed apart, with the PDF's size and page count. The CSV: a 10,000-row pages table (the columns of the
Pages page) built as a polars frame and streamed in chunks (``csv_chunks``) — time to the first chunk, to
the last, the number of chunks and the largest one (a stream never holds the whole file as one string)."""

from __future__ import annotations

import argparse
import io
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
CSV_ROWS = 10_000


def _seconds(samples: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(samples), 3), "max_s": round(max(samples), 3)}


def _csv_stream() -> dict[str, Any]:
    from stacklens.performance.exports import tabular
    from stacklens.performance.exports.tables import table

    rng = random.Random(5)
    spec = table("pages", "pages")
    rows = [
        {
            c: f"/route/{i}"
            if c == "page"
            else ("good" if rng.random() < 0.5 else "poor")
            if c.endswith("rating")
            else rng.randint(1, 5000)
            if c.endswith("_n") or c == "views"
            else rng.random() * 4000
            for c in spec.columns
        }
        for i in range(CSV_ROWS)
    ]
    started = time.perf_counter()
    frame = tabular.frame(spec, {"rows": rows})
    chunks = tabular.csv_chunks(frame)
    first = next(chunks)
    first_s = time.perf_counter() - started
    sizes = [len(first)] + [len(c) for c in chunks]
    total_s = time.perf_counter() - started
    return {
        "rows": CSV_ROWS,
        "first_chunk_ms": round(first_s * 1000, 1),
        "total_ms": round(total_s * 1000, 1),
        "chunks": len(sizes),
        "largest_chunk_bytes": max(sizes),
        "bytes": sum(sizes),
    }


def run(loads: int) -> dict[str, Any]:
    from pypdf import PdfReader

    from bench.performance import FACT_QUERIES, _build, _generate
    from stacklens.control import accounts, budgets
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.projects import create_project, project_by_slug
    from stacklens.performance.exports.pdf import build_pdf
    from stacklens.performance.exports.report_data import report_data
    from stacklens.settings import Settings
    from stacklens.view_filters import ViewFilters
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-exports-"))
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    migrate_control_store(settings)
    apply_migrations(settings)
    with session_scope(settings) as session:
        org, _ = accounts.create_organization(session, "Bench", "bench@example.test", "password-123")
        project, _ = create_project(session, org.id, "Shop")
        for metric, value in (("lcp_ms", 2500), ("load_time_ms", 3000), ("js_bytes", 400_000)):
            budgets.create_budget(session, project, metric, "*", value)
        org_id, project_id = org.id, project.id
    assert (org_id, project_id) == (1, 1), "bench/performance.py writes org 1, project 1"
    client = get_warehouse(settings)
    started = time.perf_counter()
    _generate(client, loads)
    generate_s = time.perf_counter() - started
    # What the views read: the performance assets' facts and states of every hour (bench/performance.py).
    built = _build(client, datetime.now(UTC), FACT_QUERIES)
    reads, renders, totals = [], [], []
    size = pages = 0
    filters = ViewFilters.parse(range="30d", now=datetime.now(UTC))
    for round_no in range(ROUNDS + 1):
        with session_scope(settings) as session:
            project = project_by_slug(session, "shop", org_id=org_id)
            t0 = time.perf_counter()
            data = report_data(session, client, project, filters)
            t1 = time.perf_counter()
            pdf = build_pdf(data)
            t2 = time.perf_counter()
        if round_no:  # the first round warms the engine up
            reads.append(t1 - t0)
            renders.append(t2 - t1)
            totals.append(t2 - t0)
        size, pages = len(pdf), len(PdfReader(io.BytesIO(pdf)).pages)
    reset_clients()
    shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "loads": loads,
        "generate_s": round(generate_s, 1),
        **built,
        "rounds": ROUNDS,
        "pdf_30d": {
            "reads": _seconds(reads),
            "render": _seconds(renders),
            "total": _seconds(totals),
            "bytes": size,
            "pages": pages,
        },
        "csv_stream": _csv_stream(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, action="append", help="page loads (repeatable; default 1000000)")
    args = parser.parse_args()
    for loads in args.loads or [1_000_000]:
        print(json.dumps(run(loads), indent=1), flush=True)


if __name__ == "__main__":
    main()
