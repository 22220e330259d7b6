"""--test, --status and the delivery loop's configuration and permission paths (real subprocesses)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from tests.shipper.harness import (
    SHIPPER,
    Workspace,
    append_lines,
    assert_exactly_once,
    new_ids,
    unprivileged,
    wait_until,
)
from tests.shipper.ingest_server import IngestServer


def cli(ws: Workspace, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*unprivileged(user), str(SHIPPER), "--config", str(ws.config), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_connection_test(ws: Workspace, server: IngestServer) -> None:
    ok = cli(ws, "--test")
    assert ok.returncode == 0 and "Connected to stacklens (organization: Acme)" in ok.stderr
    server.behaviour.api_key = "stacklens_api_" + "x" * 32
    denied = cli(ws, "--test")
    assert denied.returncode == 1 and "Authentication failed" in denied.stderr
    server.stop()
    refused = cli(ws, "--test")
    assert (
        refused.returncode == 1
        and "Connection refused" in refused.stderr
        and "Traceback" not in refused.stderr
    )


def test_status_reports_files_lag_and_counters(ws: Workspace) -> None:
    ids = new_ids(120)
    append_lines(ws.day(), ids)
    before = cli(ws, "--status")
    assert (
        before.returncode == 0
        and "no tracker.json yet" in before.stdout
        and "lag 25920 bytes / 120 lines" in before.stdout
    )
    proc = ws.start()
    wait_until(lambda: set(ids) <= ws.server.ids(), 20, "delivery")
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0
    append_lines(ws.day(), new_ids(3))
    after = cli(ws, "--status")
    assert "lag 648 bytes / 3 lines" in after.stdout and "Pending: 648 bytes, 3 lines" in after.stdout
    assert "Last successful batch: " in after.stdout and "events 120" in after.stdout


def test_auth_failure_waits_for_sighup(ws: Workspace, server: IngestServer) -> None:
    server.behaviour.api_key = "stacklens_api_" + "N" * 32
    ws.settings["parkDelay"] = "30s"
    ws.write_config()
    ids = new_ids(60)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: proc.output().count("Authentication failed") >= 2, 15, "Authentication failed")
    assert not server.ids()
    ws.settings["apiKey"] = server.behaviour.api_key
    ws.write_config()
    proc.signal(signal.SIGHUP)
    wait_until(lambda: set(ids) <= server.ids(), 15, "delivery after the fix")
    assert "configuration reloaded" in proc.output()
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0


def test_application_not_found_waits_for_sighup(ws: Workspace, server: IngestServer) -> None:
    ws.settings["appKey"] = "stacklens_app_" + "Q" * 24
    ws.settings["parkDelay"] = "30s"
    ws.write_config()
    ids = new_ids(10)
    append_lines(ws.day(), ids, app_key=None)  # the lines rely on the configured appKey
    proc = ws.start()
    wait_until(lambda: "Application Not Found" in proc.output(), 15, "Application Not Found")
    ws.settings["appKey"] = server.behaviour.known_app_keys[0]
    ws.write_config()
    proc.signal(signal.SIGHUP)
    wait_until(lambda: set(ids) <= server.ids(), 15, "delivery after the fix")
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0


def test_lines_naming_a_retired_app_key_are_passed_over(ws: Workspace, server: IngestServer) -> None:
    retired = "stacklens_app_" + "R" * 24  # e.g. regenerated in the dashboard after these were written
    old_ids, new_ids_ = new_ids(6), new_ids(6)
    append_lines(ws.day(), old_ids, app_key=retired)
    proc = ws.start()
    wait_until(lambda: "no longer knows" in proc.output(), 15, "the retired key reported")
    append_lines(ws.day(), new_ids_)
    wait_until(lambda: set(new_ids_) <= server.ids(), 15, "delivery of the lines written after")
    assert not set(old_ids) & server.ids()
    dead = [json.loads(line) for line in (ws.logs / "deadletter.ndjson").read_text().splitlines()]
    assert len(dead) == len(old_ids) and all("Application Not Found" in d["reason"] for d in dead)
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0


def test_missing_log_directory_is_waited_for(ws: Workspace) -> None:
    shutil.rmtree(ws.logs)
    proc = ws.start()
    wait_until(lambda: "Storage path not found" in proc.output(), 10, "Storage path not found")
    assert "create it" in proc.output() and proc.alive()
    ws.logs.mkdir()
    ids = new_ids(30)
    append_lines(ws.day(), ids)
    wait_until(lambda: set(ids) <= ws.server.ids(), 20, "delivery once the directory exists")
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0


def test_unwritable_tracker_directory_fails_at_start(ws: Workspace) -> None:
    os.chmod(ws.logs, 0o555)  # readable, not writable
    proc = ws.start(user="unprivileged")
    assert proc.wait(20) == 1
    out = proc.output()
    assert "Storage path not accessible" in out and "write access" in out and "Traceback" not in out
    assert out.count("Storage path not accessible") == 1, out  # one problem, one report


def test_permissions_removed_and_restored(ws: Workspace) -> None:
    ids = new_ids(80)
    append_lines(ws.day(), ids)
    os.chmod(ws.day(), 0o000)
    proc = ws.start(user="unprivileged")
    wait_until(lambda: "Storage path not accessible" in proc.output(), 10, "Storage path not accessible")
    time.sleep(2)
    reports = proc.output().count("Storage path not accessible")
    assert 1 <= reports <= 4, reports  # once per backoff, not a flood (poll interval is 50 ms)
    status = subprocess.run(
        [*unprivileged("yes"), str(SHIPPER), "--config", str(ws.config), "--status"],
        capture_output=True,
        text=True,
    )
    assert "Not accessible:" in status.stdout or "Storage path not accessible" in status.stdout
    os.chmod(ws.day(), 0o644)
    wait_until(lambda: set(ids) <= ws.server.ids(), 40, "delivery once access returns")
    proc.signal(signal.SIGTERM)
    assert proc.wait() == 0
    assert_exactly_once(ws.server, set(ids))


class _NotStackLens(http.server.BaseHTTPRequestHandler):
    """Any other web server: an HTML 404 for every path, or a proxy's 401 login page."""

    status = 404

    def do_GET(self) -> None:
        body = b"<html><body>Not Found</body></html>"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("status", [404, 401, 200])
