"""Tracker-link benchmark: what StackLens adds around the tracker's own time, and the state read-back rate.

    nice -n 10 .venv/bin/python bench/trackers.py                 # 200 links (default)
    nice -n 10 .venv/bin/python bench/trackers.py --links 1000

Against the strict local tracker of the tests (GitHub REST shape, answering in well under a millisecond),
in a fresh SQLite control store: N issues linked one after another through
:func:`stacklens.integrations.links.create_link` (three control-store transactions, token decryption, one
POST), then the same N calls again (each must return the existing link without calling the tracker), then
:func:`stacklens.integrations.sync.sync_states` over all N links (one GET each). Printed: per-link
milliseconds (median, p95) and links read back per second. The tracker's own latency adds to every figure.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=int, default=200)
    args = parser.parse_args()

    from stacklens.control.accounts import create_organization
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
    from stacklens.control.integrations import create_connection
    from stacklens.control.projects import create_project
    from stacklens.integrations.links import create_link
    from stacklens.integrations.prefill import Draft
    from stacklens.integrations.sync import sync_states
    from stacklens.settings import Settings, override_settings
    from tests.stacklens.integrations import fake_trackers as ft

    fake = ft.FakeTrackers().start()
    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-trackers-"))
    try:
        settings = Settings(
            data_dir=data_dir, warehouse_database="bench", run_schedules=False, outbound_allow="127.0.0.1"
        )
        override_settings(settings)
        migrate_control_store(settings)
        with session_scope(settings) as session:
            org, _ = create_organization(session, "Bench", "bench@example.test", "bench-password-1")
            project, _ = create_project(session, org.id, "Web")
            body = {
                "type": "github",
                "base_url": fake.url,
                "token": ft.GITHUB_TOKEN,
                "default_target": "acme/web",
            }
            connection = create_connection(session, org.id, settings, body)
            org_id, project_id, connection_id = org.id, project.id, connection.id
        summary = {"title": "ZeroDivisionError", "culprit": "app.total", "events": 3, "users_affected": 1}
        draft = Draft(
            "ZeroDivisionError: division by zero", "", summary, "  at total (app.py:3)", "https://x/1"
        )
        created, again = [], []
        for issue_id in range(1, args.links + 1):
            t0 = time.perf_counter()
            create_link(settings, org_id, project_id, issue_id, connection_id, "", draft, "bench")
            created.append((time.perf_counter() - t0) * 1000)
        posts = sum(1 for c in fake.calls if c.method == "POST")
        for issue_id in range(1, args.links + 1):
            t0 = time.perf_counter()
            create_link(settings, org_id, project_id, issue_id, connection_id, "", draft, "bench")
            again.append((time.perf_counter() - t0) * 1000)
        assert sum(1 for c in fake.calls if c.method == "POST") == posts == args.links, (
            "a second ticket was made"
        )
        t0 = time.perf_counter()
        result = sync_states(settings, None)  # no connection resolves issues: no warehouse read
        sync_s = time.perf_counter() - t0
        print(f"links: {args.links}  (tracker: local, GitHub REST shape)")
        print(
            f"create linked issue: median {statistics.median(created):.1f} ms, p95 {_p95(created):.1f} ms per link"
        )
        print(
            f"same call again (existing link): median {statistics.median(again):.1f} ms, p95 {_p95(again):.1f} ms"
        )
        print(
            f"state read-back: {result.checked} links in {sync_s:.2f} s = {result.checked / sync_s:.0f} links/s"
        )
    finally:
        fake.stop()
        dispose_engines()
        override_settings(None)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
