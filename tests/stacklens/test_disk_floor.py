"""The disk floor: how STACKLENS_DISK_FLOOR reads, and a server on a small real volume (tmpfs) that refuses
every entrance below its floor, says so in readiness, alerts the owners once, and lands a shipper's held lines
exactly once when space returns."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from email import message_from_bytes
from email.policy import default
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from stacklens import disk_floor
from stacklens.control.channels import create_channel
from stacklens.control.db import dispose_engines, session_scope
from stacklens.disk_floor import DiskFull, require_disk_room
from stacklens.self_watch.watcher import watching
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.shipper.harness import Workspace, wait_until
from tests.stacklens.alerts.helpers import MailSink, start_smtp

# The test's requests wait up to a minute (httpx's 5 s default timed out on a slow, loaded machine's first
# readiness check, which asks the warehouse).
_http = httpx.Client(timeout=60)

MIB = 1024**2


def test_a_refusal_names_no_path_nor_free_space_and_the_log_keeps_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real volume under a floor of 99.99 % of it: below. The sender's answer is path-free; the server's
    log holds the detail, once however many requests are refused."""
    settings = Settings(data_dir=tmp_path / "data", disk_floor="99.99%")
    monkeypatch.setattr(disk_floor, "_logged", {})
    with caplog.at_level("WARNING", logger="stacklens.disk_floor"):
        for _ in range(3):
            with pytest.raises(DiskFull) as refused:
                require_disk_room(settings)
            assert str(tmp_path) not in str(refused.value)
            assert not any(unit in str(refused.value) for unit in ("B ", "KiB", "MiB", "GiB", "TiB", "free"))
            assert "below its floor" in str(refused.value)
    [logged] = [record.getMessage() for record in caplog.records]
    assert str(tmp_path / "data") in logged and "free, below its floor" in logged


@pytest.fixture
def volume(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs: a real volume small enough to fill."""
    mount = tmp_path / "volume"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True)
    assert done.returncode == 0, f"mounting a tmpfs failed (the test runs as root): {done.stderr!r}"
    try:
        yield mount
    finally:
        dispose_engines()  # the control store's SQLite file lives there
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _free(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def _event_line(app_key: object, message: str) -> bytes:
    payload = {"event_id": uuid.uuid4().hex, "timestamp": time.time(), "message": message, "level": "error"}
    return json.dumps({"v": 1, "type": "event", "app_key": app_key, "payload": payload}).encode() + b"\n"


def _events(settings: Settings, org_id: object) -> dict[str, int]:
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT JSONExtractString(payload, 'message'), count() FROM events WHERE org_id = {org:UInt64} "
            "GROUP BY 1",
            parameters={"org": org_id},
        )
        .result_rows
    )
    return dict(rows)


def test_below_the_floor_every_entrance_waits_and_the_held_lines_land_once(
    settings: Settings, volume: Path, make_org
) -> None:
    small = settings.model_copy(update={"data_dir": volume / "data", "disk_floor": "2MiB"})
    small.data_dir.mkdir()
    sink = MailSink()
    smtp = start_smtp(sink)
    small = small.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
    override_settings(small)
    apply_migrations(small)
    org = make_org()
    with session_scope(small) as session:
        create_channel(
            session, int(org["org_id"]), small, type="email", name="owners", to=["owner@acme.test"]
        )
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    filler = volume / "filler"
    try:
        with serve(small) as url, watching(small, poll_seconds=0.2, clear_seconds=0.5):
            assert _http.get(f"{url}/api/health/ready").status_code == 200
            # Fill the volume to 1 MiB free: below the 2 MiB floor.
            filler.write_bytes(b"\0" * (_free(volume) - MIB))
            time.sleep(1.1)  # the entrances' reading of the volume is a second old at most

            refused = _http.post(
                f"{url}/api/ingest", content=_event_line(org["app_key"], "direct"), headers=auth
            )
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"] == "Service Unavailable"
            assert "below its floor" in refused.json()["detail"]
            # Told to a DSN holder: neither the data directory nor how much room is left (issue #62).
            assert str(volume) not in refused.text and "MiB" not in refused.text
            assert refused.headers["Retry-After"] == "10"
            pid, app_key = org["project_id"], str(org["app_key"])
            for path, kwargs in [
                (f"/api/{pid}/envelope/", {"params": {"sentry_key": app_key}, "content": b"{}\n"}),
                (f"/api/{pid}/store/", {"params": {"sentry_key": app_key}, "json": {"message": "x"}}),
                (f"/api/{pid}/otlp/v1/traces", {"headers": {"X-Stacklens-App-Key": app_key}, "json": {}}),
                (f"/api/{pid}/otlp/v1/logs", {"headers": {"X-Stacklens-App-Key": app_key}, "json": {}}),
            ]:
                answer = _http.post(f"{url}{path}", **kwargs)
                assert answer.status_code == 503, (path, answer.text)
                assert answer.headers["Retry-After"] == "10", path

            ready = _http.get(f"{url}/api/health/ready", headers=auth)
            assert ready.status_code == 503 and ready.headers["Retry-After"]
            assert ready.json()["status"] == "not_ready"
            (reason,) = ready.json()["reasons"]
            assert reason["check"] == "disk" and "below its floor of 2.0 MiB" in reason["detail"]
            assert _http.get(f"{url}/api/health/ready").json()["reasons"] == [{"check": "disk"}]

            # A shipper's lines wait in its file while the service refuses them.
            ws = Workspace(SimpleNamespace(url=url), apiKey=org["api_key"], appKey=app_key, timeout="30s")
            try:
                with open(ws.day(), "ab") as fh:
                    fh.write(b"".join(_event_line(app_key, f"held {n}") for n in range(20)))
                proc = ws.start()
                wait_until(lambda: "Retry attempt" in proc.output(), 30, "the shipper retrying")
                wait_until(lambda: len(sink.messages) >= 1, 30, "the owners' alert")
                time.sleep(1.5)  # the watch keeps looking: still one alert for the episode
                assert len(sink.messages) == 1
                alert = message_from_bytes(sink.messages[0].content, policy=default)
                assert (
                    alert["subject"].strip()
                    == "[Firing] StackLens service: Ingest refused: the disk is below its floor"
                )
                assert _events(small, org["org_id"]) == {}
                assert ws.dead_letters() == []

                filler.unlink()  # space returns
                wait_until(lambda: _http.get(f"{url}/api/health/ready").status_code == 200, 30, "ready again")
                wait_until(lambda: len(_events(small, org["org_id"])) == 20, 60, "the held lines landed")
                wait_until(lambda: len(sink.messages) == 2, 30, "the recovery note")
                recovered = message_from_bytes(sink.messages[1].content, policy=default)
                assert recovered["subject"].strip().startswith("[Resolved]")
                time.sleep(1.0)
                assert _events(small, org["org_id"]) == {f"held {n}": 1 for n in range(20)}
                assert ws.dead_letters() == []
                assert "Retry attempt" in proc.output() and "dead" not in proc.output().lower()
            finally:
                ws.cleanup()
    finally:
        smtp.stop()
        filler.unlink(missing_ok=True)
