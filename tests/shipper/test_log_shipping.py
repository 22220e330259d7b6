"""Logs on the log-file road: sentry-python's ``enable_logs`` (through ``stacklens_sdk``'s file transport)
writes one `log` line per record, the real shipper (a subprocess) delivers them to the real service, and
each record lands in ``logs`` once, with its level, body, attributes, release and the trace it was written
in."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk

import stacklens_sdk
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.shipper.harness import Workspace, wait_until
from tests.shipper.test_real_service import stop


@pytest.fixture
def service(settings: Settings) -> Iterator[str]:
    apply_migrations(settings, up_to=99)
    with serve(settings) as url:
        yield url


@pytest.fixture
def ws(service: str, make_org) -> Iterator[tuple[Workspace, dict[str, Any]]]:
    org = make_org()
    workspace = Workspace(
        type("S", (), {"url": service})(), apiKey=org["api_key"], appKey=org["app_key"], timeout="30s"
    )
    yield workspace, org
    workspace.cleanup()


def _logs(settings: Settings, org_id: int) -> list[tuple[Any, ...]]:
    return (
        get_warehouse(settings)
        .query(
            "SELECT severity, body, release, environment, attributes['order.id'], trace_id FROM logs"
            " WHERE org_id = {org:UInt64} ORDER BY timestamp, body",
            parameters={"org": org_id},
        )
        .result_rows
    )


def test_sdk_log_records_travel_the_log_file_and_the_shipper_one_row_each(
    ws: tuple[Workspace, dict[str, Any]], settings: Settings
) -> None:
    workspace, org = ws
    stacklens_sdk.init(
        app_key=org["app_key"],
        storage_path=workspace.logs,
        release="worker@4.1.0",
        environment="production",
        enable_logs=True,
        traces_sample_rate=1.0,
    )
    try:
        with sentry_sdk.start_transaction(name="checkout", op="task") as transaction:
            trace_id = transaction.trace_id
            sentry_sdk.logger.info("order {order_id} paid", order_id="A-1", attributes={"order.id": "A-1"})
            sentry_sdk.logger.warning("payment retried for order A-2", attributes={"order.id": "A-2"})
        sentry_sdk.logger.error("stock service unreachable")
        sentry_sdk.flush(5)
    finally:
        stacklens_sdk.close()
    lines = [
        json.loads(x) for f in workspace.logs.glob("stacklens-*.log") for x in f.read_text().splitlines()
    ]
    records = [line for line in lines if line["type"] == "log"]
    assert len(records) == 3, [line["type"] for line in lines]  # one line per record, not one per batch
    assert all("items" not in line["payload"] and line["payload"]["body"] for line in records)

    proc = workspace.start()
    wait_until(lambda: len(_logs(settings, org["org_id"])) == 3, 90, "the log records landed")
    time.sleep(1.0)
    output = stop(proc)
    rows = _logs(settings, org["org_id"])
    assert sorted((r[0], r[1], r[4]) for r in rows) == [
        ("error", "stock service unreachable", ""),
        ("info", "order A-1 paid", "A-1"),
        ("warn", "payment retried for order A-2", "A-2"),
    ], output[-2000:]
    assert {(r[2], r[3]) for r in rows} == {("worker@4.1.0", "production")}
    in_checkout = [r for r in rows if r[4]]
    assert {r[5] for r in in_checkout} == {trace_id}
