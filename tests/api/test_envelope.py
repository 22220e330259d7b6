"""The Sentry protocol endpoints through a real uvicorn server, the real control store and warehouse, and
the real sentry-python SDK with its default HTTP transport pointed at a StackLens DSN."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotli
import httpx
import pytest
import uvicorn
import zstandard

from api.app import create_app
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.test_ingest import error_payload, transaction_payload
from tests.stacklens_sdk.conftest import sentry_browser_bundle  # noqa: F401 - the esbuild bundle of @sentry/browser

# The test's warehouse client, for the helpers below that read what landed (set per test by `server`).
_warehouse: list[Any] = []


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    apply_migrations(settings)  # every table: the issue list reads the dashboards' daily tables
    _warehouse[:] = [get_warehouse(settings)]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    instance = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=15)


def envelope(items: list[tuple[dict[str, Any], bytes]], headers: dict[str, Any] | None = None) -> bytes:
    parts = [json.dumps(headers or {}).encode()]
    for item_headers, payload in items:
        parts += [json.dumps({**item_headers, "length": len(payload)}).encode(), payload]
    return b"\n".join(parts) + b"\n"


def event_item(payload: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    return {"type": "event"}, json.dumps(payload).encode()


def stored(org_id: int, event_id: str, table: str = "events") -> int:
    return int(
        _warehouse[0]
        .query(
            f"SELECT count() FROM {table} FINAL WHERE org_id = {{org:UInt64}} AND event_id = {{id:String}}",  # noqa: S608
            parameters={"org": org_id, "id": event_id},
        )
        .result_rows[0][0]
    )


def fresh_event() -> dict[str, Any]:
    return {**error_payload(3), "event_id": uuid.uuid4().hex}


def test_every_auth_form_and_the_refusals(server: str, make_org) -> None:
    org = make_org()
    other = make_org("Other Org")
    url = f"{server}/api/{org['project_id']}/envelope/"
    header_auth = {
        "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}, sentry_client=test/1"
    }
    events = [fresh_event() for _ in range(3)]

    by_header = httpx.post(url, content=envelope([event_item(events[0])]), headers=header_auth)
    by_query = httpx.post(
        url, params={"sentry_key": org["app_key"]}, content=envelope([event_item(events[1])])
    )
    dsn = f"http://{org['app_key']}@127.0.0.1/{org['project_id']}"
    by_dsn = httpx.post(
        url, content=envelope([event_item(events[2])], {"dsn": dsn, "event_id": events[2]["event_id"]})
    )
    for answer, event in zip((by_header, by_query, by_dsn), events, strict=True):
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"id": event["event_id"]}
        assert answer.headers["access-control-allow-origin"] == "*"
        assert stored(org["org_id"], event["event_id"]) == 1

    missing = httpx.post(url, content=envelope([event_item(fresh_event())]))
    assert missing.status_code == 401 and missing.json()["error"] == "Application Not Found"
    unknown = httpx.post(url, params={"sentry_key": "stacklens_app_" + "Z" * 24}, content=envelope([]))
    foreign = httpx.post(url, params={"sentry_key": other["app_key"]}, content=envelope([]))
    assert unknown.status_code == foreign.status_code == 403
    assert unknown.json()["detail"] == foreign.json()["detail"], "another project's key must look unknown"
    assert httpx.post(f"{server}/api/abc/envelope/", content=b"{}").status_code == 404


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_encodings(server: str, make_org, encoding: str) -> None:
    org = make_org()
    event = fresh_event()
    raw = envelope([event_item(event)])
    body = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "br": brotli.compress,
        "zstd": zstandard.ZstdCompressor().compress,
    }[encoding](raw)
    answer = httpx.post(
        f"{server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=body,
        headers={"Content-Encoding": encoding},
    )
    assert answer.status_code == 200, answer.text
    assert stored(org["org_id"], event["event_id"]) == 1


def test_item_types_resends_and_bad_bodies(server: str, make_org) -> None:
    org = make_org()
    url = f"{server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    event, txn = fresh_event(), transaction_payload()
    body = envelope(
        [
            event_item(event),
            ({"type": "transaction"}, json.dumps(txn).encode()),
            ({"type": "session"}, json.dumps({"sid": uuid.uuid4().hex, "status": "ok"}).encode()),
            ({"type": "attachment", "filename": "dump.txt"}, b"\x00\x01 binary attachment"),
            ({"type": "check_in"}, json.dumps({"check_in_id": uuid.uuid4().hex, "status": "ok"}).encode()),
            ({"type": "some_future_type"}, b"{}"),
            (
                {"type": "client_report"},
                json.dumps({"timestamp": time.time(), "discarded_events": []}).encode(),
            ),
        ],
        {"event_id": event["event_id"]},
    )
    first = httpx.post(url, params=key, content=body)
    assert first.status_code == 200 and first.json() == {"id": event["event_id"]}
    assert stored(org["org_id"], event["event_id"]) == 1
    assert stored(org["org_id"], txn["event_id"], "transactions") == 1
    again = httpx.post(url, params=key, content=body)
    assert again.status_code == 200
    assert stored(org["org_id"], event["event_id"]) == 1, "a resent envelope lands nothing again"

    sessions_only = httpx.post(url, params=key, content=envelope([({"type": "session"}, b'{"status":"ok"}')]))
    assert sessions_only.status_code == 200 and len(sessions_only.json()["id"]) == 32, "always an id"

    for bad, words in [
        (b"not json\n", "malformed envelope"),
        (envelope([({"type": "event"}, b"[1, 2]")]), "not a JSON object"),
    ]:
        answer = httpx.post(url, params=key, content=bad)
        assert answer.status_code == 400 and words in answer.json()["detail"], answer.text
    deep: dict[str, Any] = {}
    for _ in range(80):
        deep = {"d": deep}
    invalid = httpx.post(url, params=key, content=envelope([event_item({**fresh_event(), "extra": deep})]))
    assert invalid.status_code == 400, invalid.text  # nothing of it was kept: the answer says why
    assert invalid.json()["detail"].endswith("1: the JSON nests deeper than 64 levels"), invalid.text
    unsupported = httpx.post(url, params=key, content=b"x", headers={"Content-Encoding": "compress"})
    assert unsupported.status_code == 415
    corrupt = httpx.post(url, params=key, content=b"not gzip", headers={"Content-Encoding": "gzip"})
    assert corrupt.status_code == 400 and "not valid gzip" in corrupt.json()["detail"]
    # A bad envelope next to good ones loses nothing of theirs.
    assert stored(org["org_id"], event["event_id"]) == 1


def test_store_endpoint_cors_and_quota(server: str, settings: Settings, make_org) -> None:
    org = make_org()
    event = fresh_event()
    answer = httpx.post(
        f"{server}/api/{org['project_id']}/store/",
        content=json.dumps(event),
        headers={"X-Sentry-Auth": f"Sentry sentry_key={org['app_key']}, sentry_version=7"},
    )
    assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}
    assert stored(org["org_id"], event["event_id"]) == 1

    preflight = httpx.options(
        f"{server}/api/{org['project_id']}/envelope/",
        headers={"Origin": "https://shop.example", "Access-Control-Request-Method": "POST"},
    )
    assert (
        preflight.status_code == 200 and "x-sentry-auth" in preflight.headers["access-control-allow-headers"]
    )

    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=2)
    answers = [
        httpx.post(
            f"{server}/api/{org['project_id']}/envelope/",
            params={"sentry_key": org["app_key"]},
            content=envelope([event_item(fresh_event()), event_item(fresh_event())]),
        )
        for _ in range(3)
    ]
    limited = [a for a in answers if a.status_code == 429]
    assert limited, [a.status_code for a in answers]
    assert limited[0].json()["error"] == "Rate Limited"
    retry = limited[0].headers["retry-after"]
    assert limited[0].headers["x-sentry-rate-limits"] == f"{retry}::organization"


SDK_SCRIPT = """
import sys, sentry_sdk
sentry_sdk.init(dsn=sys.argv[1], traces_sample_rate=1.0, release="shop@9.9.9")
def place_order(order_id):
    raise KeyError(f"order {order_id} has no customer")
