"""Logs from sentry-python (``enable_logs=True``, ``sentry_sdk.logger``) straight to a StackLens DSN: the
`log` envelope item's records land in `logs` with their level, body, attributes, trace, release and
environment, secrets scrubbed; the same envelope sent again lands nothing twice; a container over the bound
is refused."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.api.sentry_live import _warehouse

PYTHON_APP = """
import sys

import sentry_sdk
from sentry_sdk import logger as sentry_logger

sentry_sdk.init(dsn=sys.argv[1], release="shop@7.1.0", environment="staging", enable_logs=True,
                traces_sample_rate=1.0)

with sentry_sdk.start_transaction(name="checkout", op="task") as transaction:
    sentry_logger.info("cart {cart_id} checked out", cart_id="c-981")
    sentry_logger.error("payment failed for {user}", user="ada", attributes={"api_key": "sk_live_not_for_logs"})
    print(transaction.trace_id)
sentry_logger.warning("stock low: {count} left", count=3)
sentry_sdk.flush(30)
"""


def _wait_for(query: Callable[[], Any], ready: Callable[[Any], bool], seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    value = query()
    while not ready(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = query()
    return value


def _logs(org_id: int) -> list[tuple[Any, ...]]:
    return list(
        _warehouse[0]
        .query(
            "SELECT severity, severity_number, body, attributes['sentry.message.parameter.cart_id'], "
            "attributes['api_key'], "
            "attributes['sentry.message.template'], trace_id, release, environment, source "
            "FROM logs WHERE org_id = {org:UInt64} ORDER BY timestamp",
            parameters={"org": org_id},
        )
        .result_rows
    )


def test_sentry_python_logs_land_through_the_envelope(dsn_server: str, make_org) -> None:
    org = make_org()
    dsn = dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
    result = subprocess.run(
        [sys.executable, "-c", PYTHON_APP, dsn], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    trace_id = result.stdout.strip().splitlines()[-1]
    rows = _wait_for(lambda: _logs(int(org["org_id"])), lambda v: len(v) >= 3)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("info", 9, "cart c-981 checked out"),
        ("error", 17, "payment failed for ada"),
        ("warn", 13, "stock low: 3 left"),
    ]
    assert rows[0][3] == "c-981" and rows[0][5] == "cart {cart_id} checked out"
    assert rows[1][4] == "[FILTERED]", "an attribute under a sensitive name is scrubbed"
    assert rows[0][6] == trace_id == rows[1][6]
    assert all(r[7:] == ("shop@7.1.0", "staging", "sentry") for r in rows)


def _envelope(records: list[Any]) -> bytes:
    header = json.dumps({"sent_at": "2026-01-01T00:00:00Z"})
    payload = json.dumps({"items": records})
    item = json.dumps(
        {"type": "log", "item_count": len(records), "content_type": "application/vnd.sentry.items.log+json"}
    )
    return f"{header}\n{item}\n{payload}\n".encode()


def test_a_resent_envelope_lands_once_and_bad_records_are_refused_alone(dsn_server: str, make_org) -> None:
    org = make_org()
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    auth = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}"}
    now = time.time()
    records = [
        {
            "timestamp": now,
            "level": "info",
            "body": "order 5 shipped",
            "trace_id": "0123456789abcdef0123456789abcdef",
        },
        {"timestamp": now, "level": "info", "body": "bad trace", "trace_id": "0123"},
        "not a record",
        {"timestamp": "yesterday-ish", "level": "debug", "body": "unreadable time"},
    ]
    # A lone request is answered once its rows are in the warehouse (the front door's quiet path: journal
    # synced, then landed), seconds on a machine busy with the rest of the suite: httpx's 5 s default is
    # too tight, as for the suite's other real-server tests.
    first = httpx.post(
        url,
        content=gzip.compress(_envelope(records)),
        headers={**auth, "Content-Encoding": "gzip"},
        timeout=60,
    )
    assert first.status_code == 200, first.text
    again = httpx.post(url, content=_envelope(records), headers=auth, timeout=60)
    assert again.status_code == 200, again.text
    rows = list(
        _warehouse[0]
        .query(
            "SELECT body, severity, attributes['stacklens.sent_timestamp'] FROM logs "
            "WHERE org_id = {org:UInt64} ORDER BY body",
            parameters={"org": int(org["org_id"])},
        )
        .result_rows
    )
    assert rows == [("order 5 shipped", "info", ""), ("unreadable time", "debug", "yesterday-ish")]
    too_many = httpx.post(url, content=_envelope([{"body": "x"}] * 1001), headers=auth, timeout=60)
    assert too_many.status_code == 413 and "1000" in too_many.text, too_many.text
