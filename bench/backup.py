"""Backup and restore of an embedded installation: `stacklens backup` (full, incremental, sealed) and
`restore`.

    .venv/bin/python bench/backup.py                    # 100,000 error events (default)
    .venv/bin/python bench/backup.py --size 1000000     # the 1 M run

For each size N, in a fresh data directory (every migration applied): N error events over 5 projects and
14 days, N/10 transactions and 4 spans per page load, generated inside the engine as bench/pipelines.py does
(the insert-time materialized views run; payloads are the generator's small ones, so bytes per event are
below a real SDK event's). Then it times, in this process (which owns the warehouse, as `stacklens serve`
does): a full backup, 10,000 new events, an incremental backup against the full one, a sealed full backup, and
a restore of the full backup into a second database of the same engine (the restore checks every raw table's
rows and checksum against the manifest). Sizes are the backup directories' bytes on disk.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run(size: int) -> dict[str, Any]:
    from bench.pipelines import DAYS, _generate
    from stacklens.control.db import migrate_control_store
    from stacklens.operations.backup import run_backup
    from stacklens.operations.restore import restore_backup
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-backup-"))
    try:
        settings = Settings(data_dir=work / "data", warehouse_database="bench", run_schedules=False)
        override_settings(settings)
        migrate_control_store(settings)
        apply_migrations(settings)
        client = get_warehouse(settings)
        _generate(client, 0, size, age_s=600, span_s=DAYS * 86400, as_they_happen=True)
        rows = {
            t: int(client.query(f"SELECT count() FROM {t}").result_rows[0][0])  # noqa: S608 - constant names
            for t in ("events", "transactions", "spans")
        }
        out: dict[str, Any] = {"size": size, "rows": rows, "data_dir_bytes": _bytes(work / "data")}

        started = time.perf_counter()
        manifest, _ = run_backup(settings, work / "full")
        out["full_s"] = round(time.perf_counter() - started, 2)
        out["full_drains_held_s"] = round(manifest.held_ms / 1000, 2)
        from stacklens.operations.backup import table_figures

        started = time.perf_counter()  # the part of the hold spent on the raw tables' checksums
        table_figures(client, "bench", [t for t, v in manifest.tables.items() if v.get("kept")])
        out["checksums_s"] = round(time.perf_counter() - started, 2)
        out["full_bytes"] = _bytes(work / "full")

        _generate(client, size, 10_000, age_s=0, span_s=600, as_they_happen=False)
        started = time.perf_counter()
        run_backup(settings, work / "incremental", base=work / "full")
        out["incremental_s"] = round(time.perf_counter() - started, 2)
        out["incremental_bytes"] = _bytes(work / "incremental")

        started = time.perf_counter()
        run_backup(settings, work / "sealed", passphrase="bench passphrase 0123")
        out["sealed_s"] = round(time.perf_counter() - started, 2)
        out["sealed_bytes"] = _bytes(work / "sealed")

        target = Settings(
            data_dir=work / "restored", warehouse_database="bench_restored", run_schedules=False
        )
        target = target.model_copy(update={"warehouse_url": settings.resolved_warehouse_url})
        started = time.perf_counter()
        result = restore_backup(target, work / "full")
        out["restore_s"] = round(time.perf_counter() - started, 2)
        out["restore_rows_checked"] = result.rows_checked
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append", help="error events (repeatable)")
    args = parser.parse_args()
    sizes = args.size or [100_000]
    if len(sizes) == 1:
        print(json.dumps(run(sizes[0])), flush=True)
        return
    import subprocess

    for size in sizes:  # the embedded engine opens one data directory per process: a process per size
        subprocess.run([sys.executable, __file__, "--size", str(size)], check=True)


if __name__ == "__main__":
    main()
