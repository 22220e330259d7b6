"""Shipper throughput: `stacklens-shipper --record` over N events, to a loopback sink that only counts
(the shipper's own cost) and, with ``--server``, to a real `stacklens serve` with its own data dir.

    .venv/bin/python bench/shipper.py                      # short run (small and Sentry-sized, sink only)
    .venv/bin/python bench/shipper.py --batch-size 100     # the spec's default batchSize
    .venv/bin/python bench/shipper.py --server             # the same files to the sink and to `stacklens
    serve` .venv/bin/python bench/shipper.py --server --default-quota   # ... under the default rate limits
    (429s) .venv/bin/python bench/shipper.py --full               # 1,000,000 small and 20,000 Sentry-sized
    events

The lines are valid log lines (docs/architecture.md §11.1) carrying the app key of a project made with
`stacklens admin`,
so the service accepts them. A run against the service ends when `stacklens-shipper --status --json` shows
every line acknowledged. Prints lines/s, MiB/s, CPU seconds and peak RSS of the shipper process. Goals on one
core: >= 50,000 lines/s for small lines, >= 35 MiB/s for Sentry-sized events, gzip on, RSS <= 64 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from shipper_targets import Service, Sink

ROOT = Path(__file__).resolve().parents[1]
SHIPPER = ROOT / ".venv" / "bin" / "stacklens-shipper"
# Keys of the right shape for runs without a service (the sink checks none).
SINK_API_KEY = "stacklens_api_" + "B" * 32
SINK_APP_KEY = "stacklens_app_" + "C" * 24


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def log_line(app_key: str, payload: dict[str, Any]) -> bytes:
    """One SDK log line (docs/architecture.md §11.1) with a fresh event id, stamped now so no retention rule
    refuses it."""
    now = _now()
    payload = dict(payload, event_id=uuid.uuid4().hex, timestamp=now)
    line = {"v": 1, "type": "event", "app_key": app_key, "ts": now, "payload": payload}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


SMALL_PAYLOAD = {
    "level": "error",
    "message": "ValueError: bad input",
    "platform": "python",
    "tags": {"env": "prod"},
}


def sentry_payloads(count: int) -> list[dict]:
    """Real Sentry error events (with local variables) captured by sentry-sdk itself."""
    import sentry_sdk
    from sentry_sdk.transport import Transport

    captured: list[dict] = []

    class Keep(Transport):
        def capture_envelope(self, envelope) -> None:
            for item in envelope.items:
                if item.type == "event":
                    captured.append(item.payload.json)

    sentry_sdk.init(
        dsn="https://k@o0.ingest.invalid/1",
        transport=Keep,
        include_local_variables=True,
        max_value_length=1024,
        default_integrations=False,
    )

    def deep(level: int, data: dict) -> None:
        rows = [{"id": n, "name": f"row-{n}", "tags": ["a", "b", "c"]} for n in range(12)]  # noqa: F841 - a local the event carries
        blob = "lorem ipsum " * 60  # noqa: F841 - a local the event carries
        if level:
            deep(level - 1, data)
        raise ValueError(f"bad input at level {level}")

    for _ in range(count):
        try:
            deep(5, {"user": "u1", "cart": list(range(50))})
        except ValueError:
            sentry_sdk.capture_exception()
    sentry_sdk.flush()
    return captured


def write_logs(directory: Path, kind: str, events: int, app_key: str) -> int:
    path = directory / f"stacklens-{datetime.now(UTC):%Y-%m-%d}.log"
    templates = [SMALL_PAYLOAD] if kind == "small" else sentry_payloads(20)
    with open(path, "wb") as fh:
        for i in range(events):
            fh.write(log_line(app_key, templates[i % len(templates)]))
    return path.stat().st_size


def write_config(directory: Path, base_url: str, api_key: str, app_key: str, batch_size: int) -> Path:
    config = directory.parent / "stacklens.yaml"
    document = {
        "stacklens": {
            "apiKey": api_key,
            "appKey": app_key,
            "baseUrl": base_url,
            "storagePath": str(directory),
            "allowInsecureHttp": True,  # loopback only
            "batchSize": batch_size,
            "flushInterval": "200ms",
            "logLevel": "warn",
            "compress": True,
        }
    }
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(document, handle)
    os.chmod(config, 0o600)
    return config


def shipper_status(config: Path) -> dict[str, Any]:
    result = subprocess.run(
        [str(SHIPPER), "--config", str(config), "--status", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise SystemExit(f"stacklens-shipper --status failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def acknowledged(config: Path, events: int) -> Callable[[], bool]:
    """Done when the shipper's own status counts every line in an acknowledged batch, nothing pending."""

    def done() -> bool:
        status = shipper_status(config)
        return status["counters"].get("events", 0) >= events and status["pending"]["lines"] == 0

    return done


