"""Where bench/shipper.py ships to: a loopback sink that only counts, and a real `stacklens serve`.

The service runs as a subprocess with its own data directory, a free loopback port and its own
``STACKLENS_SECRET_KEY``; the organization and project are made with `stacklens admin … --json` while it runs
(those commands only touch the control store, never the warehouse the server owns).
"""

from __future__ import annotations

import gzip
import json
import os
import secrets
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"


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

            def do_GET(self) -> None:
                self._answer({"valid": True, "organization": "bench", "created_at": "2026-01-01T00:00:00Z"})

            def do_POST(self) -> None:
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

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """`stacklens serve` in a subprocess, with an organization and a project of its own."""

    def __init__(self, work: Path, raise_quota: bool = True, schedules: bool = False) -> None:
        self.work = work
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
        env.update(
            STACKLENS_DATA_DIR=str(work / "server"),
            STACKLENS_SECRET_KEY=secrets.token_urlsafe(48),
            # Delivery is what is measured: the marts' schedules would share the two cores with it (a burst
            # run keeps them on, as production does).
            STACKLENS_RUN_SCHEDULES="true" if schedules else "false",
            PYTHONUNBUFFERED="1",
        )
        self.env = env
        self.log_path = work / "server.log"
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(
                [str(BIN / "stacklens"), "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                env=env,
                cwd=work,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self._wait_healthy()
        # Made while the server runs: the admin commands share only the control store with it.
        password = secrets.token_urlsafe(16)
        org = self.admin(
            "create-org", "--name", "Bench", "--owner-email", "bench@example.com", "--password", password
        )
        project = self.admin("create-project", "--org", "Bench", "--name", "Shop")
        self.api_key: str = org["api_key"]
        self.app_key: str = project["app_key"]
        self.project_slug: str = project["slug"]
        self.quota = "default (60,000 events/min, 50 requests/s)"
        if raise_quota:
            # The default quota would make this a measure of the rate limit, not of delivery.
            quota = self.admin(
                "set-quota",
                "--org",
                "Bench",
                "--events-per-minute",
                "100000000",
                "--requests-per-second",
                "100000",
            )
            self.quota = (
                f"{quota['events_per_minute']:,} events/min, {quota['requests_per_second']:,} requests/s"
            )

    def _wait_healthy(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"stacklens serve exited:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.close()
        raise SystemExit(f"stacklens serve did not answer within {timeout:.0f} s:\n{self.tail()}")

    def admin(self, *args: str) -> dict[str, Any]:
        result = subprocess.run(
            [str(BIN / "stacklens"), "admin", *args, "--json"],
            env=self.env,
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise SystemExit(f"stacklens admin {args[0]} failed: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
