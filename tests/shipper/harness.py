"""Real files, a real shipper subprocess and a real local ingest server, for the shipper's tests."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.shipper.ingest_server import API_KEY, APP_KEY, IngestServer

ROOT = Path(__file__).resolve().parents[2]
# The checkout's own environment, else the one running the tests (a worktree without a .venv of its own;
# PYTHONPATH then points the shipper at the worktree's code).
SHIPPER = next(
    (p for p in (ROOT / ".venv" / "bin" / "stacklens-shipper",) if p.exists()),
    Path(sys.executable).parent / "stacklens-shipper",
)
RSS_CAP_MIB = 64  # the documented cap (docs/shipper.md)


def make_line(event_id: str, pad: int = 0, app_key: str | None = APP_KEY) -> bytes:
    """A log line; ``app_key=None`` leaves the line to the shipper's configured appKey (docs/architecture.md
    §11.2)."""
    payload = {"event_id": event_id, "level": "error", "message": "boom", "extra": {"pad": "x" * pad}}
    line: dict = {
        "v": 1,
        "type": "event",
        "app_key": app_key,
        "ts": "2026-11-21T19:22:03.123Z",
        "payload": payload,
    }
    if app_key is None:
        del line["app_key"]
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def new_ids(n: int) -> list[str]:
    return [uuid.uuid4().hex for _ in range(n)]


def append_lines(path: Path, ids: list[str], pad: int = 0, app_key: str | None = APP_KEY) -> None:
    """One write() per line on an O_APPEND file, like the SDK."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for event_id in ids:
            os.write(fd, make_line(event_id, pad, app_key))
    finally:
        os.close(fd)


def wait_until(condition: Callable[[], bool], timeout: float, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Workspace:
    """A log directory, a config file and helpers to run the shipper against a server."""

    def __init__(self, server: IngestServer, **overrides: object) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="shipper-"))
        os.chmod(self.root, 0o755)
        self.logs = self.root / "logs"
        self.logs.mkdir(mode=0o755)
        self.config = self.root / "stacklens.yaml"
        self.server = server
        self.settings: dict[str, object] = {
            "apiKey": API_KEY,
            "appKey": APP_KEY,
            "baseUrl": server.url,
            "storagePath": str(self.logs),
            "allowInsecureHttp": True,
            "timeout": "2s",
            "batchSize": 50,
            "flushInterval": "200ms",
            "pollInterval": "50ms",
            "retryBackoff": "50ms",
            "retryBackoffMax": "300ms",
            "parkDelay": "500ms",
            "shutdownGrace": "3s",
            "commitInterval": "200ms",
            "logLevel": "debug",
        }
        self.settings.update(overrides)
        self.write_config()
        self.procs: list[ShipperProcess] = []

    def write_config(self) -> None:
        import yaml

        self.config.write_text(yaml.safe_dump({"stacklens": self.settings}))
        os.chmod(self.config, 0o600)

    def day(self, date: str = "2026-11-21") -> Path:
        return self.logs / f"stacklens-{date}.log"

    def start(self, fault: str = "", user: str | None = None) -> ShipperProcess:
        proc = ShipperProcess(self, fault, user)
        self.procs.append(proc)
        return proc

    def cli(
        self, *args: str, fault: str = "", config: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One run of the shipper's command line (not the delivery loop), as the operator would run it."""
        env = dict(os.environ)
        env.pop("STACKLENS_SHIPPER_FAULT", None)
        if fault:
            env["STACKLENS_SHIPPER_FAULT"] = fault
        return subprocess.run(
            [str(SHIPPER), "--config", str(config or self.config), *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=self.root,
        )

    def dead_letters(self) -> list[dict]:
        path = self.logs / "deadletter.ndjson"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def tracker(self) -> dict:
        from shipper.tracker import decode

        return decode((self.logs / "tracker.json").read_bytes())

    def cleanup(self) -> None:
        for proc in self.procs:
            proc.kill()
        shutil.rmtree(self.root, ignore_errors=True)


def unprivileged(drop: str | None) -> list[str]:
    """Command prefix that runs without the capabilities that let root ignore file permissions.

    The tests run as root (whose interpreter lives under /root, out of reach of other users), so permission
    tests drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH instead of switching user.
    """
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if drop else []


class ShipperProcess:
    def __init__(self, ws: Workspace, fault: str = "", user: str | None = None) -> None:
        env = dict(os.environ)
        env.pop("STACKLENS_SHIPPER_FAULT", None)
        if fault:
            env["STACKLENS_SHIPPER_FAULT"] = fault
        self.log_path = ws.root / f"shipper-{len(ws.procs)}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in wait/kill
        self.proc = subprocess.Popen(
            [*unprivileged(user), str(SHIPPER), "--config", str(ws.config), "--record"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ws.root,
        )
        self.peak_rss_kib = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def sample_rss(self) -> int:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_rss_kib = max(self.peak_rss_kib, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        return self.peak_rss_kib

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, signum: int) -> None:
        if self.alive():
            self.proc.send_signal(signum)

    def wait(self, timeout: float = 20) -> int:
        rc = self.proc.wait(timeout)
        self._log.close()
        return rc

    def kill(self) -> None:
        if self.alive():
            self.sample_rss()
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self._log.close()


def delivered(server: IngestServer, expected: set[str]) -> Callable[[], bool]:
    return lambda: expected <= server.ids()


def assert_exactly_once(server: IngestServer, expected: set[str]) -> None:
    with server.lock:
        counts = dict(server.landed.counts)
    missing = expected - set(counts)
    extra = set(counts) - expected
    assert not missing, f"{len(missing)} events never landed"
    assert not extra, f"{len(extra)} unexpected events landed"
    assert all(v == 1 for v in counts.values())


def iter_ids(lines: Iterator[bytes]) -> set[str]:
    return {json.loads(line)["payload"]["event_id"] for line in lines}


# The fault tests' ending (tests/shipper/test_agent_faults.py, test_delivery.py): every line at the server,
# then a clean stop with each line once, the tracker intact and the RSS under the cap.
def settle(ws: Workspace, proc: ShipperProcess, expected: set[str], timeout: float = 20) -> None:
    def done() -> bool:
        proc.sample_rss()
        assert proc.alive(), proc.output()[-2000:]
        return expected <= ws.server.ids()

    try:
        wait_until(done, timeout, "every line at the server")
    except AssertionError:
        missing = expected - ws.server.ids()
        print(f"{len(missing)} of {len(expected)} missing; tracker: {ws.tracker()['files']}")
        print(proc.output()[-3000:])
        raise


def finish(ws: Workspace, proc: ShipperProcess, expected: set[str]) -> None:
    """SIGTERM, exit 0, exactly once, tracker intact, RSS under the cap."""
    proc.sample_rss()
    wait_until(lambda: "Starting shipper..." in proc.output(), 10, "the shipper to start")
    proc.signal(signal.SIGTERM)
    assert proc.wait(15) == 0, proc.output()[-2000:]
    assert_exactly_once(ws.server, expected)
    ws.tracker()
    assert proc.peak_rss_kib < RSS_CAP_MIB * 1024, proc.peak_rss_kib
