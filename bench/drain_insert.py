"""What one front-door drain costs the embedded engine: CPU per insert into `events` by block size, as the
writer sends it, and what each materialized view behind `events` adds.

    .venv/bin/python bench/drain_insert.py                      # blocks of 1, 300 and 1,000 events, 3 rounds
    .venv/bin/python bench/drain_insert.py --views              # and each view's share of a one-row insert
    .venv/bin/python bench/drain_insert.py --counters           # and where a one-row insert's time goes

Real sentry-sdk error events (bench/ingest.py's corpus) are prepared as the ingest service prepares them and
inserted into a served schema (every migration applied) in a data directory of their own, with the writer's
own settings (`stacklens.ingest.writer.insert_encoded`) and, in alternating rounds, with the engine's parallel
parser on (`input_format_parallel_parsing = 1`, the engine's default). CPU is this process's (the engine runs
in it), per insert, the median of the rounds; "per row" is what a block costs beyond a one-row insert, a
row.

``--views`` then drops the views behind `events` one at a time in the same scratch warehouse and prints what
each took off a one-row insert: the fixed cost every drain pays, whatever its size.

``--counters`` prints the engine's own counters (``system.events``) an insert, over one-row inserts with the
merges stopped and then with them running: how much of the fixed cost is analysing and planning the statement
and its views, how much writing their parts, and what the merges behind such inserts add.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")


def _cpu_ms(insert: Any, repeats: int) -> float:
    insert()  # a first insert of the shape warms the engine's caches
    started = time.process_time()
    for _ in range(repeats):
        insert()
    return (time.process_time() - started) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,300,1000", help="rows per insert, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=8, help="inserts timed per size, setting and round")
    parser.add_argument("--views", action="store_true", help="also each view's share of a one-row insert")
    parser.add_argument(
        "--counters", action="store_true", help="also the engine's counters of a one-row insert"
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    from stacklens.ingest import writer
    from stacklens.ingest.prepare import prepare_lines
    from stacklens.ingest.prepared_rows import Attribution, BatchContext
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    print(f"building {max(sizes)} sentry-sdk error events ...", flush=True)
    corpus = ingest_bench.build_corpus(max(sizes) * 2, "unused")
    lines = [orjson.dumps(line) for line in corpus if line["type"] == "event"][: max(sizes)]
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="drain-bench-")),
        warehouse_database="drain",
        run_schedules=False,
    )
    apply_migrations(settings)
    client = get_warehouse(settings)
    context = BatchContext(1, "drain-bench", time.time(), None)
    prepared = prepare_lines(lines, 1, context, lambda _key: Attribution(1, None, 1))
    rows = [row[3] for row in prepared.tables["events"]]
    columns = prepared.columns["events"]
    tokens = iter(range(10**9))

    def as_writer(block: list[bytes]) -> None:
        writer.insert_encoded(client, "events", columns, block, f"bench:{next(tokens)}")

    def parallel(block: list[bytes]) -> None:
        client.raw_insert(
            "events",
            column_names=columns,
            insert_block=b"\n".join(block) + b"\n",
            fmt="JSONEachRow",
            settings={
                **writer.INSERT_SETTINGS,
                "insert_deduplication_token": f"bench:{next(tokens)}",
                "input_format_parallel_parsing": 1,
            },
        )

    ways = {"writer (one-thread parse)": as_writer, "parallel parser (default)": parallel}
    figures: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):
        for size in sizes:
            for name, insert in ways.items():
                block = rows[:size]
                spent = _cpu_ms(lambda insert=insert, block=block: insert(block), args.repeats)
                figures.setdefault((name, size), []).append(spent)
    print(
        f"{'insert into events':>28} {'rows':>6} {'CPU ms/insert':>14} {'per row µs':>11}  (median of rounds)"
    )
    for name in ways:
        one = statistics.median(figures[(name, 1)]) if 1 in sizes else 0.0
        for size in sizes:
            spent = statistics.median(figures[(name, size)])
            per_row = (spent - one) / (size - 1) * 1000 if size > 1 and one else float("nan")
            print(f"{name:>28} {size:>6} {spent:>14.1f} {per_row:>11.1f}")

    if args.counters:
        _print_counters(client, lambda: as_writer([rows[0]]), args.repeats * 6)

    if args.views:
        one_row = [rows[0]]
        before = statistics.median(_cpu_ms(lambda: as_writer(one_row), args.repeats) for _ in range(3))
        print(f"\none-row insert with every view: {before:.1f} ms of CPU")
        [dependents] = client.query(
            "SELECT dependencies_table FROM system.tables WHERE database = currentDatabase() AND name = 'events'"
        ).result_rows[0]
        for view in dependents:
            client.command(f"DROP TABLE `{view}`")
            after = statistics.median(_cpu_ms(lambda: as_writer(one_row), args.repeats) for _ in range(3))
            print(f"  without {view:<32} {after:>6.1f} ms  ({before - after:+.1f})")
            before = after
        print(f"the table alone: {before:.1f} ms")


# The engine's counters that tell a one-row insert's fixed cost apart (microseconds an insert).
COUNTERS = {
    "InsertQueryTimeMicroseconds": "the insert, start to end",
    "QueryAnalysisMicroseconds": "analysing the statement and its views' SELECTs",
    "QueryPlanBuildMicroseconds": "building their plans",
    "QueryPlanOptimizeMicroseconds": "optimising the plans",
    "QueryPipelineBuildMicroseconds": "building the pipelines",
    "MergeMutateBackgroundExecutorTaskExecuteStepMicroseconds": "the merges behind the inserts",
}


def _print_counters(client: Any, insert: Callable[[], None], repeats: int) -> None:
    """The engine's counters an insert over ``repeats`` timed inserts (and :func:`_cpu_ms`'s warming one), the
    merges stopped, then running."""

    def read() -> dict[str, int]:
        return dict(client.query("SELECT event, value FROM system.events").result_rows)

    for merges in ("stopped", "running"):
        client.command("SYSTEM STOP MERGES" if merges == "stopped" else "SYSTEM START MERGES")
        before = read()
        cpu = _cpu_ms(insert, repeats)
        after = read()
        print(f"\none-row inserts, merges {merges}: {cpu:.1f} ms of CPU an insert ({repeats} inserts)")
        for name, meaning in COUNTERS.items():
            spent = (after.get(name, 0) - before.get(name, 0)) / (repeats + 1) / 1000
            print(f"  {spent:>7.1f} ms  {meaning} ({name})")


if __name__ == "__main__":
    main()
