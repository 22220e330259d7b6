"""Session replay: what a 5-minute session costs in storage, and how soon its replay page shows the first
frame.

    nice -n 10 .venv/bin/python bench/replay.py                 # one 5-minute session, 5 page opens
    nice -n 10 .venv/bin/python bench/replay.py --minutes 10 --runs 10

A real `stacklens` app (uvicorn, SQLite control store, embedded chdb warehouse in a temporary directory)
receives the session as the browser SDK sends it: a segment every 5 seconds through the envelope endpoint,
each a `replay_event` and a zlib `replay_recording` of rrweb events (the demo's generator: a cart page of 200
products as the full snapshot, a mouse move every 50 ms, a click with its breadcrumb and a DOM insertion
every ~4 s). It prints the bytes stored (the segments as kept, and the table's parts on disk) and, in Debian's
chromium with a cold cache each time, the time from opening the replay page to the player's first frame
(goal: ≤ 1 MB, ≤ 1 s)."""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demo import replays as replay_demo
from stacklens.cli.app import build_app
from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

PASSWORD = "bench-password-123"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


def _session(minutes: int, dsn: str) -> tuple[str, list[bytes]]:
    rng = random.Random(20)
    start_ms = int(time.time() * 1000) - minutes * 60_000 - 5_000
    events = replay_demo.session_events(
        rng, "https://shop.example", start_ms, minutes * 60, move_every_ms=50, products=200
    )
    replay_id = replay_demo.new_replay_id("bench")
    ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"
    bodies = replay_demo.replay_envelopes(
        dsn,
        replay_id,
        events,
        origin="https://shop.example",
        release="shop@1.0.0",
        environment="bench",
        user_agent=ua,
        user_id="cust-1",
        error_ids=[],
        segment_seconds=5,  # the SDK flushes every 5 s
    )
    return replay_id, bodies


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        data = Path(tmp)
        settings = Settings(
            data_dir=data,
            warehouse_url=f"chdb://{data / 'warehouse'}",
            warehouse_database="bench_replay",
            database_url=f"sqlite:///{data / 'control.db'}",
            secret_key="bench-secret-key-0123456789abcdef",
            run_schedules=False,
        )
        override_settings(settings)
        migrate_control_store(settings)
        apply_migrations(settings)
        email = "owner@bench.test"
        with session_scope(settings) as session:
            org, _ = accounts.create_organization(session, "Bench", email, PASSWORD)
            project, app_key = create_project(session, org.id, "Shop")
            org_id, org_slug, project_id, slug = org.id, org.slug, project.id, project.slug
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(build_app(settings), host="127.0.0.1", port=port, log_level="warning")
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        replay_id, bodies = _session(args.minutes, f"http://{app_key}@127.0.0.1:{port}/{project_id}")
        sent = sum(len(b) for b in bodies)
        began = time.perf_counter()
        with httpx.Client(timeout=30) as client:
            for body in bodies:
                answer = client.post(
                    f"{base}/api/{project_id}/envelope/", params={"sentry_key": app_key}, content=body
                )
                assert answer.status_code == 200, answer.text
        ingest_s = time.perf_counter() - began
        warehouse = get_warehouse(settings)
        kept = warehouse.query(
            "SELECT count(), sum(size_bytes) FROM replay_segments WHERE org_id = {org:UInt64}",
            parameters={"org": org_id},
        ).result_rows[0]
        warehouse.command("OPTIMIZE TABLE replay_segments FINAL")
        warehouse.command("OPTIMIZE TABLE replays FINAL")
        disk = dict(
            warehouse.query(
                "SELECT table, sum(bytes_on_disk) FROM system.parts WHERE database = currentDatabase() "
                "AND active AND table IN ('replay_segments', 'replays') GROUP BY table"
            ).result_rows
        )
        print(
            f"session: {args.minutes} min, {len(bodies)} segments, {sent / 1e6:.2f} MB of envelopes sent in {ingest_s:.1f} s"
        )
        print(
            f"stored: segments as kept {int(kept[1]) / 1e6:.3f} MB; on disk replay_segments {disk.get('replay_segments', 0) / 1e6:.3f} MB + replays {disk.get('replays', 0) / 1e6:.3f} MB"
        )

        from stacklens.replay import reads
        from stacklens.replay.timeline import read_marks

        replay = reads.replay_uuid(replay_id) or ""
        steps: dict[str, float] = {}
        for name, call in (
            ("span", lambda: reads.replay_span(warehouse, org_id, project_id, replay)),
            ("meta", lambda: reads.replay_meta(warehouse, org_id, project_id, replay)),
            ("recording", lambda: reads.recording_json(warehouse, org_id, project_id, replay)),
            ("marks", lambda: read_marks(reads.replay_marks(warehouse, org_id, project_id, replay), 0.0)),
        ):
            call()
            began = time.perf_counter()
            call()
            steps[name] = (time.perf_counter() - began) * 1000
        print("  server reads: " + ", ".join(f"{k} {v:.0f} ms" for k, v in steps.items()))
        times: list[float] = []
        phases: list[list[float]] = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/login")
            page.fill("input[name=email]", email)
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit].primary")
            page.wait_for_url(f"{base}/orgs/{org_slug}")
            url = f"{base}/orgs/{org_slug}/projects/{slug}/replays/{replay_id}"
            for target in (
                url,
                f"{base}/orgs/{org_slug}/projects/{slug}/replays",
                f"{base}/orgs/{org_slug}/projects/{slug}/issues",
            ):
                page.request.get(target)
                began = time.perf_counter()
                page.request.get(target)
                print(f"  GET {target.split('/projects/')[1]}: {(time.perf_counter() - began) * 1000:.0f} ms")
            signed_in = page.context.storage_state()
            for _ in range(args.runs):
                # A new context each time: a cold cache (no script, stylesheet or recording kept), signed in.
                page = browser.new_context(
                    storage_state=signed_in, viewport={"width": 1400, "height": 1000}
                ).new_page()
                began = time.perf_counter()
                page.goto(url, wait_until="commit")
                page.wait_for_selector("#replay-player[data-ready='1']", timeout=30_000)
                page.frame_locator(".replayer-wrapper iframe").locator("#checkout").wait_for(state="attached")
                times.append(time.perf_counter() - began)
                timing = page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " const r = performance.getEntriesByType('resource').filter(e => e.name.includes('recording.json'))[0];"
                    " return [n.responseEnd, n.domContentLoadedEventEnd, r ? r.responseEnd - r.startTime : -1]; }"
                )
                phases.append(timing)
                page.context.close()
            browser.close()
        server.should_exit = True
        html, dom, recording = (statistics.median(p[i] for p in phases) for i in range(3))
        print(
            f"  page HTML {html:.0f} ms, DOM ready {dom:.0f} ms, recording.json {recording:.0f} ms (medians)"
        )
        print(
            f"first frame: median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {len(times)} opens"
        )


if __name__ == "__main__":
    main()
