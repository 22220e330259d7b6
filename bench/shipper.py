"""Shipper throughput: `stacklens-shipper --record` over N events, to a loopback sink that only counts
(the shipper's own cost) and, with ``--server``, to a real `stacklens serve` with its own data dir.

    .venv/bin/python bench/shipper.py                 # short run (small and Sentry-sized, sink only)
    .venv/bin/python bench/shipper.py --full          # full size
    .venv/bin/python bench/shipper.py --server        # also against `stacklens serve`

Prints lines/s, MiB/s, CPU seconds and peak RSS of the shipper process. Goals on one core: >= 50,000 lines/s
for small lines, >= 35 MiB/s for Sentry-sized events, gzip on, RSS <= 64 MiB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHIPPER = ROOT / ".venv" / "bin" / "stacklens-shipper"
API_KEY = "stacklens_api_" + "B" * 32
APP_KEY = "stacklens_app_" + "C" * 24


class Sink:
    """Counts lines and bytes; decompresses so the count is real, does nothing else."""

    def __init__(self) -> None:
        self.lines = 0
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._answer({"valid": True, "organization": "bench", "created_at": "2026-01-01T00:00:00Z"})

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
                n = body.count(b"\n")
                sink.lines += n
                self._answer(
                    {
                        "batch_id": self.headers["Idempotency-Key"],
                        "accepted": n,
                        "duplicates": 0,
                        "rejected": [],
                    }
                )

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def small_line(i: int) -> bytes:
    payload = {
        "event_id": f"{i:032x}",
        "level": "error",
        "message": "ValueError: bad input",
        "platform": "python",
        "timestamp": "2026-11-21T19:22:03.123Z",
        "tags": {"env": "prod"},
    }
    line = {"v": 1, "type": "event", "app_key": APP_KEY, "ts": "2026-11-21T19:22:03.123Z", "payload": payload}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def sentry_payloads(count: int) -> list[dict]:
    """Real Sentry error events (with local variables) captured by sentry-sdk itself."""
    import sentry_sdk
    from sentry_sdk.transport import Transport

    captured: list[dict] = []

    class Keep(Transport):
        def capture_envelope(self, envelope) -> None:  # type: ignore[no-untyped-def]
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
        rows = [{"id": n, "name": f"row-{n}", "tags": ["a", "b", "c"]} for n in range(12)]  # noqa: F841
        blob = "lorem ipsum " * 60  # noqa: F841
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


def write_logs(directory: Path, kind: str, events: int) -> int:
    path = directory / "stacklens-2026-11-21.log"
    with open(path, "wb") as fh:
        if kind == "small":
            for i in range(events):
                fh.write(small_line(i))
        else:
            templates = sentry_payloads(20)
            for i in range(events):
                payload = dict(templates[i % len(templates)], event_id=f"{i:032x}")
                line = {
                    "v": 1,
                    "type": "event",
                    "app_key": APP_KEY,
                    "ts": "2026-11-21T19:22:03.123Z",
                    "payload": payload,
                }
                fh.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")
    return path.stat().st_size


def run_shipper(directory: Path, base_url: str, events: int, batch_size: int, done) -> dict:  # type: ignore[no-untyped-def]
    config = directory.parent / "stacklens.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "stacklens": {
                    "apiKey": API_KEY,
                    "appKey": APP_KEY,
                    "baseUrl": base_url,
                    "storagePath": str(directory),
                    "allowInsecureHttp": True,
                    "batchSize": batch_size,
                    "flushInterval": "200ms",
                    "logLevel": "warn",
                    "compress": True,
                }
            }
        )
    )
    os.chmod(config, 0o600)
    started = time.monotonic()
    proc = subprocess.Popen([str(SHIPPER), "--config", str(config), "--record"], stderr=subprocess.PIPE)
    peak = 0
    while not done():
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]))
        if proc.poll() is not None:
            raise SystemExit(f"shipper exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        time.sleep(0.02)
    elapsed = time.monotonic() - started
    stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(stat[11]) + int(stat[12])) / ticks
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    return {"elapsed": elapsed, "cpu": cpu, "rss_mib": peak / 1024}


def report(label: str, events: int, size: int, result: dict) -> None:
    mib = size / 1024 / 1024
    print(
        f"{label:<34} {events:>8} lines {mib:8.1f} MiB  wall {result['elapsed']:6.2f}s  "
        f"{events / result['elapsed']:>9,.0f} lines/s  {mib / result['elapsed']:6.1f} MiB/s  "
        f"cpu {result['cpu']:5.2f}s ({events / max(result['cpu'], 1e-9):>9,.0f} lines/cpu-s, "
        f"{mib / max(result['cpu'], 1e-9):5.1f} MiB/cpu-s)  peak RSS {result['rss_mib']:.1f} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="1,000,000 small and 20,000 Sentry-sized events")
    parser.add_argument("--server", action="store_true", help="also ship to a real `stacklens serve`")
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    sizes = {"small": 1_000_000 if args.full else 100_000, "sentry": 20_000 if args.full else 2_000}
    sink = Sink()
    for kind, events in sizes.items():
        with tempfile.TemporaryDirectory(prefix="bench-shipper-") as tmp:
            logs = Path(tmp) / "logs"
            logs.mkdir()
            size = write_logs(logs, kind, events)
            start_lines = sink.lines
            result = run_shipper(
                logs, sink.url, events, args.batch_size, lambda s=start_lines, n=events: sink.lines - s >= n
            )
            report(f"{kind} -> counting sink (batch {args.batch_size})", events, size, result)
    if args.server:
        print("--server: needs `stacklens serve` with /api/ingest; see bench/RESULTS.md", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
