"""Footprint: RSS and threads of `stacklens up` (what `make up` runs) under the demo's load, or of an idle
server.

    .venv/bin/python bench/footprint.py                    # 35 days of history, then 5 minutes live
    .venv/bin/python bench/footprint.py --minutes 2 --backfill-days 7
    .venv/bin/python bench/footprint.py --idle 120         # `stacklens serve`, empty warehouse, 2 min

Starts `stacklens up` on free ports with a fresh data directory (as a newcomer's first `make up`) and samples
every process of its tree once a second from /proc: the server (`stacklens serve` with the embedded engine,
the pipeline schedules and its ingest worker processes), the demo shop, the shipper and the traffic driver.
The load is the demo's own: the history backfill (35 days through the shop, the shipper delivering it, the
marts built once it has landed), then live traffic. Printed per phase (start-up and backfill; live): the
peak and median RSS and thread count of the server's process tree and of the whole tree, the peak per
process, and the server's own process split into anonymous memory (what it allocated) and file pages (the
libraries it maps, shared with the page cache), with the tree's PSS (each shared page divided between the
processes that map it). The goal for the server's tree (the service as installed, without the demo beside
it) is <= 600 MiB RSS and <= 60 threads under the demo's load, <= 300 MiB idle on an empty warehouse.
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
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GOAL_RSS_MIB = 600
GOAL_IDLE_RSS_MIB = 300
GOAL_THREADS = 60
ROLES = (
    ("server", re.compile(r"stacklens serve\b")),
    ("shop", re.compile(r"demo_shop\.server")),
    ("shipper", re.compile(r"stacklens-shipper")),
    ("traffic", re.compile(r"demo\.driver")),
    ("catch-up", re.compile(r"demo\.catch_up")),
)
# Processes of the server's own tree, by their command line.
SERVER_PARTS = (
    ("ingest worker", re.compile(r"stacklens\.ingest\.worker_processes|multiprocessing\.spawn")),
    ("resource tracker", re.compile(r"multiprocessing\.resource_tracker")),
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


@dataclass(frozen=True)
class Usage:
    """One process's (or a sum's) memory in KiB and threads."""

    rss: int = 0
    threads: int = 0
    anon: int = 0
    file: int = 0
    pss: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[int, int, int, int, int]:
        return (self.rss, self.threads, self.anon, self.file, self.pss)


def _usage(pid: int) -> Usage:
    """RSS (anonymous and file), threads and PSS of one process; zeros once it is gone."""
    fields: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
                fields[name] = int(value.split()[0])
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                fields["Pss"] = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return Usage()
    return Usage(
        rss=fields.get("VmRSS", 0),
        threads=fields.get("Threads", 0),
        anon=fields.get("RssAnon", 0),
        file=fields.get("RssFile", 0) + fields.get("RssShmem", 0),
        pss=fields.get("Pss", 0),
    )


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Sample:
    at: float
    phase: str
    per_role: dict[str, Usage]  # role -> the role's process and its children
    server_parts: dict[str, Usage]  # the server's own process and each kind of child it started


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    backfill_s: float | None = None
    marts_s: float | None = None


def _server_parts(server: int) -> dict[str, Usage]:
    out: dict[str, Usage] = {"server process": _usage(server)}
    for pid in _tree(server)[1:]:
        text = _cmdline(pid)
        part = next((name for name, pattern in SERVER_PARTS if pattern.search(text)), "other")
        out[part] = out.get(part, Usage()) + _usage(pid)
    return out


def _sample(root: int, at: float, phase: str, server: int | None = None) -> Sample:
    """Usage per role (each child of `stacklens up` with everything it started; the launcher), or of one
    server started alone (``server``)."""
    if server is not None:
        parts = _server_parts(server)
        total = Usage()
        for usage in parts.values():
            total = total + usage
        return Sample(at, phase, {"server": total}, parts)
    per_role: dict[str, Usage] = {"launcher": _usage(root)}
    parts = {}
    for child in _children(root):
        text = _cmdline(child)
        role = next((name for name, pattern in ROLES if pattern.search(text)), "other")
        if role == "server":
            parts = _server_parts(child)
        total = Usage()
        for pid in _tree(child):
            total = total + _usage(pid)
        per_role[role] = per_role.get(role, Usage()) + total
    return Sample(at, phase, per_role, parts)


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(90)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def _environment(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(data), PYTHONUNBUFFERED="1")
    return env


def run(minutes: float, backfill_days: int, keep: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="stacklens-footprint-"))
    data = work / "data"
    env = _environment(data)
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
            result.samples.append(_sample(up.pid, now - started, phase))
            if live_until is not None and now >= live_until:
                break
            if now - started > 1800:
                raise SystemExit(f"no history in the marts after 30 min:\n{text[-2000:]}")
            time.sleep(1.0)
    finally:
        _stop(up)
    report = summarize(result, ("start-up and backfill", "live"))
    report.update(command=" ".join(command), data_dir=str(data) if keep else "(removed)")
    if not keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return report


def run_idle(seconds: float, keep: bool) -> dict[str, Any]:
    """`stacklens serve` alone on a fresh data directory (an empty warehouse), sampled once it answers."""
    work = Path(tempfile.mkdtemp(prefix="stacklens-footprint-idle-"))
    data = work / "data"
    port = _free_port()
    command = [str(BIN / "stacklens"), "serve", "--port", str(port)]
    log = work / "serve.log"
    started = time.monotonic()
    with open(log, "wb") as out:
        serve = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=_environment(data), cwd=work, start_new_session=True)  # fmt: skip
    result = Run()
    answered: float | None = None
    try:
        while True:
            now = time.monotonic()
            if serve.poll() is not None:
                raise SystemExit(
                    f"stacklens serve exited with {serve.returncode}:\n{log.read_text()[-3000:]}"
                )
            if answered is None:
                health = f"http://127.0.0.1:{port}/api/health"
                with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as answer:
                    if answer.status == 200:
                        answered = now
                        result.backfill_s = now - started
            phase = "idle" if answered is not None else "start-up"
            result.samples.append(_sample(serve.pid, now - started, phase, server=serve.pid))
            if answered is not None and now - answered >= seconds:
                break
            if now - started > 300:
                raise SystemExit(f"no answer after 5 min:\n{log.read_text()[-2000:]}")
            time.sleep(1.0)
    finally:
        _stop(serve)
    report = summarize(result, ("start-up", "idle"))
    report.update(command=" ".join(command), data_dir=str(data) if keep else "(removed)")
    if not keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return report


def _stats(values: list[int]) -> dict[str, float]:
    return {"peak": max(values), "median": statistics.median(values)} if values else {"peak": 0, "median": 0}


def _peaks(samples: list[Sample], key: str) -> dict[str, dict[str, int]]:
    """Peak of each figure per role (``per_role``) or per part of the server (``server_parts``)."""
    names = sorted({n for s in samples for n in getattr(s, key)})
    out: dict[str, dict[str, int]] = {}
    for name in names:
        usages = [getattr(s, key).get(name, Usage()) for s in samples]
        out[name] = {
            "rss_mib": max(u.rss for u in usages) // 1024,
            "anon_mib": max(u.anon for u in usages) // 1024,
            "file_mib": max(u.file for u in usages) // 1024,
            "pss_mib": max(u.pss for u in usages) // 1024,
            "threads": max(u.threads for u in usages),
        }
    return out


def _at_peak(samples: list[Sample]) -> dict[str, Any]:
    """What the server's tree held at its peak sample: each part's RSS split (peaks of parts need not
    coincide, so their sum overstates the tree's)."""
    if not samples:
        return {}
    top = max(samples, key=lambda s: s.per_role.get("server", Usage()).rss)
    return {
        "at_s": round(top.at),
        "parts": {
            name: {"rss_mib": u.rss // 1024, "anon_mib": u.anon // 1024, "file_mib": u.file // 1024}
            for name, u in top.server_parts.items()
        },
    }


def summarize(result: Run, phase_names: tuple[str, ...]) -> dict[str, Any]:
    """The report: per phase, RSS and thread figures (JSON-shaped)."""
    phases: dict[str, Any] = {}
    for phase in phase_names:
        samples = [s for s in result.samples if s.phase == phase]
        server = [s.per_role.get("server", Usage()) for s in samples]
        phases[phase] = {
            "seconds": round(samples[-1].at - samples[0].at) if samples else 0,
            "server_rss_mib": _stats([u.rss // 1024 for u in server]),
            "server_pss_mib": _stats([u.pss // 1024 for u in server]),
            "server_threads": _stats([u.threads for u in server]),
            "all_rss_mib": _stats([sum(u.rss for u in s.per_role.values()) // 1024 for s in samples]),
            "all_threads": _stats([sum(u.threads for u in s.per_role.values()) for s in samples]),
            "peak_per_role": _peaks(samples, "per_role"),
            "peak_per_server_part": _peaks(samples, "server_parts"),
            "at_server_peak": _at_peak(samples),
        }
    return {
        "backfill_done_s": round(result.backfill_s or 0),
        "marts_built_s": round(result.marts_s or 0),
        "phases": phases,
    }


def _print_peaks(peaks: dict[str, dict[str, int]], indent: str) -> None:
    for name, peak in peaks.items():
        print(f"{indent}{name:<17} peak {peak['rss_mib']:>5} MiB (anon {peak['anon_mib']:>4}, file "
              f"{peak['file_mib']:>4}, PSS {peak['pss_mib']:>4}), {peak['threads']:>4} threads")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="live traffic sampled after the history")
    parser.add_argument("--backfill-days", type=int, default=35)
    parser.add_argument(
        "--idle", type=float, default=None, metavar="SECONDS", help="sample `stacklens serve` alone, idle"
    )
    parser.add_argument("--keep", action="store_true", help="keep the data directory and logs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    idle = args.idle is not None
    report = run_idle(args.idle, args.keep) if idle else run(args.minutes, args.backfill_days, args.keep)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"$ {report['command']}")
    if idle:
        print(f"answered after {report['backfill_done_s']} s")
    else:
        print(
            f"backfill marker after {report['backfill_done_s']} s, marts built after {report['marts_built_s']} s"
        )
    goal_rss = GOAL_IDLE_RSS_MIB if idle else GOAL_RSS_MIB
    ok = True
    for phase, figures in report["phases"].items():
        print(f"\n{phase} ({figures['seconds']} s):")
        for name, label in (("server", "server tree"), ("all", "whole tree")):
            rss, threads = figures[f"{name}_rss_mib"], figures[f"{name}_threads"]
            print(f"  {label:<12} RSS peak {rss['peak']:>5} MiB, median {rss['median']:>7.0f} MiB; "
                  f"threads peak {threads['peak']:>4}, median {threads['median']:>5.0f}")  # fmt: skip
        pss = figures["server_pss_mib"]
        print(f"  server tree  PSS peak {pss['peak']:>5} MiB, median {pss['median']:>7.0f} MiB")
        _print_peaks(figures["peak_per_role"], "    ")
        print("  the server's tree:")
        _print_peaks(figures["peak_per_server_part"], "    ")
        at_peak = figures["at_server_peak"]
        if at_peak:
            held = ", ".join(f"{name} {u['rss_mib']} MiB (anon {u['anon_mib']}, file {u['file_mib']})"
                             for name, u in at_peak["parts"].items())  # fmt: skip
            print(f"  at the server tree's peak ({at_peak['at_s']} s in): {held}")
        if idle and phase != "idle":
            continue  # the idle goal is the idle server's: a first start's migrations are printed, not judged
        server_peak = figures["server_rss_mib"]["peak"], figures["server_threads"]["peak"]
        ok = ok and server_peak[0] <= goal_rss and server_peak[1] <= GOAL_THREADS
    judged = "the idle phase's server tree" if idle else "server tree"
    print(f"\ngoal ({judged} <= {goal_rss} MiB and <= {GOAL_THREADS} threads): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
