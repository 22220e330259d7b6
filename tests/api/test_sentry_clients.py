"""Real Sentry clients pointed at a StackLens DSN: sentry-python with its HTTP transport, @sentry/node and
sentry-cli from the npm registry, and @sentry/browser in Debian chromium from another origin (CORS)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.api.sentry_live import _warehouse, stored, wait_stored

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
sentry_sdk.flush(30)
"""


def test_sentry_python_with_its_http_transport(dsn_server: str, make_org) -> None:
    org = make_org()
    dsn = dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
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


CLIENTS_DIR = Path(__file__).parent / "sentry_clients"

NODE_SCRIPT = """
const Sentry = require("@sentry/node");
Sentry.init({ dsn: process.env.STACKLENS_DSN, release: "api@2.0.0", tracesSampleRate: 0 });
function chargeCard(amount) { throw new TypeError(`cannot charge ${amount}: card is undefined`); }
let id;
try { chargeCard(12); } catch (err) { id = Sentry.captureException(err); }
Sentry.flush(30000).then((ok) => { console.log(id); process.exit(ok ? 0 : 3); });
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


def test_sentry_node_sends_to_the_dsn(dsn_server: str, make_org, sentry_clients: Path) -> None:
    org = make_org()
    dsn = dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
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
    rows = wait_stored(org["org_id"], event_id)
    assert (
        rows and rows[0][0].startswith("TypeError") and rows[0][1] == "api@2.0.0" and rows[0][2] == "node"
    ), rows


def test_sentry_cli_send_event(dsn_server: str, make_org, sentry_clients: Path) -> None:
    org = make_org()
    dsn = dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
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
    rows = wait_stored(org["org_id"], match.group(1).replace("-", ""))
    assert rows and "nightly backup failed on db-2" in rows[0][0] and rows[0][1] == "ops@1.0.0", rows


BROWSER_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>direct</title><link rel="icon" href="data:,">
<script src="/sentry.bundle.js"></script></head><body><h1>direct to the DSN</h1>
<script>
Sentry.init({ dsn: %(dsn)s, release: "web@3.1.0", integrations: [] });
function addToCart() { throw new RangeError("quantity must be positive"); }
try { addToCart(); } catch (err) { window.__eventId = Sentry.captureException(err); }
Sentry.flush(30000).then(function (ok) { window.__flushed = ok; });
</script></body></html>"""


@pytest.mark.browser
def test_sentry_browser_in_chromium_direct_to_the_dsn(
    chromium,
    dsn_server: str,
    make_org,
    sentry_browser_bundle: Path,
    tmp_path: Path,
) -> None:
    """A page on another origin sends straight to the DSN: the envelope crosses origins (CORS) and lands."""
    import http.server
    import threading as _threading

    org = make_org()
    dsn = dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
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
        page = chromium.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"http://127.0.0.1:{site.server_address[1]}/index.html")
        page.wait_for_function("() => window.__flushed !== undefined", timeout=45000)
        event_id = page.evaluate("window.__eventId")
        assert page.evaluate("window.__flushed") is True
    finally:
        site.shutdown()
        site.server_close()
    assert not errors, errors  # a CORS refusal would show here
    rows = wait_stored(org["org_id"], event_id)
    assert rows and rows[0][0] == "RangeError: quantity must be positive" and rows[0][2] == "javascript", rows
