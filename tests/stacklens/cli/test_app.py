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


def test_every_app_uses_the_routes_the_modules_built(settings: Settings) -> None:
    """An app's API and page routes are the ones each router's module built at import, shared by every app of
    the process: none is built again per app (an included router builds its routes on the first request that
    walks past them, up to ~1.5 s here). So no router may need what an inclusion adds: a lifespan, startup or
    shutdown hook of its own."""
    import sys

    from fastapi.routing import APIRouter

    apps = build_app(settings), build_app(settings)
    routers = [
        module.router
        for name, module in list(sys.modules.items())
        if name.startswith(("api.", "dashboards.")) and isinstance(getattr(module, "router", None), APIRouter)
    ]
    assert len(routers) > 80, len(routers)
    for app in apps:
        in_app = {id(route) for route in app.router.routes}
        # Nothing in the app is left to be built lazily (FastAPI's included routers are its only such route).
        assert "_IncludedRouter" not in {type(route).__name__ for route in app.router.routes}
        for router in routers:
            assert router.routes and all(id(route) in in_app for route in router.routes), router.prefix
    for router in routers:
        assert not router.on_startup and not router.on_shutdown, router.prefix
        assert type(router.lifespan_context).__name__ == "_DefaultLifespan", router.prefix