def test_connection_test_names_a_server_that_is_not_stacklens(ws: Workspace, status: int) -> None:
    handler = type("Handler", (_NotStackLens,), {"status": status})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        ws.settings["baseUrl"] = f"http://127.0.0.1:{httpd.server_address[1]}"
        ws.write_config()
        result = cli(ws, "--test")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert result.returncode == 1
    assert "is not a StackLens server: GET /api/auth/verify answered" in result.stderr
    assert f"answered {status} (text/html); check baseUrl" in result.stderr
    assert "Authentication failed" not in result.stderr


def test_validate_reports_a_storage_path_the_shipper_cannot_use(ws: Workspace) -> None:
    assert cli(ws, "--validate", user="unprivileged").returncode == 0
    append_lines(ws.day(), new_ids(2))
    os.chmod(ws.day(), 0o000)
    unreadable = cli(ws, "--validate", user="unprivileged")
    assert unreadable.returncode == 1
    assert f"Storage path not accessible: cannot read {ws.day()}" in unreadable.stderr
    os.chmod(ws.day(), 0o644)
    os.chmod(ws.logs, 0o555)
    try:
        unwritable = cli(ws, "--validate", user="unprivileged")
    finally:
        os.chmod(ws.logs, 0o755)
    assert unwritable.returncode == 1
    assert f"Storage path not accessible: cannot write tracker.json in {ws.logs}" in unwritable.stderr
    assert "configuration is valid" not in unwritable.stdout


def test_status_exits_non_zero_when_a_log_file_is_unreadable(ws: Workspace) -> None:
    append_lines(ws.day(), new_ids(2))
    assert cli(ws, "--status", user="unprivileged").returncode == 0
    os.chmod(ws.day(), 0o000)
    status = cli(ws, "--status", user="unprivileged")
    assert status.returncode == 1
    assert "Storage path not accessible (cannot read)" in status.stdout
