"""The composition root's app: the API with the dashboards installed on it (what `stacklens serve` runs)."""

from __future__ import annotations

from fastapi import FastAPI

from stacklens.settings import Settings


def build_app(settings: Settings) -> FastAPI:
    """The API and the dashboard pages (sessions, static files, pages) on one app for ``settings``."""
    from api.app import create_app
    from dashboards.web import install as install_dashboards

    return create_app(settings, installers=(install_dashboards,))