try:
    place_order(41)
except KeyError:
    print(sentry_sdk.capture_exception())
with sentry_sdk.start_transaction(op="task", name="nightly-report") as txn:
    with sentry_sdk.start_span(op="db", name="SELECT 1"):
        pass
print(txn.trace_id)
sentry_sdk.flush(10)
"""


def test_sentry_python_with_its_http_transport(server: str, make_org) -> None:
    org = make_org()
    dsn = server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
    result = subprocess.run(
        [sys.executable, "-c", SDK_SCRIPT, dsn], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    event_id, trace_id = result.stdout.split()
    deadline = time.monotonic() + 20
    while stored(org["org_id"], event_id) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    row = (
        _warehouse[0]
        .query(
            "SELECT release, title FROM events FINAL WHERE org_id = {org:UInt64} AND event_id = {id:String}",
            parameters={"org": org["org_id"], "id": event_id},
        )
        .result_rows
    )
    assert row and row[0][0] == "shop@9.9.9" and "KeyError" in row[0][1], row
    transactions = (
        _warehouse[0]
        .query(
            "SELECT count() FROM transactions FINAL WHERE org_id = {org:UInt64} AND trace_id = {t:String}",
            parameters={"org": org["org_id"], "t": trace_id},
        )
        .result_rows[0][0]
    )
    assert transactions == 1


def test_projects_api_and_settings_page_show_the_dsn_that_works(
    server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    with session_scope(settings) as session:
        worker = accounts.create_app_key(session, org["project_id"], "order_mail")
    listed = httpx.get(f"{server}/api/projects", headers={"Authorization": f"Bearer {org['api_key']}"}).json()
    keys = listed["projects"][0]["app_keys"]
    dsns = {k["service"]: k["dsn"] for k in keys}
    assert dsns[None] == server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    assert dsns["order_mail"].startswith(f"http://{worker}@")
    # The listed DSN is one a Sentry SDK can send with.
    event = fresh_event()
    dsn = dsns["order_mail"]
    key = dsn.split("//")[1].split("@")[0]
    answer = httpx.post(
        f"{server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": key},
        content=envelope([event_item(event)]),
    )
    assert answer.status_code == 200 and stored(org["org_id"], event["event_id"]) == 1


def test_older_keys_with_a_dash_keep_working_without_a_dsn(settings: Settings, make_org) -> None:
    from stacklens.control.dsn import project_dsns
    from stacklens.control.keys import validate_service
    from stacklens_contract.keys import is_app_key

    org = make_org()
    with pytest.raises(ValueError, match="allows no '-'"):
        validate_service("order-mail")
    old = "stacklens_app_order-mail_" + "A" * 24
    assert is_app_key(old), "keys made before DSNs keep their shape"
    with session_scope(settings) as session:
        dsns = project_dsns(session, org["project_id"], "https://stacklens.example", settings)
    assert list(dsns.values()) == [f"https://{org['app_key']}@stacklens.example/{org['project_id']}"]


CLIENTS_DIR = Path(__file__).parent / "sentry_clients"

NODE_SCRIPT = """
const Sentry = require("@sentry/node");
Sentry.init({ dsn: process.env.STACKLENS_DSN, release: "api@2.0.0", tracesSampleRate: 0 });
function chargeCard(amount) { throw new TypeError(`cannot charge ${amount}: card is undefined`); }
let id;
try { chargeCard(12); } catch (err) { id = Sentry.captureException(err); }
Sentry.flush(10000).then((ok) => { console.log(id); process.exit(ok ? 0 : 3); });
"""


@pytest.fixture(scope="module")
def sentry_clients() -> Path:
    """@sentry/node and @sentry/cli from the npm registry (``npm ci`` when node_modules is missing)."""
    npm = shutil.which("npm")
    assert npm, "npm is required (Node 20 + npm)"
    if not (CLIENTS_DIR / "node_modules" / "@sentry" / "node").is_dir():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=CLIENTS_DIR,
            check=True,
            capture_output=True,
            timeout=600,
        )
    return CLIENTS_DIR


def _wait_stored(org_id: int, event_id: str) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = (
            _warehouse[0]
            .query(
                "SELECT title, release, platform FROM events FINAL WHERE org_id = {org:UInt64} AND event_id = {id:String}",
                parameters={"org": org_id, "id": event_id},
            )
            .result_rows
        )
        if rows:
            return rows
        time.sleep(0.2)
    return []


def test_sentry_node_sends_to_the_dsn(server: str, make_org, sentry_clients: Path) -> None:
    org = make_org()
    dsn = server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    result = subprocess.run(
        ["node", "-e", NODE_SCRIPT],
        cwd=sentry_clients,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "STACKLENS_DSN": dsn},
    )
    assert result.returncode == 0, result.stderr
    event_id = result.stdout.strip().splitlines()[-1]
    rows = _wait_stored(org["org_id"], event_id)
    assert (
        rows and rows[0][0].startswith("TypeError") and rows[0][1] == "api@2.0.0" and rows[0][2] == "node"
    ), rows


def test_sentry_cli_send_event(server: str, make_org, sentry_clients: Path) -> None:
    org = make_org()
    dsn = server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    cli = sentry_clients / "node_modules" / ".bin" / "sentry-cli"
    env = {**os.environ, "SENTRY_DSN": dsn, "SENTRY_LOG_LEVEL": "info"}
    result = subprocess.run(
        [
            str(cli),
            "send-event",
            "-m",
            "nightly backup failed on db-2",
            "--release",
            "ops@1.0.0",
            "--no-environ",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    match = re.search(r"Event id: ([0-9a-f-]{32,36})", result.stdout + result.stderr)
    assert match, result.stdout + result.stderr
    rows = _wait_stored(org["org_id"], match.group(1).replace("-", ""))
    assert rows and "nightly backup failed on db-2" in rows[0][0] and rows[0][1] == "ops@1.0.0", rows


def test_a_corpus_of_platforms_lands_titled_and_findable(server: str, make_org) -> None:
    from tests.api.sentry_corpus import CORPUS

    org = make_org()
    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    sent: dict[str, dict[str, Any]] = {}
    for i, (name, build) in enumerate(CORPUS.items()):
        payload = build()
        if i % 2:  # half through the legacy store endpoint
            answer = httpx.post(
                f"{server}/api/{org['project_id']}/store/",
                params={"sentry_key": org["app_key"]},
                content=json.dumps(payload),
            )
        else:
            answer = httpx.post(
                f"{server}/api/{org['project_id']}/envelope/",
                params={"sentry_key": org["app_key"]},
                content=envelope([event_item(payload)], {"event_id": payload["event_id"]}),
            )
        assert answer.status_code == 200, (name, answer.text)
        sent[name] = payload
    titles: dict[str, str] = {}
    for name, payload in sent.items():
        found = httpx.get(f"{server}/api/events/{payload['event_id']}", headers=bearer)
        assert found.status_code == 200, (name, found.text)
        titles[name] = stored_title(org["org_id"], payload["event_id"])
    assert all(titles.values()), titles
    assert titles["java-log"] == "Stack trace: execute in com.acme.billing.InvoiceJob"
    assert titles["csp"] == "Blocked 'script-src-elem' from 'evil.example'"
    assert titles["native"].startswith("EXCEPTION_ACCESS_VIOLATION_READ")
    assert titles["message"] == "payment p-17 declined by acquirer"
    issues = httpx.get(
        f"{server}/api/projects/{org['project']}/issues", params={"limit": 100}, headers=bearer
    ).json()["issues"]
    assert len(issues) == len(CORPUS), "every platform's event is an issue of its own"
    assert all(issue["title"] for issue in issues)


def stored_title(org_id: int, event_id: str) -> str:
    rows = (
        _warehouse[0]
        .query(
            "SELECT title FROM events FINAL WHERE org_id = {org:UInt64} AND event_id = {id:String}",
            parameters={"org": org_id, "id": event_id},
        )
        .result_rows
    )
    return str(rows[0][0]) if rows else ""


BROWSER_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>direct</title><link rel="icon" href="data:,">
<script src="/sentry.bundle.js"></script></head><body><h1>direct to the DSN</h1>
<script>
Sentry.init({ dsn: %(dsn)s, release: "web@3.1.0", integrations: [] });
function addToCart() { throw new RangeError("quantity must be positive"); }
try { addToCart(); } catch (err) { window.__eventId = Sentry.captureException(err); }
Sentry.flush(5000).then(function (ok) { window.__flushed = ok; });
</script></body></html>"""


@pytest.mark.browser
def test_sentry_browser_in_chromium_direct_to_the_dsn(
    server: str,
    make_org,
    sentry_browser_bundle: Path,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    """A page on another origin sends straight to the DSN: the envelope crosses origins (CORS) and lands."""
    import http.server
    import threading as _threading

    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM_ARGS, CHROMIUM_PATH

    org = make_org()
    dsn = server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    (tmp_path / "index.html").write_text(BROWSER_PAGE % {"dsn": json.dumps(dsn)})
    shutil.copy(sentry_browser_bundle, tmp_path / "sentry.bundle.js")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    _threading.Thread(target=site.serve_forever, daemon=True).start()
    errors: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"http://127.0.0.1:{site.server_address[1]}/index.html")
            page.wait_for_function("window.__flushed !== undefined", timeout=15000)
            event_id = page.evaluate("window.__eventId")
            assert page.evaluate("window.__flushed") is True
            browser.close()
    finally:
        site.shutdown()
        site.server_close()
    assert not errors, errors  # a CORS refusal would show here
    rows = _wait_stored(org["org_id"], event_id)
    assert rows and rows[0][0] == "RangeError: quantity must be positive" and rows[0][2] == "javascript", rows
