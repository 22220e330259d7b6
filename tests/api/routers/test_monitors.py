"""The monitors API and Sentry's check-ins (docs/monitors.md): monitors created, edited and listed through the
API, by sentry-python's `monitor` and `capture_checkin` through a real server, and by the HTTP check-in with
curl; bad input answered 400 naming the field; other organizations see nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import sentry_sdk
from fastapi.testclient import TestClient
from sentry_sdk.crons import capture_checkin, monitor

from stacklens.settings import Settings

NODE_JOB = Path(__file__).resolve().parent.parent / "sentry_node"  # @sentry/node (npm) and its cron job
CRON = {
    "slug": "nightly-import",
    "name": "Nightly import",
    "schedule": {"type": "crontab", "value": "0 3 * * *"},
    "timezone": "Europe/Berlin",
    "checkin_margin": 5,
    "max_runtime": 60,
}


def _auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_monitors_are_created_read_changed_and_deleted(client: TestClient, org_factory) -> None:
    org = org_factory("Acme")
    base = f"/api/projects/{org['project']}/monitors"
    created = client.post(base, json=CRON, headers=_auth(org))
    assert created.status_code == 201, created.text
    body = created.json()
    for field in ("slug", "name", "kind", "schedule", "checkin_margin", "max_runtime", "timezone", "status"):
        assert field in body
    assert body["kind"] == "cron" and body["status"] == "new" and body["last_checkin"] is None
    assert body["schedule"] == {"type": "crontab", "value": "0 3 * * *"}
    # 03:00 in Berlin is 01:00 or 02:00 UTC
    assert body["next_expected_at"][11:16] in ("01:00", "02:00")
    assert body["schedule_in_words"] == "every day at 03:00 (Europe/Berlin)"
    assert client.post(base, json=CRON, headers=_auth(org)).status_code == 409

    listed = client.get(base, headers=_auth(org)).json()["rows"]
    assert [m["slug"] for m in listed] == ["nightly-import"]
    changed = client.put(
        f"{base}/nightly-import",
        json={"schedule": {"type": "interval", "value": 2, "unit": "hour"}, "status": "paused"},
        headers=_auth(org),
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["status"] == "paused" and changed.json()["next_expected_at"] is None
    assert changed.json()["schedule_in_words"] == "every 2 hours"
    resumed = client.put(f"{base}/nightly-import", json={"status": "active"}, headers=_auth(org)).json()
    assert resumed["status"] == "new" and resumed["next_expected_at"] is not None

    other = org_factory("Other")
    assert client.get(f"{base}/nightly-import", headers=_auth(other)).status_code == 404
    other_base = f"/api/projects/{other['project']}/monitors"
    assert client.get(other_base, headers=_auth(other)).json()["rows"] == []
    assert client.delete(f"{base}/nightly-import", headers=_auth(other)).status_code == 404

    assert client.delete(f"{base}/nightly-import", headers=_auth(org)).status_code == 204
    assert client.get(f"{base}/nightly-import", headers=_auth(org)).status_code == 404


BAD_SETTINGS: list[tuple[dict[str, Any], str]] = [
    ({"schedule": {"type": "crontab", "value": "61 * * * *"}}, "schedule"),
    ({"schedule": "61 * * * *"}, "schedule"),
    ({"schedule": {"type": "interval", "value": 0, "unit": "hour"}}, "schedule"),
    ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
    ({"checkin_margin": -1}, "checkin_margin"),
    ({"max_runtime": 0}, "max_runtime"),
    ({"failure_issue_threshold": "many"}, "failure_issue_threshold"),
    ({"kind": "uptime", "url": "http://127.0.0.1:9/"}, "url"),
    ({"kind": "uptime", "url": "https://example.com", "interval_seconds": 1}, "interval_seconds"),
    ({"kind": "weekly"}, "kind"),
    ({"slug": "Not A Slug"}, "slug"),
]


def test_bad_monitor_settings_are_refused_naming_the_field(client: TestClient, org_factory) -> None:
    org = org_factory()
    for change, field in BAD_SETTINGS:  # one server for every case: each is one request
        answer = client.post(
            f"/api/projects/{org['project']}/monitors", json={**CRON, **change}, headers=_auth(org)
        )
        assert answer.status_code == 400, (change, answer.text)
        assert answer.json()["detail"].startswith(f"{field}:"), (change, answer.json())
    bad_put = client.put(
        f"/api/projects/{org['project']}/monitors/nothing-here",
        json={"checkin_margin": -1},
        headers=_auth(org),
    )
    assert bad_put.status_code == 404
    assert _get(client, org)["rows"] == []


def _dsn(server: str, org: dict[str, Any]) -> str:
    return server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"


def _get(client: TestClient, org: dict[str, Any], path: str = "") -> Any:
    answer = client.get(f"/api/projects/{org['project']}/monitors{path}", headers=_auth(org))
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_sentry_python_check_ins_create_and_feed_the_monitor(
    dsn_server: str, stores: Settings, org_factory, client: TestClient
) -> None:
    org = org_factory()
    sentry_sdk.init(dsn=_dsn(dsn_server, org))
    config = {
        "schedule": {"type": "crontab", "value": "*/10 * * * *"},
        "checkin_margin": 2,
        "max_runtime": 3,
        "timezone": "UTC",
        "failure_issue_threshold": 1,
        "recovery_threshold": 1,
    }

    @monitor(monitor_slug="order-mail", monitor_config=config)
    def job() -> None:
        pass

    job()
    # a check-in of an unknown monitor without monitor_config: created in state `new`
    unconfigured = capture_checkin(monitor_slug="adhoc-report", status="ok")
    sentry_sdk.flush()

    mail = _get(client, org, "/order-mail")
    assert mail["schedule"] == {"type": "crontab", "value": "*/10 * * * *"}
    assert (mail["checkin_margin"], mail["max_runtime"], mail["status"]) == (2, 3, "ok")
    checkins = _get(client, org, "/order-mail/checkins")["rows"]
    assert len(checkins) == 1 and checkins[0]["status"] == "ok" and checkins[0]["duration_ms"] is not None
    adhoc = _get(client, org, "/adhoc-report")
    assert adhoc["status"] == "new" and adhoc["schedule"] is None
    assert _get(client, org, "/adhoc-report/checkins")["rows"][0]["id"] == unconfigured

    failed = capture_checkin(monitor_slug="order-mail", status="error", duration=1.5)
    sentry_sdk.flush()
    assert _get(client, org, "/order-mail")["status"] == "error"
    rows = _get(client, org, "/order-mail/checkins")
    assert rows["rows"][0]["id"] == failed and rows["rows"][0]["duration_ms"] == 1500
    assert [i["status"] for i in rows["incidents"]] == ["error"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_http_check_in_with_curl(
    dsn_server: str, stores: Settings, org_factory, client: TestClient
) -> None:
    org = org_factory()
    url = f"{dsn_server}/api/{org['project_id']}/cron/backup/{org['app_key']}/"

    def curl(target: str, *extra: str) -> tuple[int, str]:
        done = subprocess.run(
            ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", *extra, target],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        body, _, code = done.stdout.rpartition("\n")
        return int(code), body

    wrong = url.replace(org["app_key"], "stacklens_app_" + "x" * 32)
    assert curl(wrong + "?status=ok")[0] == 403
    assert _get(client, org)["rows"] == []  # a wrong key writes nothing

    code, body = curl(url + "?status=in_progress")
    assert code == 202, body
    assert _get(client, org, "/backup")["status"] == "new"
    code, body = curl(
        url,
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        '{"status": "ok", "monitor_config": {"schedule": {"type": "interval", "value": 1, "unit": "day"}}}',
    )
    assert code == 202, body
    backup = _get(client, org, "/backup")
    assert backup["status"] == "ok" and backup["schedule"] == {"type": "interval", "value": 1, "unit": "day"}

    code, body = curl(url + "?status=done")
    assert code == 400 and "status" in body
    code, body = curl(
        url, "-X", "POST", "-d", '{"status": "ok", "monitor_config": {"schedule": "61 * * * *"}}'
    )
    assert code == 400 and '"schedule:' in body
    other = org_factory("Other")
    stolen = f"{dsn_server}/api/{org['project_id']}/cron/backup/{other['app_key']}/?status=error"
    assert curl(stolen)[0] == 403
    assert _get(client, org, "/backup")["status"] == "ok"


def test_monitor_alert_rules_and_the_uptime_metric(client: TestClient, org_factory) -> None:
    org = org_factory()
    body = {"name": "jobs", "type": "monitor", "project": org["project"], "monitors": ["nightly-import"]}
    made = client.post(
        "/api/alerts/rules", json={**body, "statuses": ["missed", "timeout"]}, headers=_auth(org)
    )
    assert made.status_code == 201, made.text
    rule = client.get(f"/api/alerts/rules/{made.json()['id']}", headers=_auth(org)).json()
    assert (rule["type"], rule["monitors"], rule["statuses"]) == (
        "monitor",
        ["nightly-import"],
        ["missed", "timeout"],
    )
    every = client.post("/api/alerts/rules", json={**body, "monitors": "all"}, headers=_auth(org))
    assert every.status_code == 201 and every.json()["monitors"] == [] and every.json()["statuses"] == []
    for bad, field in (({"statuses": ["late"]}, "statuses"), ({"monitors": ["Not A Slug"]}, "monitors")):
        answer = client.post("/api/alerts/rules", json={**body, **bad}, headers=_auth(org))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(f"{field}:"), answer.text
    catalog = {m["key"]: m for m in client.get("/api/metrics", headers=_auth(org)).json()}
    assert catalog["uptime_pct"]["unit"] == "percent"


def test_http_check_ins_keep_the_front_doors_quota(
    dsn_server: str, stores: Settings, org_factory, client: TestClient
) -> None:
    org = org_factory()
    answer = client.put(
        f"/api/projects/{org['project']}/quota", json={"events_per_minute": 3}, headers=_auth(org)
    )
    assert answer.status_code == 200, answer.text
    url = f"{dsn_server}/api/{org['project_id']}/cron/quota-job/{org['app_key']}/"
    bad = httpx.get(url + "?status=done", timeout=60)
    assert bad.status_code == 400  # refused before it spent the quota
    codes = [httpx.get(url + "?status=ok", timeout=60) for _ in range(4)]
    assert [c.status_code for c in codes] == [202, 202, 202, 429], [c.text for c in codes]
    assert int(codes[-1].headers["Retry-After"]) >= 1
    assert len(_get(client, org, "/quota-job/checkins")["rows"]) == 3  # the refused one wrote nothing
    # A check-in inside an envelope spends the same quota: an envelope of check-ins alone is refused as
    # Relay refuses it, naming the category, and writes nothing.
    item = json.dumps({"check_in_id": uuid.uuid4().hex, "monitor_slug": "quota-job", "status": "ok"})
    body = "\n".join(["{}", json.dumps({"type": "check_in", "length": len(item)}), item]).encode()
    sent = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=body,
        timeout=60,
    )
    assert sent.status_code == 429, sent.text
    assert "project_quota" in sent.headers["X-Sentry-Rate-Limits"]  # the project's quota, every category
    assert len(_get(client, org, "/quota-job/checkins")["rows"]) == 3


def test_javascript_with_monitor_checks_in(
    dsn_server: str, stores: Settings, org_factory, client: TestClient
) -> None:
    """@sentry/node's Sentry.withMonitor from the npm registry: the job's config creates the monitor, an ok
    run and a failed run are recorded with their durations."""
    org = org_factory()
    if not (NODE_JOB / "node_modules" / "@sentry" / "node").is_dir():
        npm = ["npm", "ci", "--no-audit", "--no-fund"]
        subprocess.run(npm, cwd=NODE_JOB, check=True, capture_output=True, timeout=300)
    env = {**os.environ, "SENTRY_DSN": _dsn(dsn_server, org)}
    done = subprocess.run(
        ["node", "job.js"], cwd=NODE_JOB, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = _get(client, org, "/node-report")
    assert report["schedule"] == {"type": "crontab", "value": "*/5 * * * *"}
    assert (report["checkin_margin"], report["max_runtime"], report["timezone"]) == (2, 4, "Europe/Berlin")
    assert report["status"] == "error"
    rows = _get(client, org, "/node-report/checkins")
    assert sorted(r["status"] for r in rows["rows"]) == ["error", "ok"]
    assert all(r["duration_ms"] is not None for r in rows["rows"])
    assert [i["status"] for i in rows["incidents"]] == ["error"]
