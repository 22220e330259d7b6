"""`GET /api/health/ready` on a real server: 200 when it should take traffic, 503 with the reason otherwise
(migrations pending, the warehouse down, the front door's queue full; the disk floor is in
test_disk_floor)."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from stacklens.control.db import migrate_control_store
from stacklens.ingest.front_door import door as door_module
from stacklens.ingest.front_door import front_door
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import ensure_database, reset_clients
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve


def _reasons(url: str, headers: dict[str, str] | None = None) -> tuple[int, list[dict[str, str]]]:
    # A generous timeout: the answer is what is checked here, and a loaded test machine can be slow.
    answer = httpx.get(f"{url}/api/health/ready", headers=headers or {}, timeout=30)
    body = answer.json()
    assert body["status"] == ("ready" if answer.status_code == 200 else "not_ready")
    return answer.status_code, body["reasons"]


def test_ready_with_both_stores_migrated_and_liveness_unchanged(settings: Settings) -> None:
    migrate_control_store(settings)
    apply_migrations(settings)
    with serve(settings) as url:
        assert _reasons(url) == (200, [])
        # Liveness as before: "ok" (a caller on this machine also learns the data directory, for the CLI's
        # check of which installation serves the port).
        alive = httpx.get(f"{url}/api/health").json()
        assert alive["status"] == "ok" and set(alive) <= {"status", "data_dir"}


def test_pending_migrations_are_not_ready_until_applied(settings: Settings) -> None:
    apply_migrations(settings)  # the warehouse only: the control store has no revision yet
    with serve(settings) as url:
        status, reasons = _reasons(url)
        assert status == 503 and reasons == [{"check": "migrations"}]
        assert httpx.get(f"{url}/api/health").status_code == 200  # alive all the same
        migrate_control_store(settings)
        assert _reasons(url) == (200, [])


def test_warehouse_pending_migrations_are_named(settings: Settings, make_org) -> None:
    org = make_org()
    fresh = settings.model_copy(update={"warehouse_database": f"t_{uuid.uuid4().hex[:12]}"})
    override_settings(fresh)
    ensure_database(fresh)  # an empty database: the warehouse answers, its tables are missing
    with serve(fresh) as url:
        status, reasons = _reasons(url, {"Authorization": f"Bearer {org['api_key']}"})
    assert status == 503 and [r["check"] for r in reasons] == ["migrations"]
    assert "warehouse: 0001_" in reasons[0]["detail"] and "stacklens migrate" in reasons[0]["detail"]


def test_a_warehouse_that_does_not_answer_is_not_ready(settings: Settings) -> None:
    migrate_control_store(settings)
    down = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:9"})
    override_settings(down)
    reset_clients()
    try:
        with serve(down) as url:
            assert _reasons(url) == (503, [{"check": "warehouse"}])
    finally:
        reset_clients()


def test_a_full_queue_is_not_ready_while_it_refuses(
    settings: Settings, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    apply_migrations(settings)
    org = make_org()
    door = front_door(settings)
    monkeypatch.setattr(door_module, "MAX_ROWS_WAITING", 3)
    monkeypatch.setattr(
        door.state, "rows_spooled", 3
    )  # three rows wait for a warehouse that does not take them
    line = {"v": 1, "type": "event", "app_key": org["app_key"], "payload": {"message": "m", "level": "error"}}
    with serve(settings) as url:
        refused = httpx.post(
            f"{url}/api/ingest",
            content=json.dumps(line).encode(),
            headers={"Authorization": f"Bearer {org['api_key']}"},
        )
        assert refused.status_code == 503 and refused.headers["Retry-After"]
        status, reasons = _reasons(url, {"Authorization": f"Bearer {org['api_key']}"})
        assert status == 503 and [r["check"] for r in reasons] == ["queue"]
        assert "full" in reasons[0]["detail"]
        monkeypatch.setattr(door.state, "rows_spooled", 0)
        monkeypatch.setattr("stacklens.readiness.QUEUE_REFUSAL_SECONDS", 0.2)
        time.sleep(0.3)
        assert _reasons(url) == (200, [])
