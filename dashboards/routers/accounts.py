"""Sign-in (throttled), sign-out (ends the server-side session), password change, and the pages that lead a
signed-in user to their organizations, projects and issues."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from dashboards.context import (
    CurrentUser,
    Db,
    OrgViewer,
    Viewer,
    org_projects,
    session_lifetimes,
    user_orgs,
)
from dashboards.rendering import render
from dashboards.security import check_csrf, session_token, sign_in, sign_out
from stacklens.control import accounts
from stacklens.control.activity import record_activity
from stacklens.control.errors import AccountError
from stacklens.control.models import User
from stacklens.control.rate_limits import limits_view, recent_refusals
from stacklens.control.signin_sessions import Lifetimes, end_session, start_session
from stacklens.signin_throttle import Refusal, get_throttle
from stacklens.sso.enforcement import password_sign_in

router = APIRouter(include_in_schema=False)
USER_AGENT_MAX = 300


def _safe_next(target: str | None) -> str:
    """Only same-site paths: ``//evil.example`` and ``https://…`` would turn sign-in into an open redirect."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def client_address(request: Request) -> str:
    """The client's address (already the forwarded one when the peer is a trusted proxy)."""
    return request.client.host if request.client else ""


def begin_session(request: Request, db: Session, user: User, max_age: timedelta | None = None) -> str:
    """Start a server-side session for ``user`` and bind this browser's cookie to it; ``max_age`` cuts its
    absolute lifetime shorter (a single sign-on's session ends at the organization's maximum age, so a person
    disabled at the provider loses access by then). Returns the session's token."""
    settings = request.app.state.settings
    lifetimes = session_lifetimes(settings)
    if max_age is not None and max_age < lifetimes.absolute:
        lifetimes = Lifetimes(idle=lifetimes.idle, absolute=max_age)
    token = start_session(
        db,
        user.id,
        lifetimes,
        ip=client_address(request),
        user_agent=request.headers.get("user-agent", "")[:USER_AGENT_MAX],
    )
    sign_in(request, token)
    return token


def _record_throttle(db: Session, email: str, refusal: Refusal, ip: str) -> None:
    """Write the lock into the activity log of every organization of the account (when there is one)."""
    user = db.query(User).filter(User.email == email.strip().lower()).one_or_none()
    if user is None:
        return
    detail = {"ip": ip, "retry_after": refusal.retry_after, "scope": refusal.scope}
    for org, _role in accounts.user_memberships(db, user.id):
        record_activity(db, org.id, "sign_in.throttled", "user", user.id, None, detail)


def _too_many(request: Request, email: str, next_: str, refusal: Refusal) -> Response:
    context = {
        "next": _safe_next(next_),
        "error": f"Too many failed sign-ins. Try again in {refusal.retry_after} seconds.",
        "email": email,
    }
    response = render(request, "login.html", context, 429)
    response.headers["Retry-After"] = str(refusal.retry_after)
    return response


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
    check_csrf(request, csrf_token)
    throttle = get_throttle(request.app.state.settings)
    ip = client_address(request)
    email = email.strip()
    refusal = throttle.check(email, ip)
    if refusal is not None:
        # Refused before the password is even looked at: a lock holds for the right password too.
        return _too_many(request, email, next, refusal)
    user = accounts.authenticate_user(db, email, password) if email and password else None
    if user is None:
        refusal = throttle.failed(email, ip)
        if refusal is not None:
            _record_throttle(db, email, refusal, ip)
            return _too_many(request, email, next, refusal)
        # One message for unknown email and wrong password, so the form does not reveal who has an account.
        context = {"next": _safe_next(next), "error": "Email or password is incorrect.", "email": email}
        return render(request, "login.html", context, 401)
    throttle.succeeded(email)
    decision = password_sign_in(db, user, ip)
    if not decision.allowed:
        # The password was right, but an organization of theirs signs in only through its provider.
        names = ", ".join(org.name for org in decision.refused_by)
        context = {
            "next": _safe_next(next),
            "error": f"{names} signs in through single sign-on: use “Sign in with SSO” below.",
            "email": email,
        }
        return render(request, "login.html", context, 403)
    begin_session(request, db, user)
    return RedirectResponse(_safe_next(next), status_code=303)


@router.post("/logout")
def logout(request: Request, db: Db, csrf_token: Annotated[str, Form()] = "") -> Response:
    check_csrf(request, csrf_token)
    token = session_token(request)
    if token:
        end_session(db, token)
    sign_out(request)
    return RedirectResponse("/login", status_code=303)


def account_context(db: Session, user: User, org_slug: str, **extra: object) -> dict[str, object]:
    """The account page with the navigation of the organization it was opened from (``?org=``), else of the
    user's first organization; a user in none gets the page without organization links."""
    row = accounts.membership(db, user.id, org_slug) if org_slug else None
    if row is None:
        orgs = user_orgs(db, user.id)
        row = orgs[0] if orgs else None
    viewer = Viewer(user=user, org=row[0], role=row[1]) if row else None
    return {"user": user, "viewer": viewer, "error": None, "done": False, **extra}


@router.get("/account", response_class=HTMLResponse)
def account(request: Request, user: CurrentUser, db: Db, org: str = "") -> Response:
    return render(request, "account.html", account_context(db, user, org))


@router.post("/account/password", response_class=HTMLResponse)
def change_password(
    request: Request,
    user: CurrentUser,
    db: Db,
    current: Annotated[str, Form()] = "",
    new: Annotated[str, Form()] = "",
    org: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Every other session of the user ends; this browser gets a fresh session."""
    check_csrf(request, csrf_token)
    try:
        accounts.change_password(db, user.id, current, new)
    except AccountError as exc:
        return render(request, "account.html", account_context(db, user, org, error=str(exc)), 400)
    begin_session(request, db, user)
    return render(request, "account.html", account_context(db, user, org, done=True))


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
