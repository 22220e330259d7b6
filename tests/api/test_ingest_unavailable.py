"""The ingest entrances through a real server when a store cannot take writes: a locked control store and a
spool folder that refuses writes answer 503 `Service Unavailable` with `Retry-After` — the sender keeps its
data and retries — not 500; once the store is free again the same request is 200."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from stacklens.control import db
from stacklens.control.db import dispose_engines
from stacklens.settings import Settings
from tests.api.live import serve
from tests.api.sentry_live import envelope, event_item

pytestmark = pytest.mark.slow


@pytest.fixture
def live(stores: Settings, org_factory) -> Iterator[tuple[str, dict[str, Any], Settings]]:
    org = org_factory("Unavailable", "Web")
    with serve(stores) as base:
        yield base, org, stores


def _event() -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": time.time(),
        "platform": "python",
        "level": "error",
        "exception": {"values": [{"type": "RuntimeError", "value": "checkout failed"}]},
    }


def _ingest(base: str, org: dict[str, Any]) -> httpx.Response:
    line = {
        "v": 1,
        "type": "event",
        "ts": "2026-11-21T19:22:03.123Z",
        "payload": _event(),
        "app_key": org["app_key"],
    }
    return httpx.post(
        f"{base}/api/ingest",
        content=json.dumps(line).encode(),
        headers={"Authorization": f"Bearer {org['api_key']}", "Content-Type": "application/x-ndjson"},
        timeout=60,
    )


def _envelope(base: str, org: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{base}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=envelope([event_item(_event())]),
        timeout=60,
    )


def _otlp(base: str, org: dict[str, Any]) -> httpx.Response:
    now = time.time_ns()
    span = {
        "traceId": uuid.uuid4().hex,
        "spanId": uuid.uuid4().hex[:16],
        "name": "GET /orders",
        "kind": 2,
        "startTimeUnixNano": str(now),
        "endTimeUnixNano": str(now + 25_000_000),
        "attributes": [{"key": "http.request.method", "value": {"stringValue": "GET"}}],
    }
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "orders"}}]},
                "scopeSpans": [{"scope": {"name": "manual"}, "spans": [span]}],
            }
        ]
    }
    return httpx.post(
        f"{base}/api/{org['project_id']}/otlp/v1/traces",
        params={"sentry_key": org["app_key"]},
        content=json.dumps(body),
        headers={"Content-Type": "application/json"},
        timeout=60,
    )


ENTRANCES = {"ingest": _ingest, "envelope": _envelope, "otlp": _otlp}


def _unavailable(name: str, answer: httpx.Response) -> None:
    assert answer.status_code == 503, (name, answer.status_code, answer.text)
    assert int(answer.headers["retry-after"]) > 0, name
    # Each in its entrance's own shape: the API's error body, Sentry's, and OTLP's Status (code 14,
    # UNAVAILABLE).
    body = answer.json()
    said = body["error"] if "error" in body else body["message"]
    assert said.startswith("Service Unavailable"), (name, body)


@contextmanager
def _control_store_locked(settings: Settings) -> Iterator[None]:
    """Another connection holds an exclusive lock on control.db: no one else reads or writes it. The store
    runs in WAL mode, where readers pass a plain ``BEGIN EXCLUSIVE``; in exclusive locking mode they wait
    too, then get "database is locked" after the store's busy timeout. The server's idle pooled connections
    are closed first (it runs in this process): an open one would keep the holder from the lock."""
    dispose_engines()
    holder = sqlite3.connect(settings.data_dir / "control.db", isolation_level=None, timeout=20)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()


def test_a_locked_control_store_answers_503_then_200(live, monkeypatch: pytest.MonkeyPatch) -> None:
    base, org, settings = live
    # Each refused request first waits the store's busy timeout (10 s in service): a second here, so the three
    # entrances take seconds, not half a minute. Connections opened under the lock take it (the engines are
    # disposed when the lock is taken); the engines are disposed again once it is restored.
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 1_000)
    try:
        # Nothing sent before: the keys and quotas are not known yet, each entrance reads the control store.
        with _control_store_locked(settings):
            for name, send in ENTRANCES.items():
                _unavailable(name, send(base, org))
    finally:
        monkeypatch.undo()
        dispose_engines()
    for name, send in ENTRANCES.items():
        assert send(base, org).status_code == 200, name


@contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` on a read-only filesystem of its own (root ignores file modes, not a read-only mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_spool_folder_that_refuses_writes_answers_503(live) -> None:
    base, org, settings = live
    for name, send in ENTRANCES.items():
        assert send(base, org).status_code == 200, name
    with _read_only(settings.data_dir / "front_door"):
        for name, send in ENTRANCES.items():
            _unavailable(name, send(base, org))
    for name, send in ENTRANCES.items():
        assert send(base, org).status_code == 200, name
