"""Sign-in, sign-out and the pages that lead a signed-in user to their organizations, projects and issues."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentUser, Db, OrgViewer, org_projects, user_orgs
from dashboards.rendering import render
from dashboards.security import check_csrf, sign_in, sign_out
from stacklens.control.rate_limits import limits_view, recent_refusals

router = APIRouter(include_in_schema=False)


def _safe_next(target: str | None) -> str:
    """Only same-site paths: ``//evil.example`` and ``https://…`` would turn sign-in into an open redirect."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str | None = None) -> Response:
    return render(request, "login.html", {"next": _safe_next(next), "error": None, "email": ""})


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    db: Db,
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
) -> Response:
    from stacklens.control.accounts import authenticate_user

    check_csrf(request, csrf_token)
    user = authenticate_user(db, email.strip(), password) if email.strip() and password else None
    if user is None:
        # One message for unknown email and wrong password, so the form does not reveal who has an account.
        context = {"next": _safe_next(next), "error": "Email or password is incorrect.", "email": email}
        return render(request, "login.html", context, 401)
    sign_in(request, user.id)
    return RedirectResponse(_safe_next(next), status_code=303)


@router.post("/logout")
def logout(request: Request, csrf_token: Annotated[str, Form()] = "") -> Response:
    check_csrf(request, csrf_token)
    sign_out(request)
    return RedirectResponse("/login", status_code=303)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, user: CurrentUser, db: Db) -> Response:
    orgs = user_orgs(db, user.id)
    if len(orgs) == 1:
        return RedirectResponse(f"/orgs/{orgs[0][0].slug}", status_code=303)
    return render(request, "home.html", {"user": user, "orgs": orgs})


@router.get("/orgs/{org_slug}", response_class=HTMLResponse)
def organization(request: Request, viewer: OrgViewer, db: Db) -> Response:
    projects = org_projects(db, viewer.org.id)
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "projects": projects,
        "limits": limits_view(db, viewer.org.id),
        "refusals": recent_refusals(db, viewer.org.id),
    }
    return render(request, "organization.html", context)
