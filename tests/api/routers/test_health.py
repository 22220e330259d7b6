from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import ensure_database, reset_clients


def test_health_without_key_is_only_a_status(control_settings: Settings, make_org) -> None:
    ensure_database(control_settings)
    with TestClient(create_app(control_settings)) as client:
        response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_health_with_key_shows_components(control_settings: Settings, make_org) -> None:
    ensure_database(control_settings)
    org = make_org()
    with TestClient(create_app(control_settings)) as client:
        response = client.get("/api/health", headers={"Authorization": f"Bearer {org['api_key']}"})
        bad = client.get("/api/health", headers={"Authorization": f"Bearer {org['app_key']}"})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["components"]["warehouse"]["status"] == "ok"
    assert body["components"]["control_store"]["status"] == "ok"
    assert bad.status_code == 401 and bad.json()["error"] == "Invalid API Key"


@pytest.fixture
def warehouse_down(control_settings: Settings):
    """The same installation with its warehouse pointing at a closed port."""
    down = control_settings.model_copy(update={"warehouse_url": "http://127.0.0.1:9"})
    override_settings(down)
    reset_clients()
    yield down
    reset_clients()


def test_warehouse_down_is_503(warehouse_down: Settings, make_org) -> None:
    org = make_org()
    with TestClient(create_app(warehouse_down)) as client:
        anonymous = client.get("/api/health")
        detailed = client.get("/api/health", headers={"Authorization": f"Bearer {org['api_key']}"})
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "degraded"}
    assert detailed.status_code == 503
    components = detailed.json()["components"]
    assert components["warehouse"]["status"] == "down" and components["warehouse"]["detail"]
    assert components["control_store"]["status"] == "ok"


def test_control_store_down_is_503(settings: Settings, tmp_path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    broken = settings.model_copy(update={"database_url": f"sqlite:///{blocker}/control.db"})
    ensure_database(broken)
    with TestClient(create_app(broken)) as client:
        response = client.get("/api/health")
    assert response.status_code == 503 and response.json() == {"status": "degraded"}
