"""`stacklens serve`'s app: the API and the dashboard pages on one app."""

from __future__ import annotations

from fastapi.testclient import TestClient

from stacklens.cli.app import build_app
from stacklens.settings import Settings


def test_the_app_serves_the_api_and_the_pages(settings: Settings) -> None:
    app = build_app(settings)
    # Both halves are routed: an API operation and a dashboard page resolve to their paths.
    assert app.url_path_for("login_form") == "/login"
    assert (
        app.url_path_for("issue_list", org_slug="acme", project_slug="web")
        == "/orgs/acme/projects/web/issues"
    )
    with TestClient(app) as client:
        page = client.get("/login")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert client.get("/api/projects").json()["error"] == "Invalid API Key"
