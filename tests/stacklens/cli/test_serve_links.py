"""Every absolute link a real `stacklens serve` writes points at the address it listens on — a port other
than the default 8000 — or at STACKLENS_PUBLIC_URL when set: a channel's test message, a new-issue alert sent
by the pipelines running inside the server, a share link, and the DSN in its three places (the project's
settings page, GET /api/projects and the performance pages' empty state)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from stacklens.settings import Settings
from tests.api.sentry_live import envelope, event_item
from tests.conftest import TEST_SECRET
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.ingest.sdk_events import capture

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
PASSWORD = "long-password-1"
PUBLIC = "https://lens.example.test/stacklens/"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fail_checkout() -> None:
    raise ValueError("card declined")


def fail_refund() -> None:
    raise KeyError("refund-7")


@dataclass
class Stack:
    data_dir: Path
    org_slug: str
    email: str
    api_key: str
    project: str
    project_id: int
    app_key: str
    receiver: Receiver
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    channel_id: int = 0
    seen: set[str] = field(default_factory=set)

    @property
    def url(self) -> str:
        """Where the test reaches the server (always the listening address)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, public_url: str | None = None) -> None:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
        env.update(
            {
                "PYTHONPATH": str(ROOT),
                "STACKLENS_DATA_DIR": str(self.data_dir),
                "STACKLENS_SECRET_KEY": TEST_SECRET,
                "STACKLENS_RUN_SCHEDULES": "false",
                "STACKLENS_INGEST_WORKERS": "0",
                "STACKLENS_OUTBOUND_ALLOW": "127.0.0.1",
            }
        )
        if public_url:
            env["STACKLENS_PUBLIC_URL"] = public_url
        log = (self.data_dir / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stacklens.cli.main", "serve", "--port", str(self.port)],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, (self.data_dir / "serve.log").read_text()
            try:
                if httpx.get(self.url + "/api/health", timeout=2).status_code < 500:
                    return
            except httpx.TransportError:
                time.sleep(0.5)
        pytest.fail("server did not start: " + (self.data_dir / "serve.log").read_text())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)
        self.proc = None

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        return httpx.request(method, self.url + path, headers=headers, timeout=60, **kwargs)

    def run_pipelines(self, *select: str) -> None:
        token = (self.data_dir / "pipelines_token").read_text()
        answer = httpx.post(
            self.url + "/api/pipelines/run",
            json={"select": list(select)},
            headers={"X-StackLens-Pipelines-Token": json.loads(token)["token"]},
            timeout=600,
        )
        assert answer.status_code == 200, answer.text
        assert all(o["success"] for o in answer.json()["outcomes"]), answer.text

    def new_bodies(self) -> list[dict[str, Any]]:
        """The webhook bodies received since the last call."""
        bodies = [r.json() for r in self.receiver.received if r.headers["webhook-id"] not in self.seen]
        self.seen |= {r.headers["webhook-id"] for r in self.receiver.received}
        return bodies


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """An organization with one project in a fresh data dir (made here, before any server starts)."""
    from stacklens.control import accounts
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
    from stacklens.control.projects import create_project

    data_dir = tmp_path_factory.mktemp("links") / "data"
    settings = Settings(
        data_dir=data_dir, secret_key=TEST_SECRET, database_url=f"sqlite:///{data_dir / 'control.db'}"
    )
    data_dir.mkdir(parents=True)
    migrate_control_store(settings)
    email = "owner@links.test"
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, "Links", email, PASSWORD)
        project, app_key = create_project(session, org.id, "Shop")
        made = (org.slug, api_key, project.slug, project.id, app_key)
    dispose_engines()
    receiver = Receiver().start()
    current = Stack(data_dir, made[0], email, made[1], made[2], made[3], made[4], receiver)
    try:
        yield current
    finally:
        current.stop()
        receiver.stop()


