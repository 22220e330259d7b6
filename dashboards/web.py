"""Mount the dashboards on the API's app: middleware, static files (plotly.js built with the figures' trace
types), pages."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from dashboards.context import AdminRequired, OwnerRequired, ReadOnlyRole, SignInRequired
from dashboards.rendering import render
from dashboards.security import CsrfError, SecurityHeadersMiddleware, SessionMiddleware
from stacklens.errors import Forbidden, Gone, NotFound, StackLensError, Unavailable

# Plotly asks whether pandas is there with ``sys.modules.get`` (no import of its own): a figure built while
# another thread was importing pandas found it half-initialised and the page answered 500 ("partially
# initialized module 'pandas' has no attribute 'Series'"). The server does not load pandas at all (~55 MiB
# resident it never used: clickhouse-connect's insert probe is off, stacklens/warehouse/client.py, and the
# explore downloads build Arrow arrays with polars), so no thread imports it while figures are built;
# tests/stacklens/cli/test_serve_imports.py keeps it out.

STATIC_DIR = Path(__file__).parent / "static"
# plotly.js with the trace types the figures use, of the major version the installed ``plotly`` package
# writes figures for (deploy/plotly-bundle builds it; tests/dashboards/test_plotly_bundle.py checks both):
# 1.3 MB and ~0.2 s of a browser's script instead of the package's full 4.8 MB and 1.6-3.2 s. No CDN.
PLOTLY_JS = STATIC_DIR / "vendor" / "plotly" / "plotly.min.js"


# A domain error that reaches a page: its status and the page's title (routes that can do better, such as
# the issue list keeping its filters, catch their errors themselves).
PAGE_ERRORS: tuple[tuple[type[StackLensError], int, str], ...] = (
    (NotFound, 404, "Page not found"),
    (Gone, 410, "No longer available"),
    (Forbidden, 403, "Not allowed"),
    (Unavailable, 503, "Temporarily unavailable"),
    (StackLensError, 400, "Something is wrong with this request"),
)


async def _answer(handler: Callable[..., Any], request: Request, exc: Exception) -> Response:
    """The answer of an exception handler registered before this module's (sync or async)."""
    result = handler(request, exc)
    answer: Response = await result if inspect.isawaitable(result) else result
    return answer


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/api"


def install(app: FastAPI) -> None:
    """Add sessions, security headers, static files, error pages and every dashboard router to ``app``."""
    settings = app.state.settings
    app.add_middleware(SessionMiddleware, secret=settings.secret(), max_age=settings.session_max_days * 86400)
    app.add_middleware(SecurityHeadersMiddleware)

    @app.get("/static/vendor/plotly.min.js", include_in_schema=False)
    def plotly_js() -> FileResponse:
        return FileResponse(
            PLOTLY_JS, media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"}
        )

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")

    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, _: SignInRequired) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    @app.exception_handler(OwnerRequired)
    async def _owner(request: Request, _: OwnerRequired) -> Response:
        return render(
            request,
            "error.html",
            {
                "title": "Owners only",
                "message": "Only the organization's owners can do this (its API key, single sign-on, owners).",
            },
            403,
        )

    @app.exception_handler(AdminRequired)
    async def _admin(request: Request, _: AdminRequired) -> Response:
        return render(
            request,
            "error.html",
            {
                "title": "Owners and admins only",
                "message": "Only the organization's owners and admins manage its projects, teams, alerts, "
                "members and settings.",
            },
            403,
        )

    @app.exception_handler(ReadOnlyRole)
    async def _read_only(request: Request, _: ReadOnlyRole) -> Response:
        return render(
            request,
            "error.html",
            {
                "title": "Read-only access",
                "message": "You are a viewer in this organization: you can look at everything but change "
                "nothing. An owner or admin can give you another role.",
            },
            403,
        )

    @app.exception_handler(CsrfError)
    async def _csrf(request: Request, exc: CsrfError) -> Response:
        return render(request, "error.html", {"title": "Form expired", "message": str(exc)}, 400)

    domain = app.exception_handlers.get(StackLensError)

    @app.exception_handler(StackLensError)
    async def _domain(request: Request, exc: StackLensError) -> Response:
        # The API answers with its error map (api/errors.py); a page shows the message on the error page.
        if _is_api(request) and domain is not None:
            return await _answer(domain, request, exc)
        status, title = next((s, t) for kind, s, t in PAGE_ERRORS if isinstance(exc, kind))
        return render(request, "error.html", {"title": title, "message": str(exc)}, status)

    previous = app.exception_handlers.get(StarletteHTTPException)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        # The API keeps its JSON error shape; pages get a page.
        if (
            _is_api(request)
            or request.url.path.startswith("/docs")
            or request.url.path.startswith("/openapi")
        ):
            if previous is not None:
                return await _answer(previous, request, exc)
            # Mounted without the API's handlers: the same JSON shape, built here.
            return JSONResponse(
                {"error": str(exc.detail), "detail": ""},
                status_code=exc.status_code,
                headers=getattr(exc, "headers", None),
            )
        title = "Page not found" if exc.status_code == 404 else "Something is wrong with this request"
        message = (
            "There is nothing here, or it is not yours to see." if exc.status_code == 404 else str(exc.detail)
        )
        return render(request, "error.html", {"title": title, "message": message}, exc.status_code)

    from dashboards.routers import (
        accounts,
        agent_tokens,
        alerts,
        annotations,
        budget_forms,
        budgets,
        channels,
        dashboard_sharing,
        dashboards,
        downloads,
        explore,
        feedback,
        in_app,
        integrations,
        invitations,
        issue_detail,
        issue_links,
        issue_list,
        issue_team,
        keys,
        logs,
        members,
        monitors,
        notification_settings,
        operations,
        org_settings,
        ownership,
        performance,
        performance_exports,
        performance_inp,
        performance_over_time,
        project_quota,
        project_retention,
        releases,
        replays,
        scrubbing,
        sharing,
        sourcemaps,
        sql_editor,
        sso,
        subscriptions,
        teams,
        traces,
        usage,
    )

    modules = (
        accounts,
        sso,
        invitations,
        issue_list,
        issue_detail,
        issue_team,
        keys,
        members,
        org_settings,
        sharing,
        downloads,
        budgets,  # before performance: its routes are more specific
        budget_forms,
        performance,
        performance_over_time,
        performance_exports,
        performance_inp,
        sourcemaps,
    )
    for module in (
        *modules,
        agent_tokens,
        alerts,
        channels,
        integrations,
        issue_links,
        replays,
        feedback,
        releases,
        in_app,
        project_quota,
        project_retention,
        explore,
        dashboards,
        dashboard_sharing,
        sql_editor,
        annotations,
        subscriptions,
        logs,
        traces,
        monitors,
        usage,
        teams,
        ownership,
        scrubbing,
        notification_settings,
        operations,
    ):
        # The routes as the page module built them: `include_router` would build each one again for every
        # app (see api/app.py); no page router has a lifespan or startup hook.
        app.router.routes.extend(module.router.routes)
