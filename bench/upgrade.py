"""Upgrade benchmark (issue #48): the oldest StackLens of the upgrade path (docs/operations.md, "The upgrade
path") holding N error events, upgraded in place by today's `stacklens migrate`, then today's `stacklens
serve` until it answers. Prints the data directory's size, the migration's duration (with the backup it takes
first when a migration rewrites data), the server's start, the downtime (old server stopped → new one healthy)
and what the upgraded installation answers.

    PYTHONPATH=$PWD .venv/bin/python bench/upgrade.py                      # 1,000,000 events
    PYTHONPATH=$PWD .venv/bin/python bench/upgrade.py --events 100000 --keep /tmp/upgrade-100k

The older code runs from ``git archive <commit>`` with this venv's packages, as
tests/e2e/test_upgrade_from_history.py runs it. Its CLI makes the organization, project and keys, its
server starts once on the empty installation (so its startup work is done), then the events are written by
its own warehouse client into its own tables (every materialized view of that version fires): 500 issues,
20,000 users, 5 releases over 14 days, in blocks of 100,000 rows as ingest writes batches. The downtime
counted is the old server stopped, today's `migrate`, and today's `serve` until `/api/health` answers 200;
then the issue list over the API and the events' count."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
OLDER = "b042047c2adc345adb0d2805e9146a59c6c9326e"  # "first-alerts", the test's oldest version
CLI = [sys.executable, "-c", "import sys; from stacklens.cli.main import main; sys.exit(main())"]
ISSUES, USERS, BLOCK = 500, 20_000, 100_000

FILL = textwrap.dedent(
    """
    import sys, time
    from stacklens.settings import get_settings
    from stacklens.warehouse.client import get_warehouse

    org_id, project_id, total, block = (int(a) for a in sys.argv[1:5])
    issues, users = int(sys.argv[5]), int(sys.argv[6])
    client = get_warehouse(get_settings())
    started = time.monotonic()
    for start in range(0, total, block):
        client.command(f'''
            INSERT INTO events (org_id, project_id, event_id, issue_id, fingerprint, grouping_version, timestamp,
                received_at, batch_id, platform, level, release, environment, title, culprit, exception_type,
                exception_value, exception_types, exception_values, in_app_frames, user_key, payload)
            SELECT {org_id}, {project_id}, generateUUIDv4(number), 1000000 + number % {issues},
                lower(hex(cityHash64(number % {issues}))), 'v1',
                now64(3) - toIntervalMillisecond(number * 1209600000 / {total}),
                now64(3) - toIntervalMillisecond(number * 1209600000 / {total}),
                concat('bench-', toString(intDiv(number, {block}))), 'python', 'error',
                concat('shop@1.', toString(4 - intDiv(number * 5, {total}))), 'production',
                concat('RuntimeError: failure at site ', toString(number % {issues})),
                concat('shop.checkout:site_', toString(number % {issues})), 'RuntimeError',
                concat('failure at site ', toString(number % {issues})), ['RuntimeError'],
                [concat('failure at site ', toString(number % {issues}))],
                [concat('shop.checkout:site_', toString(number % {issues}))],
                concat('user-', toString(cityHash64(number) % {users})),
                concat('{{"message": "failure at site ', toString(number % {issues}), '"}}')
            FROM numbers({start}, {min(block, total - start)})
        ''')
    print(round(time.monotonic() - started, 1))
    """
)


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 3600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv[-3:])} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    return done


def _serve(env: dict[str, str], cwd: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    return subprocess.Popen(
        [*CLI, "serve", "--port", str(port)], env=env, cwd=cwd, stdout=handle, stderr=handle
    )


def _healthy(base: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 600) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/api/health", timeout=2.0).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"no healthy answer in {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--commit", default=OLDER, help="the older version (a commit of this repository)")
    parser.add_argument("--keep", type=Path, help="a directory to keep the run in (default: a temporary one)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="stacklens-upgrade-"))
    if root.exists() and any(root.iterdir()):
        raise SystemExit(f"{root} is not empty")
    root.mkdir(parents=True, exist_ok=True)
    data, old = root / "data", root / "older"
    data.mkdir()
    old.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.commit], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(data), STACKLENS_RUN_SCHEDULES="false", PYTHONUNBUFFERED="1")
    older = {**env, "PYTHONPATH": str(old)}

    def old_cli(argv: list[str]) -> dict[str, Any]:
        return dict(json.loads(_run(CLI + argv, older, old).stdout))

    org = old_cli(["admin", "create-org", "--json", "--name", "Upgrade Co", "--owner-email",
                   "owner@upgrade.example", "--password", "upgrade-password-1"])  # fmt: skip
    project = old_cli(["admin", "create-project", "--json", "--org", "Upgrade Co", "--name", "Shop"])
    port = _free_port()
    server = _serve(older, old, port, root / "older-server.log")
    _healthy(f"http://127.0.0.1:{port}", server, root / "older-server.log")
    _stop(server)  # its startup work done on this directory; the engine is one process's at a time
    fill = _run(
        [sys.executable, "-c", FILL, str(org["org_id"]), str(project["project_id"]), str(args.events), str(BLOCK),
         str(ISSUES), str(USERS)],
        older, old,
    )  # fmt: skip
    filled_bytes = _size(data)
    print(f"older {args.commit[:7]}: {args.events:,} events written in {fill.stdout.strip()} s; "
          f"data directory {filled_bytes / 1e6:,.0f} MB")  # fmt: skip

    today = {**env}
    down = time.monotonic()  # the older server is stopped: the installation is down from here
    migrate = _run([*CLI, "migrate"], today, ROOT)
    migrated = time.monotonic() - down
    lines = [line for line in migrate.stdout.splitlines() if line.strip()]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = root / "server.log"
    server = _serve(today, ROOT, port, log)
    started = _healthy(base, server, log)
    downtime = time.monotonic() - down
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {org['api_key']}"}, timeout=120)
    t = time.monotonic()
    listing = api.get(
        f"/api/projects/{project['slug']}/issues", params={"status": "all", "range": "14d", "limit": 100}
    )
    listed = time.monotonic() - t
    issues = listing.json().get("issues", []) if listing.status_code == 200 else []
    events_listed = sum(int(i["events"]) for i in issues)
    api.close()
    _stop(server)
    backups = data / "backups"
    backup_bytes = _size(backups) if backups.exists() else 0
    print(
        f"today's migrate: {migrated:.1f} s ({len(lines)} lines of output; last: {lines[-1] if lines else ''!r})"
    )
    if backup_bytes:
        print(f"  the backup it took first: {backup_bytes / 1e6:,.0f} MB under {backups}")
    print(f"today's serve: healthy {started:.1f} s after its start")
    print(f"downtime (older server stopped → today's healthy): {downtime:.1f} s")
    print(f"issue list: HTTP {listing.status_code} in {listed * 1000:.0f} ms, {len(issues)} issues, "
          f"{events_listed:,} events among them (of {args.events:,} written over {ISSUES} issues)")  # fmt: skip
    print(f"data directory after: {_size(data) / 1e6:,.0f} MB")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if listing.status_code == 200 and len(issues) == min(100, ISSUES) else 1


if __name__ == "__main__":
    raise SystemExit(main())
