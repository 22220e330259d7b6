"""The FastAPI app factory: the API routers, plus whatever the composition root installs beside them.

The API never imports the dashboards: ``stacklens.cli.app.build_app`` passes their installer in, so the
pages share this app (one port, one process) while the dependency points from the root to both adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import FastAPI

from api.errors import install_error_handlers
from stacklens import __version__
from stacklens.settings import Settings

# Adds routes, middleware or exception handlers to the app; runs after the API's own routers.
Installer = Callable[[FastAPI], None]


def create_app(settings: Settings, installers: Sequence[Installer] = ()) -> FastAPI:
    """Build the app for ``settings``, then run each of ``installers`` on it. No I/O happens here."""
    app = FastAPI(
        title="StackLens",
        version=__version__,
        description="Self-hosted error monitoring and web performance. Authenticate with `Authorization: Bearer <API key>`.",
        docs_url=None,  # our own /docs: local assets, strict CSP (api/docs.py)
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        # FastAPI's own OpenTelemetry spans, metrics and logs stay off: the service configures no provider of
        # its own, and with them on FastAPI looked up the global providers on every request (~2 % of a
        # one-event envelope's time on the event loop) to find none.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.settings = settings
    install_error_handlers(app)
    from api.json_depth import install_json_depth

    install_json_depth(app)  # every JSON body passes the one depth guard before a route reads it
    from api.docs import install_docs
    from api.openapi import install_openapi

    install_docs(app)
    install_openapi(app)
    # One router per resource; each module exposes `router`.
    from api.routers import (
        activity,
        alerts,
        annotations,
        audit,
        auth,
        budgets,
        dashboards,
        envelope,
        error_page,
        explore,
        feedback,
        health,
        ingest,
        integrations,
        issue_comments,
        issue_merges,
        issues_api,
        keys,
        limits,
        logs,
        metrics,
        monitor_checkins,
        monitors,
        notifications,
        operations,
        organization,
        otlp,
        outcomes,
        ownership,
        performance,
        performance_inp,
        pipelines,
        project_quotas,
        projects,
        releases,
        scrubbing,
        sourcemaps,
        sql,
        sso,
        subscriptions,
        teams,
        tokens,
        traces,
    )

    # The entrances first: a request is matched against the routes in order, and the SDKs' one-event requests
    # are the most frequent by far (their paths match no other route, so the order changes no answer).
    routers = (
        envelope.router,
        error_page.router,
        monitor_checkins.router,
        otlp.router,
        ingest.router,
        auth.router,
        projects.router,
        project_quotas.router,
        outcomes.router,
        health.router,
        keys.router,
        activity.router,
        audit.router,
        sso.router,
        limits.router,
        organization.router,
        issue_merges.router,  # before issues_api: /issues/merge is not an issue id
        issues_api.router,
        issue_comments.router,
        teams.router,
        ownership.router,
        scrubbing.router,
        notifications.router,
        pipelines.router,
        budgets.router,
        monitors.router,
        performance.router,
        performance_inp.router,
        releases.router,
        metrics.router,
        alerts.router,
        integrations.router,
        sourcemaps.router,
        explore.router,
        sql.router,
        dashboards.router,
        annotations.router,
        subscriptions.router,
        logs.router,
        feedback.router,
        traces.router,
        operations.router,
        tokens.router,
    )
    # Each router's routes as its module built them (paths with the router's prefix, tags, dependencies):
    # `include_router` would build every route again for each app, on the first request that walks past it
    # (0.6-1.5 s of the first requests after a start here). No router has a lifespan or startup hook, and
    # nothing uses `app.dependency_overrides`, the two things an inclusion adds.
    for router in routers:
        app.router.routes.extend(router.routes)
    from api.agents.door import install_agents

    install_agents(app)  # /mcp and the OAuth routes (docs/agents.md)
    for install in installers:
        install(app)
    from api.compression import CompressedAnswers

    app.add_middleware(CompressedAnswers)  # pages and JSON in gzip when asked, never the entrances' answers
    # Outermost, so sessions, throttling and key-usage logs all see the forwarded client and scheme.
    from api.proxy import TrustedProxyMiddleware
    from stacklens.netaddr import parse_networks

    app.add_middleware(TrustedProxyMiddleware, networks=parse_networks(settings.trusted_proxies))
    return app
