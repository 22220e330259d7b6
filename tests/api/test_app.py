"""`create_app(settings)` is fully honoured: two apps over two data directories in one process each read and
write only their own control store and warehouse, and the process-global settings are never consulted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.cli.app import build_app
from stacklens.control import accounts
from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse, reset_clients
from stacklens.warehouse.migrations import apply_migrations
from tests.api.routers.test_ingest import error_payload, line, post
from tests.conftest import make_settings


def _raise(message: str) -> None:
    raise RuntimeError(message)


@pytest.fixture
def installations(tmp_path: Path, warehouse_url: str) -> Iterator[tuple[Settings, Settings, Settings]]:
    """Two installations (own data dir, control store, secret and warehouse database; chdb allows one engine
    per process, so they share its path) and a third that is made the process-global one: anything that
    fell back to it would find neither installation's data."""
    one = make_settings(tmp_path / "one", warehouse_url, secret_key="secret-of-installation-one-0123")
    two = make_settings(tmp_path / "two", warehouse_url, secret_key="secret-of-installation-two-4567")
    bystander = make_settings(tmp_path / "global", warehouse_url)
    for settings in (one, two):
        settings.data_dir.mkdir(parents=True)
        migrate_control_store(settings)
        apply_migrations(settings)
    override_settings(bystander)
    try:
        yield one, two, bystander
    finally:
        override_settings(None)
        reset_clients()
        dispose_engines()


def _org(settings: Settings, name: str) -> dict[str, object]:
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(
            session, name, f"owner@{name.lower()}.test", "password-123"
        )
        project, app_key = create_project(session, org.id, "Web App")
        return {
            "org_id": org.id,
            "project_id": project.id,
            "slug": project.slug,
            "api_key": api_key,
            "app_key": app_key,
        }


def _titles(client: TestClient, org: dict[str, object]) -> set[str]:
    answer = client.get(
        f"/api/projects/{org['slug']}/issues",
        params={"status": "all"},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert answer.status_code == 200, answer.text
    return {issue["title"] for issue in answer.json()["issues"]}


def test_two_apps_in_one_process_see_only_their_own_data(
    installations: tuple[Settings, Settings, Settings],
) -> None:
    one, two, bystander = installations
    first, second = _org(one, "First"), _org(two, "Second")
    # Both control stores hand out the same ids: only the settings tell the two installations apart.
    assert (first["org_id"], first["project_id"]) == (second["org_id"], second["project_id"])
    with TestClient(create_app(one)) as app_one, TestClient(build_app(two)) as app_two:
        for client, org, message in ((app_one, first, "only in one"), (app_two, second, "only in two")):
            payload = error_payload()
            payload["exception"]["values"][-1]["value"] = message
            answer = post(client, str(org["api_key"]), line(payload, str(org["app_key"])))
            assert answer.status_code == 200 and answer.json()["accepted"] == 1, answer.text

        (title_one,) = _titles(app_one, first)
        (title_two,) = _titles(app_two, second)
        assert "only in one" in title_one and "only in two" in title_two
        # Each control store knows only its own keys.
        assert post(app_one, str(second["api_key"]), b"").status_code == 401
        assert post(app_two, str(first["api_key"]), b"").status_code == 401
        # Each app reveals its key with its own secret (the other secret could not decrypt it).
        for client, org in ((app_one, first), (app_two, second)):
            revealed = client.post(
                "/api/keys/api/reveal", headers={"Authorization": f"Bearer {org['api_key']}"}
            )
            assert revealed.status_code == 200 and revealed.json()["api_key"] == org["api_key"]
        # The dashboards mounted by the composition root read the same installation as their app.
        assert app_two.get("/login").status_code == 200

    def titles(settings: Settings) -> list[str]:
        return [r[0] for r in get_warehouse(settings).query("SELECT title FROM events").result_rows]

    assert titles(one) == [title_one] and titles(two) == [title_two]
    # Nothing reached the process-global installation: no control store file, no warehouse database.
    assert not (bystander.data_dir / "control.db").exists()
    assert (
        get_warehouse(one)
        .query(
            "SELECT count() FROM system.databases WHERE name = {db:String}",
            parameters={"db": bystander.warehouse_database},
        )
        .result_rows[0][0]
        == 0
    )