def _sample_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def run_shipper(config: Path, done: Callable[[], bool], poll: float) -> dict[str, Any]:
    started = time.monotonic()
    log_path = config.with_suffix(".log")
    with open(log_path, "wb") as out:
        proc = subprocess.Popen([str(SHIPPER), "--config", str(config), "--record"], stderr=out)
    peak = 0
    next_check = 0.0
    while True:
        peak = max(peak, _sample_rss(proc.pid))
        if proc.poll() is not None:
            raise SystemExit(f"shipper exited: {log_path.read_text()[-2000:]}")
        if time.monotonic() >= next_check:
            if done():
                break
            next_check = time.monotonic() + poll
        time.sleep(0.02)
    elapsed = time.monotonic() - started
    stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    peak = max(peak, _sample_rss(proc.pid))
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    log = log_path.read_text(errors="replace")
    return {
        "elapsed": elapsed,
        "cpu": cpu,
        "rss_mib": peak / 1024,
        "exit": code,
        "retries": log.count("Retry attempt"),
        "status": shipper_status(config),
    }


def report(label: str, events: int, size: int, result: dict[str, Any]) -> None:
    mib = size / 1024 / 1024
    counters = result["status"]["counters"]
    print(
        f"{label:<22} {events:>8} lines {mib:7.1f} MiB  wall {result['elapsed']:7.2f}s "
        f"{events / result['elapsed']:>9,.0f} lines/s {mib / result['elapsed']:6.1f} MiB/s  "
        f"cpu {result['cpu']:6.2f}s ({events / max(result['cpu'], 1e-9):>8,.0f} lines/cpu-s, "
        f"{mib / max(result['cpu'], 1e-9):5.1f} MiB/cpu-s)  peak RSS {result['rss_mib']:5.1f} MiB  "
        f"accepted {counters.get('accepted')} dup {counters.get('duplicates')} rejected {counters.get('rejected')} "
        f"retries {result['retries']} exit {result['exit']}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="1,000,000 small and 20,000 Sentry-sized events")
    parser.add_argument("--small", type=int, default=None, help="small lines (default 100,000)")
    parser.add_argument("--sentry", type=int, default=None, help="Sentry-sized events (default 2,000)")
    parser.add_argument("--server", action="store_true", help="also ship the same files to `stacklens serve`")
    parser.add_argument(
        "--default-quota", action="store_true", help="with --server: keep the default rate limits (429s)"
    )
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    sizes = {
        "small": args.small if args.small is not None else (1_000_000 if args.full else 100_000),
        "sentry": args.sentry if args.sentry is not None else (20_000 if args.full else 2_000),
    }
    work = Path(tempfile.mkdtemp(prefix="bench-shipper-"))
    service = Service(work, raise_quota=not args.default_quota) if args.server else None
    if service is not None:
        print(
            f"stacklens serve on {service.url}, data dir {work / 'server'}, quota {service.quota}", flush=True
        )
    api_key, app_key = (service.api_key, service.app_key) if service else (SINK_API_KEY, SINK_APP_KEY)
    sink = Sink()
    print(f"batchSize {args.batch_size}, gzip, flushInterval 200ms", flush=True)
    try:
        for kind, events in sizes.items():
            if not events:
                continue
            logs = work / kind / "logs"
            logs.mkdir(parents=True)
            size = write_logs(logs, kind, events, app_key)
            config = write_config(logs, sink.url, api_key, app_key, args.batch_size)
            before = sink.lines
            result = run_shipper(config, lambda b=before, n=events: sink.lines - b >= n, poll=0.0)
            report(f"{kind} -> counting sink", events, size, result)
            if service is None:
                continue
            server_logs = work / kind / "server-logs"
            server_logs.mkdir()
            day_file = next(logs.glob("stacklens-*.log"))  # the same bytes, with a tracker of their own
            day_file.rename(server_logs / day_file.name)
            config = write_config(server_logs, service.url, api_key, app_key, args.batch_size)
            result = run_shipper(config, acknowledged(config, events), poll=0.5)
            report(f"{kind} -> stacklens serve", events, size, result)
    finally:
        sink.close()
        if service is not None:
            service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
