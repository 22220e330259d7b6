"""Monitors benchmark: 1,000 cron monitors on a one-minute schedule and 100 uptime checks (issue 64).

    .venv/bin/python bench/monitors.py               # 1,000 cron monitors, 100 uptime checks, 6 minutes
    .venv/bin/python bench/monitors.py --cron 200 --minutes 3

In a fresh installation (own temporary data directory: SQLite control store, embedded warehouse, every
migration applied): one organization, 5 projects, ``--cron`` monitors with schedule ``* * * * *`` and a margin
of 1 minute, ``--uptime`` uptime checks (interval 60 s) of a local HTTP server (allowed by the outbound
allow-list), and an alert rule of type ``monitor`` with an e-mail channel per project. Then ``--minutes``
minutes on the real clock: at the start of each minute every monitor but each tenth checks in for that
minute's run (``in_progress`` then ``ok``, eight jobs at a time, through the check-in path's group commit),
while a thread of its own runs the embedded runner's minute ticks (each within the runner's 5 s poll of
its minute, whatever the check-ins are doing): the uptime probes (all due checks, in parallel), the
detection of missed runs, and the incidents' issue events. The tenth that never checks in is missed every
minute (one incident each, then its misses join the incident).

Printed: check-ins per second through the check-in path; per tick the detection's duration and the whole
tick's (probes, detection, issue events); the p50 / p95 / max over the ticks; and each missed run's report
latency (the moment its missed check-in was committed minus its deadline, the scheduled time plus the margin):
goal every missed run reported within 60 s, the tick's p95 at most 2 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROJECTS = 5
CLIENTS = 8  # jobs checking in at the same time
# The embedded runner wakes every 5 s (pipelines/embedded.py): a minute's tick starts up to 5 s after it.
POLL_S = 5.0


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(cron: int, uptime: int, minutes: int) -> dict[str, Any]:
    from sqlalchemy import func, select

    from stacklens.alerts.rules import create_rule
    from stacklens.control.accounts import create_organization
    from stacklens.control.channels import create_channel
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
    from stacklens.control.models.monitors import MonitorCheckIn, MonitorIncident
    from stacklens.control.projects import create_project
    from stacklens.monitors.checkins import record_all
    from stacklens.monitors.detection import detect
    from stacklens.monitors.group_commit import group_for
    from stacklens.monitors.issues import send_issue_events
    from stacklens.monitors.store import create_monitor
    from stacklens.monitors.uptime import probe_due
    from stacklens.outbound import AllowList, OutboundClient
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-monitors-"))
    # The probed site in a process of its own, as a real site is (in this one it would share the interpreter
    # lock with the probes).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (data_dir / "www").mkdir()
    (data_dir / "www" / "health").write_text("ok")
    site = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(data_dir / "www"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/health"
    time.sleep(1.0)
    settings = Settings(
        data_dir=data_dir, warehouse_database="bench", run_schedules=False, outbound_allow="127.0.0.1"
    )
    override_settings(settings)
    migrate_control_store(settings)
    apply_migrations(settings)
    warehouse = get_warehouse(settings)
    allow = AllowList.parse("127.0.0.1")
    created = datetime.now(UTC)
    projects: list[tuple[int, int]] = []
    with session_scope(settings) as session:
        org, _ = create_organization(session, "Bench", "bench@example.test", "bench-password-1")
        for p in range(PROJECTS):
            project, _ = create_project(session, org.id, f"Jobs {p}")
            projects.append((org.id, project.id))
            channel, _ = create_channel(
                session, org.id, settings, type="email", name=f"ops {p}", to=["o@x.test"]
            )
            create_rule(
                session,
                org.id,
                {"name": f"jobs {p}", "type": "monitor", "project": project.slug, "channels": [channel.id]},
            )
            for i in range(p, cron, PROJECTS):
                body = {"slug": f"job-{i}", "schedule": "* * * * *", "checkin_margin": 1, "max_runtime": 5}
                create_monitor(session, project, body, allow, now=created)
            for i in range(p, uptime, PROJECTS):
                body = {"slug": f"site-{i}", "kind": "uptime", "url": url, "interval_seconds": 60}
                create_monitor(session, project, body, allow, now=created)
    client = OutboundClient(allow=allow)
    checkin_s: list[float] = []
    checkins = 0
    detection_s: list[float] = []
    tick_s: list[float] = []
    latencies: list[float] = []
    # Start at a minute's beginning: the monitors' first run is the next minute's.
    time.sleep(max(0.0, 60 - datetime.now(UTC).second - datetime.now(UTC).microsecond / 1e6) + 0.5)
    first = datetime.now(UTC).replace(second=0, microsecond=0)

    def ticks() -> None:
        """The runner's minute ticks, in a thread of their own as in the server: each starts within the
        runner's poll after its minute begins, whatever the check-ins are doing."""
        for n in range(1, minutes + 1):
            minute = first + timedelta(minutes=n)
            time.sleep(max(0.0, (minute - datetime.now(UTC)).total_seconds()) + POLL_S / 2)
            t0 = time.perf_counter()
            probe_due(settings, warehouse, "http://bench.test", client)
            t1 = time.perf_counter()
            summary = detect(settings, "http://bench.test")
            detected_at = datetime.now(UTC)
            t2 = time.perf_counter()
            send_issue_events(settings)
            t3 = time.perf_counter()
            detection_s.append(t2 - t1)
            tick_s.append(t3 - t0)
            with session_scope(settings) as session:
                rows = session.execute(
                    select(MonitorCheckIn.expected_at).where(
                        MonitorCheckIn.status == "missed",
                        MonitorCheckIn.received_at >= minute - timedelta(seconds=1),
                    )
                ).all()
            # Deadline: the scheduled time plus the margin (1 minute).
            latencies.extend(
                (detected_at - expected - timedelta(minutes=1)).total_seconds() for (expected,) in rows
            )
            print(
                f"tick {minute:%H:%M}: {summary.missed} missed; probes {t1 - t0:.3f} s, detection "
                f"{t2 - t1:.3f} s, issue events {t3 - t2:.3f} s, tick {t3 - t0:.3f} s",
                flush=True,
            )

    ticker = threading.Thread(target=ticks)
    ticker.start()
    for n in range(minutes):
        run_minute = first + timedelta(minutes=n)
        time.sleep(max(0.0, (run_minute - datetime.now(UTC)).total_seconds()))
        # This minute's run of the healthy nine tenths checks in (in_progress, then ok), from CLIENTS jobs
        # at once as a fleet of hosts sends them: concurrent check-ins share transactions (group commit).
        t0 = time.perf_counter()

        def run_job(i: int, run_minute: datetime = run_minute) -> int:
            org_id, project_id = projects[i % PROJECTS]
            check_in_id = f"{i:08x}{int(run_minute.timestamp()):024x}"
            for status in ("in_progress", "ok"):
                record_all(
                    settings,
                    org_id,
                    project_id,
                    [{"monitor_slug": f"job-{i}", "status": status, "check_in_id": check_in_id}],
                    datetime.now(UTC),
                    "http",
                )
            return 2

        with ThreadPoolExecutor(CLIENTS) as pool:
            checkins += sum(pool.map(run_job, [i for i in range(cron) if i % 10 != 9]))
        checkin_s.append(time.perf_counter() - t0)
        print(f"check-ins of {run_minute:%H:%M}: {checkin_s[-1]:.1f} s", flush=True)
    ticker.join()
    transactions = group_for(("checkins", settings.database_url, settings.data_dir), lambda b: None).batches
    with session_scope(settings) as session:
        incidents = session.scalar(select(func.count()).select_from(MonitorIncident))
    probes = int(warehouse.query("SELECT count() FROM monitor_checks").result_rows[0][0])
    site.terminate()
    site.wait(10)
    reset_clients()
    dispose_engines()
    override_settings(None)
    shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "cron_monitors": cron,
        "uptime_checks": uptime,
        "minutes": minutes,
        "checkins": checkins,
        "checkins_per_s": round(checkins / sum(checkin_s), 1),
        "checkin_transactions": transactions,
        "probes": probes,
        "incidents": incidents,
        "missed_reported": len(latencies),
        "report_latency_s_max": round(max(latencies), 2) if latencies else None,
        "report_latency_s_p50": round(statistics.median(latencies), 2) if latencies else None,
        "detection_s": [round(t, 3) for t in detection_s],
        "tick_s": [round(t, 3) for t in tick_s],
        "tick_s_p50": round(_p(tick_s, 0.5), 3),
        "tick_s_p95": round(_p(tick_s, 0.95), 3),
        "tick_s_max": round(max(tick_s), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cron", type=int, default=1000)
    parser.add_argument("--uptime", type=int, default=100)
    parser.add_argument("--minutes", type=int, default=6)
    args = parser.parse_args()
    print(json.dumps(run(args.cron, args.uptime, args.minutes)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
