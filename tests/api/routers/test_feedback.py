"""User feedback and attachments through a real server (docs/feedback.md): sentry-python's attachments and
its envelope transport carrying a user report and a feedback item, the crash-report dialog's endpoint, the
feedback list and its filters, the attachment list and download (always a download; another organization's:
404), the per-item limit and the project's byte quota counted in outcomes, refusals with their reason, the
new-feedback notice and the retention run. One server and one warehouse for the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.models import AlertNotification, EventAttachment, User
from stacklens.control.projects import create_project
from stacklens.issues.notifications import set_settings
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.conftest import make_settings

QUOTA = 96 * 1024
ITEM_LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[tuple[str, Settings]]:
    data = tmp_path_factory.mktemp("feedback") / "data"
    data.mkdir()
    store = make_settings(
        data,
        warehouse_url,
        attachment_quota_bytes=QUOTA,
        attachment_max_bytes=ITEM_LIMIT,
        smtp_url="smtp://127.0.0.1:9",
    )
    migrate_control_store(store)
    apply_migrations(store)
    with serve(store) as url:
        yield url, store


def new_org(store: Settings, name: str) -> dict[str, Any]:
    with session_scope(store) as session:
        email = f"owner-{uuid.uuid4().hex[:8]}@example.test"
        org, api_key = accounts.create_organization(
            session, f"{name} {uuid.uuid4().hex[:6]}", email, "password-123"
        )
        project, app_key = create_project(session, org.id, "Shop")
        return {
            "org_id": org.id,
            "org_slug": org.slug,
            "email": email,
            "api_key": api_key,
            "project": project.slug,
            "project_id": project.id,
            "app_key": app_key,
        }


def dsn_of(url: str, org: dict[str, Any]) -> str:
    return url.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"


SDK_SCRIPT = """
import json, sys, sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef
sentry_sdk.init(dsn=sys.argv[1], release="shop@1.2.3", environment="production")
with sentry_sdk.new_scope() as scope:
    scope.add_attachment(bytes=b"order 41: no customer\\n" * 10, filename="checkout.log", content_type="text/plain")
    try:
        raise KeyError("order 41 has no customer")
    except KeyError:
        event_id = sentry_sdk.capture_exception()
transport = sentry_sdk.get_client().transport
dump = Envelope(headers={"event_id": event_id})  # a minidump sent after its event, as native SDKs do
dump.add_item(Item(payload=PayloadRef(bytes=b"MDMP" + bytes(60)), type="attachment", filename="crash.dmp",
    headers={"attachment_type": "event.minidump"}))
transport.capture_envelope(dump)
report = Envelope(headers={"event_id": event_id})
report.add_item(Item(payload=PayloadRef(json={"event_id": event_id, "name": "Ada", "email": "ada@example.test",
    "comments": "The checkout button did nothing."}), type="user_report"))
transport.capture_envelope(report)
feedback_id = "f" * 32
widget = Envelope(headers={"event_id": feedback_id})
widget.add_item(Item(type="feedback", payload=PayloadRef(json={
    "type": "feedback", "event_id": feedback_id, "release": "shop@1.2.4", "environment": "production",
    "contexts": {"feedback": {"message": "Prices look wrong <b>here</b>", "name": "Grace",
        "contact_email": "grace@example.test", "url": "https://shop.example/cart",
        "associated_event_id": event_id, "replay_id": "a" * 32}}})))
