"""Footprint: RSS and threads of `stacklens up` (what `make up` runs) under the demo's load.

    .venv/bin/python bench/footprint.py                    # 35 days of history, then 5 minutes of live
    traffic .venv/bin/python bench/footprint.py --minutes 2 --backfill-days 7

Starts `stacklens up` on free ports with a fresh data directory (as a newcomer's first `make up`) and samples
every process of its tree once a second from /proc: the server (`stacklens serve` with the embedded engine,
the pipeline schedules and its ingest worker processes), the demo shop, the shipper and the traffic driver.
The load is the demo's own: the history backfill (35 days through the shop, the shipper delivering it, the
marts built once it has landed), then live traffic. Printed per phase (start-up and backfill; live): the
peak and median RSS and thread count of the server's process tree and of the whole tree, and the peak per
process. The goal for the server's tree (the embedded stack) is <= 1 GB RSS and <= 60 threads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GOAL_RSS_MIB = 1024
GOAL_THREADS = 60
ROLES = (
    ("server", re.compile(r"stacklens serve\b")),
    ("shop", re.compile(r"demo_shop\.server")),
    ("shipper", re.compile(r"stacklens-shipper")),
    ("traffic", re.compile(r"stacklens\.demo\.driver")),
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(p) for p in path.read_text().split()]
    except OSError:
        return []


def _tree(pid: int) -> list[int]:
    return [pid] + [grandchild for kid in _children(pid) for grandchild in _tree(kid)]


def _status(pid: int) -> tuple[int, int]:
    """(RSS in KiB, threads) of one process; zeros once it is gone."""
    rss = threads = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    except OSError:
        pass
    return rss, threads


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Sample:
    at: float
    phase: str
    per_role: dict[str, tuple[int, int]]  # role -> (RSS KiB, threads), the role's process and its children


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    backfill_s: float | None = None
    marts_s: float | None = None


def _roles(root: int) -> dict[str, tuple[int, int]]:
    """RSS and threads per role: each child of `stacklens up` with everything it started; the launcher."""
    out: dict[str, tuple[int, int]] = {"launcher": _status(root)}
    for child in _children(root):
        text = _cmdline(child)
        role = next((name for name, pattern in ROLES if pattern.search(text)), f"other:{child}")
        rss = threads = 0
        for pid in _tree(child):
            r, t = _status(pid)
            rss, threads = rss + r, threads + t
        before = out.get(role, (0, 0))
        out[role] = (before[0] + rss, before[1] + threads)
    return out


def run(minutes: float, backfill_days: int, keep: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="stacklens-footprint-"))
    data = work / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(data), PYTHONUNBUFFERED="1")
    port, shop_port = _free_port(), _free_port()
    command = [str(BIN / "stacklens"), "up", "--port", str(port), "--shop-port", str(shop_port),
               "--backfill-days", str(backfill_days)]  # fmt: skip
    log = work / "up.log"
    started = time.monotonic()
    with open(log, "wb") as out:
        up = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work, start_new_session=True)  # fmt: skip
    result = Run()
    marker = data / "demo" / "backfill.done"
    live_until: float | None = None
    try:
        while True:
            now = time.monotonic()
            if up.poll() is not None:
                raise SystemExit(f"stacklens up exited with {up.returncode}:\n{log.read_text()[-3000:]}")
            text = log.read_text(errors="replace")
            if result.backfill_s is None and marker.exists():
                result.backfill_s = now - started
            if result.marts_s is None and "history is in the performance pages" in text:
                result.marts_s = now - started
                live_until = now + minutes * 60
            elif result.marts_s is None and (
                "history will reach" in text or "Building the demo's history failed" in text
            ):
                raise SystemExit(f"the demo's marts were not built:\n{text[-2000:]}")
            phase = "live" if live_until is not None else "start-up and backfill"
            result.samples.append(Sample(now - started, phase, _roles(up.pid)))
            if live_until is not None and now >= live_until:
                break
            if now - started > 1800:
                raise SystemExit(f"no history in the marts after 30 min:\n{text[-2000:]}")
            time.sleep(1.0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(up.pid, signal.SIGINT)
        try:
            up.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait(10)
    report = summarize(result)
    report.update(command=" ".join(command), data_dir=str(data) if keep else "(removed)")
    if not keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return report


def _stats(values: list[int]) -> dict[str, float]:
    return {"peak": max(values), "median": statistics.median(values)} if values else {"peak": 0, "median": 0}


def summarize(result: Run) -> dict[str, Any]:
    """The report: per phase, RSS and thread figures (JSON-shaped)."""
    phases: dict[str, Any] = {}
    for phase in ("start-up and backfill", "live"):
        samples = [s for s in result.samples if s.phase == phase]
        roles = sorted({r for s in samples for r in s.per_role})
        phases[phase] = {
            "seconds": round(samples[-1].at - samples[0].at) if samples else 0,
            "server_rss_mib": _stats([s.per_role.get("server", (0, 0))[0] // 1024 for s in samples]),
            "server_threads": _stats([s.per_role.get("server", (0, 0))[1] for s in samples]),
            "all_rss_mib": _stats([sum(v[0] for v in s.per_role.values()) // 1024 for s in samples]),
            "all_threads": _stats([sum(v[1] for v in s.per_role.values()) for s in samples]),
            "peak_per_role": {
                r: {
                    "rss_mib": max(s.per_role.get(r, (0, 0))[0] for s in samples) // 1024,
                    "threads": max(s.per_role.get(r, (0, 0))[1] for s in samples),
                }
                for r in roles
            },
        }
    return {
        "backfill_done_s": round(result.backfill_s or 0),
        "marts_built_s": round(result.marts_s or 0),
        "phases": phases,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="live traffic sampled after the history")
    parser.add_argument("--backfill-days", type=int, default=35)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and logs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.minutes, args.backfill_days, args.keep)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"$ {report['command']}")
    print(
        f"backfill marker after {report['backfill_done_s']} s, marts built after {report['marts_built_s']} s"
    )
    ok = True
    for phase, figures in report["phases"].items():
        print(f"\n{phase} ({figures['seconds']} s):")
        for name, label in (("server", "server tree"), ("all", "whole tree")):
            rss, threads = figures[f"{name}_rss_mib"], figures[f"{name}_threads"]
            print(f"  {label:<12} RSS peak {rss['peak']:>5} MiB, median {rss['median']:>7.0f} MiB; "
                  f"threads peak {threads['peak']:>4}, median {threads['median']:>5.0f}")  # fmt: skip
        for role, peak in figures["peak_per_role"].items():
            print(f"    {role:<10} peak {peak['rss_mib']:>5} MiB, {peak['threads']:>4} threads")
        server_peak = figures["server_rss_mib"]["peak"], figures["server_threads"]["peak"]
        ok = ok and server_peak[0] <= GOAL_RSS_MIB and server_peak[1] <= GOAL_THREADS
    print(
        f"\ngoal (server tree <= {GOAL_RSS_MIB} MiB and <= {GOAL_THREADS} threads): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
