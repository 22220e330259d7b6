"""Analyst dashboards benchmark (issues #50 and #70): the demo's dashboard (bench/dashboards.py is the issue
pages' bench) over N page loads, rendered; its SQL panel alone; and its shared link, served from its snapshot.

    PYTHONPATH=$PWD .venv/bin/python bench/analyst_dashboards.py                    # 1,000,000 page loads
    PYTHONPATH=$PWD .venv/bin/python bench/analyst_dashboards.py --loads 10000000 --data-dir
    /work/data/dash-10m

An embedded warehouse and a SQLite control store in their own data directory (every migration applied), one
organization and project, N page loads over 30 days and N/10 error events (bench/explore.py's rows and SQL:
5 releases, 20 pages, three browsers, production and staging), generated inside the engine, and the page-load
states the pipelines' tick builds from them (with its watermark, so Explore reads them), each table merged
once (`OPTIMIZE … FINAL`). `--data-dir` keeps them for the next run. The dashboard is the demo's ("Release
health and vitals", demo/dashboards.py: 10 widgets — four numbers each against the previous 30 days, two
lines per release and day, a bar chart, two tables and a SQL panel — under the filter bar "30 days,
production"); its INP number and pages table read the page-load states as its LCP widgets do (migration 0320).

* **render, cold**: what the dashboard page computes before its template, as the page does it
  (`dashboards.dashboard_board.board_views`: variables, every widget answered on the analysts' lane, its
  figure, markers, drill-down links) for the widgets asked as Explore questions and views (the SQL panel
  aside: it reads raw rows, measured on its own), with the widget cache emptied before each call (the first
  view of a minute), COLD_CALLS times.
* **SQL panel, cold**: the SQL panel alone, cache emptied, with the engine's time the panel shows ("took").
* **page, cold**: every widget, the SQL panel included (what a first view of the page costs).
* **render, warm**: every widget within the widget cache's minute (`stacklens.explore.widget_cache`: every
  answer kept, the SQL panel's too; figures, markers), CALLS times.
* **per widget, cold**: each widget rendered alone as above (WIDGET_CALLS times), beside the render of no
  widget (what every render costs whatever it draws: the session, the board, the markers' check), with what
  the engine read for it and its time (current and previous window and a cut chart's "others" together).
* **shared**: `GET /share/dashboards/<token>` through the real app in-process (starlette's TestClient:
  routing, the share lookup in the control store, the template), after the first request stored the snapshot.

Per step the median and p95 wall time in ms, the median and p95 CPU time of the process (the embedded
engine's threads included; a loaded machine inflates wall time, far less CPU time) and the load average. The
sessions tables are empty here (crash-free widgets answer "no data" quickly); the page-load and error widgets
read the N rows."""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# This script sits beside bench/dashboards.py: the repository first, so `dashboards` is the package.
sys.path[0] = str(ROOT)