transport.capture_envelope(widget)
sentry_sdk.flush(30)
print(event_id)
"""


def _get(url: str, org: dict[str, Any], path: str, **params: Any) -> httpx.Response:
    return httpx.get(
        url + path, params=params, headers={"Authorization": f"Bearer {org['api_key']}"}, timeout=60
    )


def _wait(check: Any, what: str, seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, what
            return value
        time.sleep(0.2)


def _outcomes(url: str, org: dict[str, Any], category: str) -> dict[tuple[str, str], int]:
    rows = _get(url, org, "/api/outcomes", category=category).json()["rows"]
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[(r["outcome"], r["reason"])] = counts.get((r["outcome"], r["reason"]), 0) + r["quantity"]
    return counts


def test_sentry_python_feedback_and_attachments(server, tmp_path: Path) -> None:
    url, store = server
    org, other = new_org(store, "Acme"), new_org(store, "Other")
    with session_scope(store) as session:  # the owner hears of new feedback at once
        owner = session.scalars(select(User).where(User.email == org["email"])).one()
        set_settings(session, org["org_id"], owner.id, {org["project"]: {"feedback": "immediate"}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
    done = subprocess.run(
        [sys.executable, "-c", SDK_SCRIPT, dsn_of(url, org)],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    event_id = done.stdout.split()[-1]

    rows = _wait(
        lambda: (
            len(r := _get(url, org, f"/api/projects/{org['project']}/feedback").json()["rows"]) == 2 and r
        ),
        "both feedback stored",
    )
    by_source = {r["source"]: r for r in rows}
    report, widget = by_source["user_report"], by_source["feedback"]
    assert (report["name"], report["email"], report["message"]) == (
        "Ada",
        "ada@example.test",
        "The checkout button did nothing.",
    )
    assert report["event_id"] == widget["event_id"] == event_id
    assert widget["replay_id"] == "a" * 32 and widget["release"] == "shop@1.2.4"
    assert widget["message"] == "Prices look wrong <b>here</b>"  # stored as written; pages escape it
    # The issue of the event, once it has landed.
    issue = _wait(
        lambda: _get(url, org, f"/api/projects/{org['project']}/feedback").json()["rows"][0]["issue_id"],
        "the feedback's issue resolved",
    )
    assert all(
        r["issue_id"] == issue
        for r in _get(url, org, f"/api/projects/{org['project']}/feedback").json()["rows"]
    )
    path = f"/api/projects/{org['project']}/feedback"
    assert len(_get(url, org, path, issue=issue).json()["rows"]) == 2
    assert _get(url, org, path, issue=str(int(issue) + 999)).json()["rows"] == []
    assert [r["source"] for r in _get(url, org, path, release="shop@1.2.4").json()["rows"]] == ["feedback"]
    assert [r["source"] for r in _get(url, org, path, **{"has-replay": "true"}).json()["rows"]] == [
        "feedback"
    ]
    assert [r["source"] for r in _get(url, org, path, **{"has-replay": "false"}).json()["rows"]] == [
        "user_report"
    ]
    bad = _get(url, org, path, **{"has-replay": "maybe"})
    assert bad.status_code == 400 and "has-replay" in bad.json()["detail"]
    assert _get(url, org, path, issue="abc").status_code == 400
    assert _get(url, other, path).status_code == 404  # another organization's project

    # Attachments: listed with size and type, downloaded as files only.
    listed = _get(url, org, f"/api/events/{event_id}/attachments").json()["rows"]
    files = {a["filename"]: a for a in listed}
    assert set(files) == {"checkout.log", "crash.dmp"}
    assert files["checkout.log"]["size"] == len(b"order 41: no customer\n") * 10
    assert files["checkout.log"]["content_type"] == "text/plain"
    assert files["crash.dmp"]["attachment_type"] == "event.minidump"
    got = _get(url, org, files["checkout.log"]["url"])
    assert got.status_code == 200 and got.content == b"order 41: no customer\n" * 10
    assert got.headers["content-disposition"].startswith('attachment; filename="checkout.log"')
    assert got.headers["content-type"] == "application/octet-stream"
    assert got.headers["x-content-type-options"] == "nosniff"
    dump = _get(url, org, files["crash.dmp"]["url"])
    assert dump.content.startswith(b"MDMP")
    assert (store.data_dir / "attachments" / str(org["org_id"])).is_dir()  # minidumps are files
    # Another organization: not found, not listed.
    assert _get(url, other, files["checkout.log"]["url"]).status_code == 404
    assert _get(url, other, f"/api/events/{event_id}/attachments").json() == {"rows": []}
    assert _get(url, org, f"/api/events/{event_id}/attachments/{uuid.uuid4().hex}").status_code == 404
    assert httpx.get(url + files["checkout.log"]["url"], timeout=30).status_code == 401  # members only

    assert _outcomes(url, org, "attachment")[("accepted", "")] == 2
    assert _outcomes(url, org, "feedback")[("accepted", "")] == 2
    with session_scope(store) as session:  # the new-feedback notices, in the outbox
        queued = session.scalars(
            select(AlertNotification).where(AlertNotification.org_id == org["org_id"])
        ).all()
        assert sum(1 for n in queued if n.kind == "feedback") == 2


def _post(
    url: str, org: dict[str, Any], items: list[tuple[dict[str, Any], bytes]], event_id: str
) -> httpx.Response:
    parts = [json.dumps({"event_id": event_id}).encode()]
    for headers, payload in items:
        parts += [json.dumps({**headers, "length": len(payload)}).encode(), payload]
    return httpx.post(
        f"{url}/api/{org['project_id']}/envelope/",
        content=b"\n".join(parts) + b"\n",
        headers={"X-Sentry-Auth": f"Sentry sentry_key={org['app_key']}"},
        timeout=60,
    )


def _event(event_id: str) -> tuple[dict[str, Any], bytes]:
    payload = {"event_id": event_id, "platform": "python", "level": "error", "message": "boom"}
    return {"type": "event"}, json.dumps(payload).encode()


def _feedback(message: str) -> tuple[dict[str, Any], bytes]:
    return {"type": "feedback"}, json.dumps({"contexts": {"feedback": {"message": message}}}).encode()


def test_bad_feedback_limits_quota_and_retention(server) -> None:
    url, store = server
    org = new_org(store, "Limits")
    no_message = _post(url, org, [_feedback("  ")], uuid.uuid4().hex)
    assert no_message.status_code == 400 and "no message" in no_message.json()["detail"]
    assert "no message" in no_message.headers["x-sentry-error"]
    too_long = _post(url, org, [_feedback("x" * 4097)], uuid.uuid4().hex)
    assert too_long.status_code == 413 and "4097 characters" in too_long.json()["detail"]
    report = {"type": "user_report"}, json.dumps({"event_id": uuid.uuid4().hex, "comments": ""}).encode()
    assert _post(url, org, [report], uuid.uuid4().hex).status_code == 400
    counts = _outcomes(url, org, "feedback")
    assert (
        counts[("invalid", "feedback_no_message")] == 2 and counts[("too_large", "feedback_too_large")] == 1
    )

    # Over the per-item limit: refused whole (as Relay), counted; within it, until the quota is spent.
    big = {"type": "attachment", "filename": "big.bin"}, b"x" * (ITEM_LIMIT + 1)
    over = _post(url, org, [_event(uuid.uuid4().hex), big], uuid.uuid4().hex)
    assert over.status_code == 413 and "per-attachment limit" in over.json()["detail"]
    first = uuid.uuid4().hex
    part = {"type": "attachment", "filename": "part.bin"}, b"y" * (QUOTA // 2 + 1)
    assert _post(url, org, [_event(first), part], first).status_code == 200
    second = uuid.uuid4().hex
    part2 = {"type": "attachment", "filename": "part2.bin"}, b"z" * (QUOTA // 2 + 1)
    assert _post(url, org, [_event(second), part2], second).status_code == 200  # the event is kept
    assert len(_get(url, org, f"/api/events/{first}/attachments").json()["rows"]) == 1
    assert _get(url, org, f"/api/events/{second}/attachments").json()["rows"] == []
    counts = _outcomes(url, org, "attachment")
    assert counts[("too_large", "attachment_too_large")] == 1
    assert counts[("rate_limited", "attachment_quota")] == 1 and counts[("accepted", "")] == 1

    # Retention: attachments (files and rows) and feedback leave with their events.
    from stacklens.operations.retention import apply_retention

    with session_scope(store) as session:
        kept = session.scalars(select(EventAttachment).where(EventAttachment.org_id == org["org_id"])).all()
        paths = [store.data_dir / "attachments" / str(org["org_id"]) / str(a.project_id) / a.id for a in kept]
    assert paths and all(p.is_file() for p in paths)
    _, log = apply_retention(store, now=datetime.now(UTC) + timedelta(days=store.retention_days + 1))
    assert log["detail"]["attachments_deleted"] >= 1
    assert not any(p.exists() for p in paths)
    assert _get(url, org, f"/api/events/{first}/attachments").json()["rows"] == []


def test_crash_report_dialog_endpoint(server) -> None:
    url, store = server
    org = new_org(store, "Dialog")
    event_id = uuid.uuid4().hex
    page = f"{url}/api/embed/error-page/"
    script = httpx.get(page, params={"dsn": dsn_of(url, org), "eventId": event_id}, timeout=30)
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert (
        script.headers["access-control-allow-origin"] == "*"
        and "__sentry_reportdialog_closed__" in script.text
    )
    wrong = dsn_of(url, org).replace(org["app_key"], "stacklens_app_unknown")
    assert httpx.get(page, params={"dsn": wrong, "eventId": event_id}, timeout=30).status_code == 403
    missing = httpx.get(page, params={"dsn": dsn_of(url, org)}, timeout=30)
    assert missing.status_code == 400 and "eventId" in missing.json()["detail"]
    params = {"dsn": dsn_of(url, org), "eventId": event_id}
    form = {"name": "Linus", "email": "linus@example.test", "comments": "It crashed when I paid."}
    sent = httpx.post(page, params=params, data=form, timeout=30)
    assert sent.status_code == 200 and sent.json() == {"ok": True}
    empty = httpx.post(page, params=params, data={**form, "comments": ""}, timeout=30)
    assert empty.status_code == 400 and "comments" in empty.json()["detail"]
    rows = _get(url, org, f"/api/projects/{org['project']}/feedback").json()["rows"]
    assert [(r["source"], r["name"], r["event_id"]) for r in rows] == [("dialog", "Linus", event_id)]