def sign_in(stack: Stack) -> httpx.Client:
    client = httpx.Client(base_url=stack.url, timeout=60)
    form = client.get("/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert token
    answer = client.post("/login", data={"email": stack.email, "password": PASSWORD, "csrf_token": token[1]})
    assert answer.status_code in (200, 303), answer.text
    return client


def csrf(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "the page has no form"
    return found[1]


def dsn_in_three_places(stack: Stack, client: httpx.Client, base: str) -> str:
    """The DSN of GET /api/projects, and the same string (its key masked until Reveal) on the settings page
    and in the performance empty state."""
    parts = urlsplit(base)
    expected = f"{parts.scheme}://{stack.app_key}@{parts.netloc}{parts.path}/{stack.project_id}"
    listed = stack.api("GET", "/api/projects").json()["projects"][0]["app_keys"][0]
    assert listed["dsn"] == expected
    masked = expected.replace(stack.app_key, listed["masked"])
    settings_path = f"/orgs/{stack.org_slug}/projects/{stack.project}/settings"
    page = client.get(settings_path).text
    assert f'<code class="dsn-value">{masked}</code>' in page
    revealed = client.post(
        settings_path + "/app-keys", data={"action": "reveal", "service": "", "csrf_token": csrf(page)}
    ).text
    assert f'<code class="dsn-value">{expected}</code>' in revealed
    empty = client.get(f"/orgs/{stack.org_slug}/projects/{stack.project}/performance").text
    assert 'id="perf-empty"' in empty and f'dsn: "{masked}"' in empty
    assert "stacklens.invalid" not in empty
    return expected


def check_links(stack: Stack, base: str, fail: Any) -> None:
    client = sign_in(stack)
    dsn = dsn_in_three_places(stack, client, base)

    # A test message to a webhook channel links to the channels page on ``base``.
    if not stack.channel_id:
        created = stack.api(
            "POST", "/api/alerts/channels", json={"type": "webhook", "name": "ops", "url": stack.receiver.url}
        )
        assert created.status_code == 201, created.text
        stack.channel_id = created.json()["id"]
        stack.receiver.secret = created.json()["secret"]
        rule = {
            "name": "New errors",
            "type": "new_issue",
            "project": stack.project,
            "channels": [stack.channel_id],
        }
        assert stack.api("POST", "/api/alerts/rules", json=rule).status_code == 201
    sent = stack.api("POST", f"/api/alerts/channels/{stack.channel_id}/test").json()
    assert sent["outcome"] == "delivered", sent
    (test,) = stack.new_bodies()
    assert (
        test["type"] == "alert.test"
        and test["data"]["link"] == f"{base}/orgs/{stack.org_slug}/settings/channels"
    )

    # An error sent to the DSN (a sentry-python event whose frames carry no in_app flag) becomes a new
    # issue; the alert the pipelines in the server process send links to it on ``base``.
    payload = capture(fail, project_root="/nonexistent")
    key, project_id = dsn.split("//", 1)[1].split("@", 1)[0], dsn.rsplit("/", 1)[1]
    answer = httpx.post(
        f"{stack.url}/api/{project_id}/envelope/",
        params={"sentry_key": key},
        content=envelope([event_item(payload)]),
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    stack.run_pipelines("issues", "alert_evaluations")
    (alert,) = [b["data"] for b in stack.new_bodies() if b["data"].get("rule_type") == "new_issue"]
    issue_id = alert["issue_id"]
    issue_path = f"/orgs/{stack.org_slug}/projects/{stack.project}/issues/{issue_id}"
    assert alert["link"] == base + issue_path, alert

    # The issue names its culprit (the top in-app frame, inferred) first in its header; a share link of it
    # is on ``base``.
    page = client.get(issue_path).text
    assert re.search(
        rf'<p class="muted" id="issue-meta"><span class="culprit"[^>]*>{fail.__name__} in [\w.]+</span> · ',
        page,
    ), page[:3000]
    shared = client.post(
        issue_path + "/share", data={"scope": "issue", "expires": "7", "csrf_token": csrf(page)}
    )
    assert shared.status_code == 200, shared.text
    url = re.search(r'id="share-url" value="([^"]+)"', shared.text)
    assert url and url[1].startswith(f"{base}/share/"), shared.text[:2000]
    assert httpx.get(stack.url + url[1][len(base) :], timeout=30).status_code == 200
    client.close()


def test_links_carry_the_address_served_then_the_public_url(stack: Stack) -> None:
    stack.start()
    assert stack.port != 8000
    check_links(stack, f"http://127.0.0.1:{stack.port}", fail_checkout)
    stack.stop()

    stack.start(PUBLIC)
    check_links(stack, PUBLIC.rstrip("/"), fail_refund)
    stack.stop()
    log = (stack.data_dir / "serve.log").read_text()
    assert f"StackLens is serving on {PUBLIC.rstrip('/')}" in log