CALLS, COLD_CALLS, SHARED_CALLS, WIDGET_CALLS = 20, 10, 100, 5
# The tables the dashboard's widgets read, merged once after the data is built.
MERGED = ("transactions", "events", "pageload_facts", "pageload_periods")


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _cpu() -> float:
    """CPU seconds of this process (the embedded engine's threads included), which a loaded machine does not
    inflate as it inflates wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time(label: str, calls: int, call: Callable[[], object]) -> dict[str, float]:
    call()  # warm: parsed queries, the engine's marks, the template cache
    samples, cpu = [], []
    for _ in range(calls):
        started, used = time.perf_counter(), _cpu()
        call()
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((_cpu() - used) * 1000)
    out = {
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(_p95(samples), 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(_p95(cpu), 1),
        "load_average": round(os.getloadavg()[0], 1),
        "calls": calls,
    }
    print(label, out, file=sys.stderr, flush=True)
    return out


def _fill(settings: Any, loads: int, data_dir: Path) -> dict[str, Any]:
    from bench.explore import EVENTS_SQL, LOADS_SQL, _generate
    from stacklens.warehouse.client import get_warehouse

    marker = data_dir / "bench-analyst-dashboards.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    client = get_warehouse(settings)
    if state.get("loads") != loads:
        state = {"loads": loads}
        for name, table, sql, rows in (
            ("loads", "transactions", LOADS_SQL, loads),
            ("events", "events", EVENTS_SQL, loads // 10),
        ):
            started = time.perf_counter()
            client.command(f"TRUNCATE TABLE {table}")
            _generate(client, name, sql, rows)
            state[f"generate_{name}_s"] = round(time.perf_counter() - started, 1)
    if "build_pageload_states_s" not in state:
        started = time.perf_counter()
        _build_pageload_states(client)
        state["build_pageload_states_s"] = round(time.perf_counter() - started, 1)
        state.pop("merge_s", None)
    if "merge_s" not in state:
        # Merged once, as an installation's parts are by the time it holds 10 M page loads: a fresh insert's
        # many parts (and their background merges, in this process's CPU time) would be timed otherwise, and
        # a column's codec (migrations 0290, 0300) applies to the parts written or merged after it.
        started = time.perf_counter()
        for table in MERGED:
            client.command(f"OPTIMIZE TABLE {table} FINAL")
        state["merge_s"] = round(time.perf_counter() - started, 1)
    marker.write_text(json.dumps(state))
    return state


def _build_pageload_states(client: Any) -> None:
    """What the pipelines' tick does for the page-load stack (its queries, day by day over the rows' span),
    then its watermark at now: the page-load questions Explore can answer from the states read them."""
    from datetime import timedelta

    from pipelines.assets.performance import PAGELOADS
    from stacklens.warehouse.queries import load_query

    first, last = client.query("SELECT min(timestamp), max(timestamp) FROM transactions").result_rows[0]
    day = first.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=UTC)
    version = datetime.now(UTC)
    while day <= last.replace(tzinfo=UTC):
        hours = {"start": day, "end": day + timedelta(days=1), "materialized_at": version}
        for query in PAGELOADS.queries:
            client.command(load_query(f"pipelines/{query}"), parameters={**PAGELOADS.parameters, **hours})
        day += timedelta(days=1)
    client.command(
        load_query("pipelines/pipeline_watermarks"),
        parameters={"asset": PAGELOADS.watermark, "watermark": version, "updated_at": version},
    )


def _board(settings: Any) -> tuple[int, str, int, str]:
    """The organization (id, slug), the demo dashboard's id and a share token: made once per data
    directory."""
    from sqlalchemy import select

    from demo.dashboards import demo_dashboard
    from stacklens.control.accounts import create_organization
    from stacklens.control.db import session_scope
    from stacklens.control.models import Organization
    from stacklens.control.projects import create_project
    from stacklens.explore.dashboard_shares import create_share
    from stacklens.explore.dashboards import create_dashboard

    with session_scope(settings) as session:
        org = session.scalar(select(Organization).where(Organization.name == "Bench"))
        if org is None:
            org, _ = create_organization(session, "Bench", "bench@example.test", "bench-password-123")
            project, _ = create_project(session, org.id, "Web", "javascript")
            # The generated rows belong to organization 1, project 1 (bench/explore.py's ORG and PROJECT).
            assert (org.id, project.id) == (1, 1), (org.id, project.id)
        board = create_dashboard(session, org.id, demo_dashboard())
        _, token = create_share(session, org.id, board.id, 7)
        return org.id, org.slug, board.id, token


def _engine(answer: Any) -> dict[str, float]:
    """What the engine read for one widget's answer and the time it took (its windows and "others"
    together)."""
    results = [r for r in (answer.result, answer.previous, answer.others) if r is not None]
    # run_compared adds the previous window's rows and time to the current answer's.
    if answer.previous is not None:
        results.remove(answer.previous)
    return {
        "rows_read": sum(r.rows_read for r in results),
        "engine_ms": round(sum(r.elapsed_ms for r in results), 1),
    }


def run(
    loads: int, keep_dir: Path | None, cold_calls: int = COLD_CALLS, widget_calls: int = WIDGET_CALLS
) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from dashboards.dashboard_board import board_views
    from dashboards.dashboard_snapshot import snapshot_of
    from stacklens.cli.app import build_app
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.explore.dashboards import get_dashboard
    from stacklens.explore.widget_cache import widget_cache_for
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-dash-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    apply_migrations(settings)
    migrate_control_store(settings)
    state = _fill(settings, loads, data_dir)
    org_id, org_slug, board_id, token = _board(settings)
    # The server holds its shared client open; an analyst connection opened beside it costs ~30 ms, alone ~0.4
    # s.
    get_warehouse(settings).query("SELECT 1")
    cache = widget_cache_for(settings)

    def render(only: Callable[[dict[str, Any]], bool] = lambda w: True) -> dict[str, Any]:
        with session_scope(settings) as session:
            board = get_dashboard(session, org_id, board_id)
            board = replace(board, widgets=[w for w in board.widgets if only(w)])
            views, _ = board_views(settings, session, org_id, org_slug, board, board.filters, {})
            errors = [v["answer"].error for v in views if v["answer"].error]
            assert not errors, errors
            snapshot = snapshot_of(board.name, board.description, board.filters, views, datetime.now(UTC))
            took = [v.get("took", "") for v in views if "sql" in v["answer"].widget]
            return {"snapshot": snapshot, "took": took, "engine": [_engine(v["answer"]) for v in views]}

    def cold(only: Callable[[dict[str, Any]], bool] = lambda w: True) -> Callable[[], object]:
        def call() -> object:
            cache.clear()
            return render(only)

        return call

    def asked(widget: dict[str, Any]) -> bool:
        return "sql" not in widget

    def sql(widget: dict[str, Any]) -> bool:
        return "sql" in widget

    everything = render()
    widgets = len(everything["snapshot"]["widgets"])
    result: dict[str, Any] = {
        **state,
        "widgets": widgets,
        "render_cold": _time(
            f"render cold ({widgets - len(everything['took'])} widgets, the SQL panel aside)",
            cold_calls,
            cold(asked),
        ),
    }
    if widget_calls:
        titles = [w["title"] for w in everything["snapshot"]["widgets"]]
        result["render_none_cold"] = _time("render cold, no widget", widget_calls, cold(lambda w: False))
        result["per_widget_cold"] = {}
        for title, engine in zip(titles, everything["engine"], strict=True):
            alone = _time(f"  {title}", widget_calls, cold(lambda w, t=title: w["title"] == t))
            result["per_widget_cold"][title] = {**alone, **engine}
            print("   engine:", engine, file=sys.stderr, flush=True)
    result["sql_panel_cold"] = _time("SQL panel cold", cold_calls, cold(sql))
    result["sql_panel_took"] = render(sql)["took"]  # what the panel shows: the engine's time, rows read
    print("SQL panel shows:", result["sql_panel_took"], file=sys.stderr, flush=True)
    result["page_cold"] = _time(f"page cold (all {widgets} widgets)", cold_calls, cold())
    result["render_warm"] = _time(f"render warm (all {widgets} widgets)", CALLS, render)
    cache.clear()  # the shared link's first request answers its widgets itself
    with TestClient(build_app(settings)) as http:
        path = f"/share/dashboards/{token}"
        first = time.perf_counter()
        page = http.get(path)
        result["shared_first_ms"] = round((time.perf_counter() - first) * 1000, 1)  # builds the snapshot
        assert page.status_code == 200 and "Release health and vitals" in page.text, page.status_code

        def shared() -> object:
            answer = http.get(path)
            assert answer.status_code == 200
            return answer

        result["shared"] = _time("shared", SHARED_CALLS, shared)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=1_000_000, help="page loads (default 1,000,000)")
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    parser.add_argument(
        "--cold-calls", type=int, default=COLD_CALLS, help=f"cold renders timed (default {COLD_CALLS})"
    )
    parser.add_argument(
        "--widget-calls",
        type=int,
        default=WIDGET_CALLS,
        help=f"cold renders timed per widget alone (default {WIDGET_CALLS}; 0: none)",
    )
    args = parser.parse_args()
    print(json.dumps(run(args.loads, args.data_dir, args.cold_calls, args.widget_calls), indent=1))


if __name__ == "__main__":
    main()
