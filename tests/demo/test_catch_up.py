"""The demo builds its marts once the backfill has landed: it waits for the driver's marker, prints the
driver's report (what landed per kind, loudly any day that lost traffic), then asks the
server (a real local HTTP server here, checking the token the way the pipelines endpoint does) to run every
mart, and says so; a start over kept data asks nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from demo import catch_up
from demo.backfill_report import BackfillReport
from demo.delivery import PAGE_LOADS, REQUESTS, VISITS
from shipper.status import STATUS_NAME, publish
from stacklens.server_link import TOKEN_HEADER, write_link
from stacklens.settings import Settings


class _Pipelines(BaseHTTPRequestHandler):
    calls: ClassVar[list[tuple[str, str | None, dict]]] = []
    token = ""
    answer: ClassVar[dict] = {"outcomes": [{"job": "marts_job", "success": True}]}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((self.path, self.headers.get(TOKEN_HEADER), body))
        ok = self.headers.get(TOKEN_HEADER) == type(self).token
        data = json.dumps(type(self).answer if ok else {"error": "Unauthorized"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Settings, ThreadingHTTPServer]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Pipelines)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    settings = Settings(data_dir=tmp_path / "data")
    _Pipelines.calls = []
    _Pipelines.token = write_link(settings, f"http://127.0.0.1:{httpd.server_address[1]}")
    yield settings, httpd
    httpd.shutdown()
    httpd.server_close()


def test_runs_every_mart_once_the_backfill_marker_appears(server, tmp_path: Path) -> None:
    settings, _ = server
    marker = tmp_path / "backfill.done"
    said: list[str] = []
    stop = threading.Event()
    result: list[bool] = []
    worker = threading.Thread(
        target=lambda: result.append(
            catch_up.build_when_backfilled(settings, marker, said.append, stop=stop, delivery_wait_s=0.2)
        )
    )
    worker.start()
    threading.Event().wait(1.5)
    assert _Pipelines.calls == []  # nothing before the driver says the backfill is done
    report = BackfillReport(
        ["2026-10-20", "2026-10-21"],
        "2026-10-22",
        ("shop@1.0.0", "shop@1.4.0"),
        41.0,
        {PAGE_LOADS: 96, VISITS: 140, REQUESTS: 180},
        {"2026-10-20": 96, "2026-10-21": 0, "2026-10-22": 0},
        {"2026-10-21": {PAGE_LOADS: 90}},
        {"2026-10-21": "ReadTimeout: timed out"},
    )
    report.write(marker.parent)  # the driver writes its report, then the marker
    marker.write_text("done\n")
    worker.join(timeout=10)
    assert result == [True]
    ((path, token, body),) = _Pipelines.calls
    assert path == "/api/pipelines/run" and token == _Pipelines.token and body == {}
    # What `stacklens up` prints: what landed per kind, then loudly the day that lost its page loads.
    assert said[0].startswith("  History: 2 days (2026-10-20 to 2026-10-21)")
    assert "96 page loads" in said[1] and "140 visits (180 shop requests" in said[2]
    warnings = [line for line in said if "WARNING" in line]
    assert any("2026-10-21: 90 page loads lost (ReadTimeout: timed out)" in w for w in warnings), said
    assert any("no page loads on 2026-10-21" in w for w in warnings), said
    assert "history is in the performance pages" in said[-1]


def test_builds_only_once_the_shipper_has_sent_the_whole_history(server, tmp_path: Path) -> None:
    """The shop's SDK writes its last history sessions up to a minute after the backfill and the shipper sends
    the log files for a minute or two more: the marts are built once its status acknowledges every byte."""
    settings, _ = server
    marker = tmp_path / "backfill.done"
    logs = tmp_path / "logs"
    logs.mkdir()
    history = logs / "stacklens-2026-10-22.log"
    history.write_bytes(b'{"type": "sessions"}\n' * 50)

    def shipped(offset: int) -> None:
        entry = {
            "path": history.name,
            "offset": offset,
            "size": history.stat().st_size,
        }  # what catch_up reads
        body: dict[str, Any] = {"files": {"f1": entry}, "stats": {}}
        publish(logs / STATUS_NAME, body)

    shipped(300)  # part of the file sent
    marker.write_text("done\n")
    result: list[bool] = []
    worker = threading.Thread(
        target=lambda: result.append(
            catch_up.build_when_backfilled(
                settings, marker, lambda _line: None, stop=threading.Event(), delivery_wait_s=0.0
            )
        )
    )
    worker.start()
    threading.Event().wait(catch_up.POLL_S * 2)
    assert _Pipelines.calls == [] and not catch_up.delivered(logs)  # not before the shipper has sent it all
    shipped(history.stat().st_size)
    worker.join(timeout=10)
    assert result == [True] and len(_Pipelines.calls) == 1 and catch_up.delivered(logs)
    assert catch_up.delivered(tmp_path / "no-logs")  # nothing to send: nothing to wait for


def test_a_kept_backfill_asks_nothing_and_a_failed_run_is_said(server, tmp_path: Path) -> None:
    settings, _ = server
    marker = tmp_path / "backfill.done"
    marker.write_text("done\n")
    assert catch_up.main(["--marker", str(marker)]) == 0  # an earlier start built the history already
    assert _Pipelines.calls == []
    _Pipelines.answer = {"outcomes": [{"job": "performance_job", "success": False, "error": "boom"}]}
    try:
        said: list[str] = []
        assert not catch_up.build_when_backfilled(
            settings, marker, said.append, stop=threading.Event(), delivery_wait_s=0.0
        )
        assert "left no report" in said[0]  # a marker without the driver's report is said too
        assert "failed in performance_job" in said[-1] and "schedules try again" in said[-1]
    finally:
        _Pipelines.answer = {"outcomes": [{"job": "marts_job", "success": True}]}


def test_stopping_the_demo_ends_the_wait(tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()
    settings = Settings(data_dir=tmp_path / "data")
    assert not catch_up.build_when_backfilled(settings, tmp_path / "never", print, stop=stop)
