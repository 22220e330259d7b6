"""The embedded runner's idle passes (issue 63, an idle server within 300 MiB): on an empty warehouse with no
standing work a pass is skipped without loading Dagster and, once the warehouse has answered, without asking
it again; rows that land, a run's watermarks catching up and standing work in the control store (a monitor)
each change the answer, and a configured uptime monitor is still probed on its minute."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines import warehouse_ops as ops
from pipelines.idle import IdleCheck
from pipelines.job_inputs import data_driven_watermarks
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.monitors.store import create_monitor
from stacklens.outbound import AllowList
from stacklens.settings import Settings
from stacklens.warehouse import engine
from stacklens.warehouse.calls import warehouse_calls
from stacklens.warehouse.client import get_warehouse
from tests.fresh_server import run_fresh
from tests.pipelines.pipeline_seed import seed_errors


def test_the_check_asks_the_warehouse_only_after_a_call_and_follows_landed_rows(
    stores: Settings, org_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[bool] = []
    monkeypatch.setattr(engine, "release_library_pages", lambda: released.append(True) or True)
    check = IdleCheck(stores)
    assert check.has_work() is False  # empty warehouse, nothing standing
    assert released == [True]  # the library pages its reads mapped are given back at once
    calls = warehouse_calls()
    assert check.has_work() is False
    assert warehouse_calls() == calls  # nothing called the warehouse since: it was not asked again
    assert released == [True]

    client = get_warehouse(stores)
    seed_errors(client, issues=2, per_issue=2, days=[datetime.now(UTC)], seed=3)
    assert check.has_work() is True  # rows landed that no job has read
    assert check.has_work() is True  # and still, until a run reads them

    newest = ops.max_received(client)
    assert newest is not None
    for name in data_driven_watermarks():  # what the jobs' successful runs do
        ops.set_watermark(client, name, newest)
    assert check.has_work() is False
    calls = warehouse_calls()
    assert check.has_work() is False and warehouse_calls() == calls

    org = org_factory()
    with session_scope(stores) as session:  # standing work: a job must run whatever lands
        project = session.get(Project, org["project_id"])
        assert project is not None
        body = {"slug": "nightly", "kind": "cron", "schedule": "0 3 * * *"}
        create_monitor(session, project, body, AllowList.parse(""))
    assert check.has_work() is True


def test_a_server_of_another_warehouse_always_has_work(settings: Settings) -> None:
    remote = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:1/"})
    assert IdleCheck(remote).has_work() is True  # other processes land rows there: nothing to infer


SCRIPT = """
import json, sys, threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from stacklens.settings import get_settings
from stacklens.cli.serve import migrate_all
from stacklens.cli.app import build_app
from pipelines.runner import EmbeddedRunner
from stacklens.warehouse.calls import warehouse_calls
from stacklens.warehouse.client import get_warehouse

settings = get_settings()
migrate_all(settings)
app = build_app(settings)
runner = EmbeddedRunner(settings)
minute = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
outcomes = runner.catch_up() + runner.run_due(minute)
calls = warehouse_calls()
for step in range(1, 6):  # the rest of the catch-up and five minutes of ticks
    outcomes += runner.catch_up() + runner.run_due(minute + timedelta(minutes=step))
seen = {"idle": [len(outcomes), "dagster" in sys.modules, warehouse_calls() - calls]}

class Site(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

site = ThreadingHTTPServer(("127.0.0.1", 0), Site)
threading.Thread(target=site.serve_forever, daemon=True).start()
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.projects import create_project
from stacklens.monitors.store import create_monitor
from stacklens.outbound import AllowList
with session_scope(settings) as session:
    org, _ = accounts.create_organization(session, "Acme", "owner@example.test", "correct horse battery staple")
    project, _ = create_project(session, org.id, "Web")
    body = {"slug": "shop", "kind": "uptime", "url": f"http://127.0.0.1:{site.server_address[1]}/",
            "interval_seconds": 60}
    create_monitor(session, project, body, AllowList.parse("127.0.0.1"))
ran = runner.run_due(minute + timedelta(minutes=6))
probes = get_warehouse(settings).query("SELECT status, http_code FROM monitor_checks").result_rows
seen["monitor"] = [[o.job for o in ran if o.success], "dagster" in sys.modules, [list(p) for p in probes]]
runner.stop()
site.shutdown()
print(json.dumps(seen))
"""


def test_an_idle_server_loads_no_dagster_and_a_configured_uptime_monitor_still_runs(tmp_path: Path) -> None:
    """A fresh interpreter does what `stacklens serve` does on an empty data directory, then runs the
    catch-up passes and six minutes of ticks: no run, Dagster never imported, and after the first pass not
    one warehouse call (the engine's library stays unmapped). An uptime monitor created then is probed at the
    next minute, by the monitors job."""
    seen = run_fresh(SCRIPT, tmp_path, outbound_allow="127.0.0.1")

    assert seen["idle"] == [0, False, 0], seen
    jobs, loaded, probes = seen["monitor"]
    assert "monitors_job" in jobs and loaded, seen
    assert probes == [["ok", 200]], seen
