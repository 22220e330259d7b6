"""The local operator's door to the pipelines: only with the server's token, only from this host, never with
an organization's API key."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.app import create_app
from pipelines.embedded import EmbeddedRunner
from stacklens.server_link import TOKEN_HEADER
from stacklens.settings import Settings


def test_the_token_opens_status_and_runs(stores: Settings, org_factory) -> None:
    org = org_factory()
    app = create_app(stores)
    with TestClient(app) as client:
        # A server that does not run the pipelines has no such door.
        assert client.get("/api/pipelines/status").status_code == 404
        app.state.pipelines_runner = EmbeddedRunner(stores)
        app.state.pipelines_token = "local-token-0123456789"
        assert client.get("/api/pipelines/status").status_code == 401
        api_key = {"Authorization": f"Bearer {org['api_key']}"}
        assert client.get("/api/pipelines/status", headers=api_key).status_code == 401
        token = {TOKEN_HEADER: "local-token-0123456789"}
        status = client.get("/api/pipelines/status", headers=token).json()
        assert status["runs"] == [] and status["marts"]["issues"] == 0
        unknown = client.post("/api/pipelines/run", json={"select": ["no_such_asset"]}, headers=token)
        assert unknown.status_code == 400 and "unknown asset no_such_asset" in unknown.text
        budgets = client.get(
            "/api/pipelines/budgets", params={"project": org["project"]}, headers=token
        ).json()
        assert budgets == {"budgets": [], "pages": []}
    with TestClient(app, client=("203.0.113.7", 5000)) as remote:
        assert remote.get("/api/pipelines/status", headers=token).status_code == 403
