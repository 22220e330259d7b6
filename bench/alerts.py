"""Alert evaluation benchmark: one evaluation tick of R rules over N error events.

    .venv/bin/python bench/alerts.py                                # 1,000 rules, 1M events (default)
    .venv/bin/python bench/alerts.py --size 10000000 --rules 1000   # the goal: <= 2 s per tick at 10M
    .venv/bin/python bench/alerts.py --size 100000 --rules 1000     # a small run

In a fresh embedded warehouse (own temporary data directory, every migration applied): N error events over 5
projects and 14 days plus N/10 transactions and their spans, generated as bench/pipelines.py generates them;
the page-load and endpoint states the performance views read built once (what the pageload_states and
endpoint_states assets keep: facts, then minute, hour, day and block periods). R rules spread over the
projects: 60 % performance budgets (every metric and statistic, scopes `*`, a route and a pattern, windows
1h / 1d / 7d, a tenth with an environment), and 10 % each of new issue, regression, event frequency (events
or users, some with level / release / tag filters) and error rate. Then ROUNDS ticks of
:func:`stacklens.alerts.evaluation.evaluate`, each recording every evaluation in the control store
(SQLite); printed: the median and maximum tick, and the warehouse part
(:func:`stacklens.alerts.measures.measure`) alone."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipelines.assets.performance import TABLES  # noqa: E402 - after the path insert above

ROUNDS = 5
# What the performance rules read, as the performance assets build it: the page-load and API-call facts and
# states.
STATE_QUERIES = [
    q
    for table in ("pageload_facts", "pageload_periods", "endpoint_facts", "endpoint_call_periods")
    for q in TABLES[table].queries
]
METRIC_STATS = [
    ("load_time_ms", "p50"),
    ("load_time_ms", "p75"),
    ("load_time_ms", "p95"),
    ("load_time_ms", "avg"),
    ("ttfb_ms", "p75"),
    ("lcp_ms", "p75"),
    ("inp_ms", "p75"),
    ("cls", "p75"),
    ("api_ms", "p95"),
]


def rule_bodies(count: int, projects: list[str], seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    bodies = []
    for i in range(count):
        project = projects[i % len(projects)]
        kind = (
            "performance_budget"
            if i % 10 < 6
            else ["new_issue", "regression", "event_frequency", "error_rate"][i % 10 - 6]
        )
        body: dict[str, Any] = {
            "name": f"rule {i}",
            "type": kind,
            "project": project,
            "window": rng.choice(["1h", "1d", "7d"]),
        }
        if kind == "performance_budget":
            metric, statistic = rng.choice(METRIC_STATS)
            body.update(
                metric=metric,
                statistic=statistic,
                threshold=rng.uniform(100, 3000),
                min_samples=20,
                scope=rng.choice(["*", "/page/3", "/page/1*"]),
                environment="production" if i % 10 == 0 else "",
            )
        elif kind == "event_frequency":
            body.update(
                threshold=rng.randint(5, 500),
                count_kind=rng.choice(["events", "users"]),
                window=rng.choice(["5m", "1h"]),
                **rng.choice([{}, {"level": "error"}, {"release": "1.3"}, {"tag": "browser:Firefox"}]),
            )
        elif kind == "error_rate":
            body.update(threshold=rng.uniform(1, 10), min_samples=50)
        bodies.append(body)
    return bodies


def build_states(client: Any, days: int) -> float:
    """The states the performance rules read, over the last ``days`` days, day by day as a backfill builds
    them; seconds taken."""
    from pipelines import warehouse_ops as ops
    from stacklens.performance.score import sql_parameters

    started = time.perf_counter()
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    day = end - timedelta(days=days + 1)
    while day < end:
        bounds = {
            "start": day,
            "end": min(day + timedelta(days=1), end),
            "materialized_at": datetime.now(UTC),
        }
        for query in STATE_QUERIES:
            ops.run_insert(client, query, {**sql_parameters(), **bounds})
        day += timedelta(days=1)
    return time.perf_counter() - started


def run(size: int, rules: int, keep: Path | None = None) -> dict[str, Any]:
    from bench.pipelines import DAYS, PROJECTS, _generate
    from stacklens.alerts import evaluation
    from stacklens.alerts import rules as alert_rules
    from stacklens.alerts.measures import measure
    from stacklens.control.accounts import create_organization
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
    from stacklens.control.models.alerts import AlertRule
    from stacklens.control.projects import create_project
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep or Path(tempfile.mkdtemp(prefix="stacklens-bench-alerts-"))
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    override_settings(settings)
    (data_dir / "control.db").unlink(missing_ok=True)  # rules and states start afresh on every run
    migrate_control_store(settings)
    apply_migrations(settings)
    client = get_warehouse(settings)
    started = time.perf_counter()
    held = int(client.query("SELECT count() FROM events").result_rows[0][0])
    if held not in (0, size):
        raise SystemExit(f"{data_dir} holds {held:,} events, not {size:,}: remove it or pick another")
    if held == 0:  # a kept data directory is reused as it is (its events age with the wall clock)
        _generate(client, 0, size, age_s=600, span_s=DAYS * 86400, as_they_happen=True)
    if not client.query("SELECT count() FROM pageload_periods").result_rows[0][0]:
        build_states(client, DAYS)  # also for a kept data directory built before these states existed
    build_s = time.perf_counter() - started
    with session_scope(settings) as session:
        org, _ = create_organization(session, "Bench", "bench@example.test", "bench-password-1")
        slugs = [create_project(session, org.id, f"Project {p}")[0].slug for p in range(1, PROJECTS + 1)]
        for body in rule_bodies(rules, slugs):
            alert_rules.create_rule(session, org.id, body)
    ticks, measures = [], []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        summary = evaluation.evaluate(settings, client, "http://bench.test", datetime.now(UTC))
        ticks.append(time.perf_counter() - t0)
        with session_scope(settings) as session:
            loaded = list(session.query(AlertRule))
        t0 = time.perf_counter()
        measure(client, loaded, datetime.now(UTC))
        measures.append(time.perf_counter() - t0)
    rows = int(client.query("SELECT count() FROM events").result_rows[0][0])
    reset_clients()
    dispose_engines()
    override_settings(None)
    if keep is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "size": size,
        "events": rows,
        "rules": rules,
        "build_s": round(build_s, 1),
        "evaluations_per_tick": summary.evaluations,
        "firing": len(summary.firing),
        "ticks_s": [round(t, 3) for t in ticks],
        "tick_median_s": round(statistics.median(ticks), 3),
        "tick_max_s": round(max(ticks), 3),
        "measure_median_s": round(statistics.median(measures), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append", help="error events (repeatable); default 1M")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    args = parser.parse_args()
    for size in args.size or [1_000_000]:
        print(json.dumps(run(size, args.rules, args.data_dir)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
