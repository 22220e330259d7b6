"""The invited person's side: open an invitation link, accept it signed in, or create the account from it.

An unknown or forged token gets the same 404 page as any other missing page; an expired, withdrawn or used
one says so (410), so the person knows to ask for a new link.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from itsdangerous import Signer

from dashboards.context import Db, SignInRequired, current_user
from dashboards.rendering import render
from dashboards.routers.accounts import begin_session
from dashboards.security import check_csrf
from stacklens.control import invitations
from stacklens.control.errors import AccountError
from stacklens.control.models import User

router = APIRouter(include_in_schema=False)
PAGE = "/invitations/{token}"


def _signer(request: Request) -> Signer:
    return invitations.signer_for(request.app.state.settings.secret())


def _signed_in(request: Request, db: Db) -> User | None:
    try:
        return current_user(request, db)
    except SignInRequired:
        return None


def _page(request: Request, db: Db, token: str, error: str | None = None, status: int = 200) -> Response:
    try:
        found = invitations.open_invitation(db, _signer(request), token)
    except invitations.InvitationGone as exc:
        return render(request, "error.html", {"title": "Invitation unavailable", "message": str(exc)}, 410)
    if found is None:
        raise HTTPException(status_code=404, detail="Not Found")
    context = {
        "invitation": found.invitation,
        "organization": found.organization,
        "user": _signed_in(request, db),
        "token": token,
        "error": error,
    }
    return render(request, "invitation.html", context, status)


@router.get(PAGE, response_class=HTMLResponse)
def invitation(request: Request, db: Db, token: str) -> Response:
    return _page(request, db, token)


@router.post(PAGE + "/accept", response_class=HTMLResponse)
def accept(request: Request, db: Db, token: str, csrf_token: Annotated[str, Form()] = "") -> Response:
    check_csrf(request, csrf_token)
    user = _signed_in(request, db)
    if user is None:
        return RedirectResponse(f"/login?next=/invitations/{token}", status_code=303)
    try:
        organization = invitations.accept_invitation(db, _signer(request), token, user)
    except invitations.InvitationGone:
        return _page(request, db, token)
    except AccountError as exc:
        return _page(request, db, token, str(exc), 400)
    return RedirectResponse(f"/orgs/{organization.slug}", status_code=303)


@router.post(PAGE + "/account", response_class=HTMLResponse)
def create_account(
    request: Request,
    db: Db,
    token: str,
    password: Annotated[str, Form()] = "",
    confirm: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if password != confirm:
        return _page(request, db, token, "the two passwords differ", 400)
    try:
        user, organization = invitations.accept_with_new_account(db, _signer(request), token, password)
    except invitations.InvitationGone:
        return _page(request, db, token)
    except AccountError as exc:
        return _page(request, db, token, str(exc), 400)
    begin_session(request, db, user)
    return RedirectResponse(f"/orgs/{organization.slug}", status_code=303)
