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
    app.include_router(envelope.router)
    app.include_router(error_page.router)
    app.include_router(monitor_checkins.router)
    app.include_router(otlp.router)
    app.include_router(ingest.router)
    app.include_router(auth.router)
    app.include_router(projects.router)
    app.include_router(project_quotas.router)
    app.include_router(outcomes.router)
    app.include_router(health.router)
    app.include_router(keys.router)
    app.include_router(activity.router)
    app.include_router(audit.router)
    app.include_router(sso.router)
    app.include_router(limits.router)
    app.include_router(organization.router)
    app.include_router(issue_merges.router)  # before issues_api: /issues/merge is not an issue id
    app.include_router(issues_api.router)
    app.include_router(issue_comments.router)
    app.include_router(teams.router)
    app.include_router(ownership.router)
    app.include_router(scrubbing.router)
    app.include_router(notifications.router)
    app.include_router(pipelines.router)
    app.include_router(budgets.router)
    app.include_router(monitors.router)
    app.include_router(performance.router)
    app.include_router(performance_inp.router)
    app.include_router(releases.router)
    app.include_router(metrics.router)
    app.include_router(alerts.router)
    app.include_router(integrations.router)
    app.include_router(sourcemaps.router)
    app.include_router(explore.router)
    app.include_router(sql.router)
    app.include_router(dashboards.router)
    app.include_router(annotations.router)
    app.include_router(subscriptions.router)
    app.include_router(logs.router)
    app.include_router(feedback.router)
    app.include_router(traces.router)
    app.include_router(operations.router)
    app.include_router(tokens.router)
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
