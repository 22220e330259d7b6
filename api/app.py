"""The FastAPI app factory: API routers and dashboard pages on one app."""

from __future__ import annotations

from fastapi import FastAPI

from api.errors import install_error_handlers
from stacklens import __version__
from stacklens.settings import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app for ``settings`` (the process's settings when omitted). No I/O happens here."""
    settings = settings or get_settings()
    app = FastAPI(
        title="StackLens",
        version=__version__,
        description="Self-hosted error monitoring and web performance. Authenticate with `Authorization: Bearer <API key>`.",
        docs_url="/docs",
    )
    app.state.settings = settings
    install_error_handlers(app)
    # One router per resource; each module exposes `router`.
    from api.routers import (
        activity,
        auth,
        budgets,
        health,
        ingest,
        issues_api,
        keys,
        limits,
        pipelines,
        projects,
    )

    app.include_router(auth.router)
    app.include_router(projects.router)
    app.include_router(ingest.router)
    app.include_router(health.router)
    app.include_router(keys.router)
    app.include_router(activity.router)
    app.include_router(limits.router)
    app.include_router(issues_api.router)
    app.include_router(pipelines.router)
    app.include_router(budgets.router)
    # Dashboard pages, sessions, static files (plotly.js from the plotly package) on the same app.
    from dashboards.web import install as install_dashboards

    install_dashboards(app)
    return app
