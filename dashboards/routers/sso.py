"""Company sign-in in the browser: "Sign in with SSO" (by e-mail domain or organization), the start and the
callback of the provider's flow, the owners' settings section (with "Test sign-in") and the audit page.

The browser is bound to its sign-in: the state goes into the signed session cookie as well as the control
store, and the callback must bring both (a callback URL carried to another browser signs nobody in there —
login CSRF). The cookie is SameSite=Lax, which a top-level GET from the provider still carries.

Leaving for the provider from a form goes through a page that moves on by itself (``sso_continue.html``): the
pages' Content-Security-Policy allows forms to submit only to this site (``form-action 'self'``), and browsers
apply that to the redirects a form submission follows as well.
"""

from __future__ import annotations

import hmac
import json
from datetime import timedelta
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.routers.accounts import begin_session, client_address
from dashboards.security import check_csrf
from stacklens.control.models import Organization, SsoConfig
from stacklens.errors import StackLensError
from stacklens.sso import audit
from stacklens.sso.config import SSO_ROLES, SsoFieldError, callback_url, checked, read_settings, remove, save
from stacklens.sso.enforcement import break_glass_accounts
from stacklens.sso.oidc import ProviderError
from stacklens.sso.sessions import attach
from stacklens.sso.signin import PLAIN_MESSAGE, SignInRefused, SsoNotConfigured, finish, login_of_state, start

router = APIRouter(include_in_schema=False)
SETTINGS = "/orgs/{org_slug}/settings/sso"
AUDIT = "/orgs/{org_slug}/settings/audit"
STATE_KEY = "sso_state"


def _safe_next(target: str | None) -> str:
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target[:500]
    return "/"


def _org(db: Session, slug: str) -> Organization | None:
    return db.scalar(select(Organization).where(Organization.slug == slug))


def _refused_page(request: Request, message: str = PLAIN_MESSAGE, status: int = 403) -> Response:
    return render(
        request, "login.html", {"next": "/", "error": message, "email": "", "sso_error": True}, status
    )


def _continue(request: Request, url: str) -> Response:
    return render(request, "sso_continue.html", {"url": url})


@router.get("/auth/sso", response_class=HTMLResponse)
def find_organization(request: Request, db: Db, who: str = "", next: str = "/") -> Response:
    """ "Sign in with SSO": ``who`` is a work e-mail (its domain picks the organization that allows it) or an
    organization's slug or name."""
    who = who.strip()[:320]
    if not who:
        return _refused_page(request, "Enter your work e-mail or your organization's name.", 400)
    if "@" in who:
        domain = who.rsplit("@", 1)[1].lower()
        candidates = [
            org
            for org, domains in db.execute(
                select(Organization, SsoConfig.allowed_domains).join(
                    SsoConfig, SsoConfig.org_id == Organization.id
                )
            )
            if domain in (domains or [])
        ]
    else:
        candidates = list(
            db.scalars(
                select(Organization)
                .join(SsoConfig, SsoConfig.org_id == Organization.id)
                .where((Organization.slug == who.lower()) | (func.lower(Organization.name) == who.lower()))
            )
        )
    if len(candidates) != 1:
        message = (
            "No organization signs in with single sign-on for that address or name."
            if not candidates
            else "Several organizations sign in with that domain: enter your organization's name instead."
        )
        context = {"next": _safe_next(next), "error": message, "email": "", "sso_who": who, "sso_error": True}
        return render(request, "login.html", context, 404 if not candidates else 409)
    target = f"/auth/sso/{candidates[0].slug}/start?next={_safe_next(next)}"
    return _continue(request, target)


@router.get("/auth/sso/{org_slug}/start")
def start_sign_in(request: Request, org_slug: str, db: Db, next: str = "/", moved: bool = False) -> Response:
    """Send the browser to the organization's provider (authorization code, PKCE, state, nonce)."""
    callback_at = urlsplit(callback_url(request.app.state.settings))
    if request.url.netloc != callback_at.netloc and not moved:
        # The provider sends the browser back to the callback's host: start there, so the cookie holding the
        # state is the one that comes back (a start on localhost with the callback on 127.0.0.1 would be
        # refused as another browser's). Once only: a proxy that rewrites Host must not make this a loop.
        query = urlencode({"next": _safe_next(next), "moved": "true"})
        target = f"{callback_at.scheme}://{callback_at.netloc}/auth/sso/{quote(org_slug)}/start?{query}"
        return RedirectResponse(target, status_code=303)
    org = _org(db, org_slug)
    if org is None:
        return _refused_page(request, "No organization signs in with single sign-on under that name.", 404)
    try:
        state, url = start(db, request.app.state.settings, org, _safe_next(next))
    except SsoNotConfigured:
        return _refused_page(request, f"{org.name} does not sign in with single sign-on.", 404)
    except ProviderError as exc:
        audit.record(
            db, org.id, "signin.refused", detail={"reason": "provider_unreachable", "message": str(exc)}
        )
        return _refused_page(
            request, "Your organization's identity provider cannot be reached right now.", 502
        )
    request.scope["session"][STATE_KEY] = state
    return RedirectResponse(url, status_code=303)


@router.get("/auth/sso/callback", response_class=HTMLResponse)
def callback(
    request: Request, db: Db, state: str = "", code: str = "", error: str = "", error_description: str = ""
) -> Response:
    """The provider sends the browser back here; a refusal shows a plain message, its reason is audited."""
    expected = str(request.scope["session"].pop(STATE_KEY, "") or "")
    settings = request.app.state.settings
    ip = client_address(request)
    if not expected or not state or not hmac.compare_digest(expected, state[:200]):
        # Not this browser's sign-in: refuse before the state is used, so the sign-in stays usable by the
        # browser that started it; audited under its organization when the state is one of ours.
        _audit_foreign_state(db, state, ip)
        return _refused_page(request)
    try:
        done = finish(db, settings, state, code, error, ip)
    except SignInRefused as refused:
        if refused.trial and refused.org_id is not None:
            return _after_test(request, db, refused.org_id, False, str(refused))
        return _refused_page(request)
    if done.trial:
        said = f"Test sign-in worked: {done.email} would sign in as {done.role}."
        return _after_test(request, db, done.org.id, True, said)
    token = begin_session(request, db, done.user, timedelta(minutes=done.session_max_age_minutes))
    attach(db, settings, token, done.org.id, done.refresh_token)
    target = done.next_path if done.next_path != "/" else f"/orgs/{done.org.slug}"
    return RedirectResponse(_safe_next(target), status_code=303)


def _audit_foreign_state(db: Session, state: str, ip: str) -> None:
    found = login_of_state(db, state)
    if found is None:
        return
    org_id, used = found
    if used:
        detail = {
            "reason": "replayed",
            "message": "this sign-in was already used (a replayed callback)",
            "ip": ip,
        }
    else:
        detail = {"reason": "browser_mismatch", "message": "the callback came to another browser", "ip": ip}
    audit.record(db, org_id, "signin.refused", detail=detail)


def _after_test(request: Request, db: Session, org_id: int, ok: bool, message: str) -> Response:
    org = db.get(Organization, org_id)
    request.scope["session"]["sso_test"] = {"ok": ok, "message": message[:500]}
    slug = org.slug if org else ""
    return RedirectResponse(SETTINGS.format(org_slug=slug) + "#sso-test", status_code=303)


def _settings_context(request: Request, viewer: Any, db: Session, **extra: Any) -> dict[str, Any]:
    current = read_settings(db, request.app.state.settings, viewer.org.id)
    return {
        "viewer": viewer,
        "user": viewer.user,
        "sso": current,
        "roles": SSO_ROLES,
        "role_map_text": "\n".join(f"{group} = {role}" for group, role in current.role_map.items()),
        "break_glass": break_glass_accounts(db, viewer.org.id),
        "test": request.scope["session"].pop("sso_test", None),
        "error": None,
        "field": None,
        "form": None,
        "saved": False,
        **extra,
    }


@router.get(SETTINGS, response_class=HTMLResponse)
def sso_settings(request: Request, viewer: OrgViewer, db: Db, saved: bool = False) -> Response:
    viewer.require_owner()
    return render(request, "sso_settings.html", _settings_context(request, viewer, db, saved=saved))


def _role_map(text: str) -> dict[str, str] | str:
    """``group = role`` lines (or a JSON object) → the map; the raw text when a line is not that shape (the
    check then names the field)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, dict) else text
    mapped: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        group, sep, role = line.rpartition("=")
        if not sep or not group.strip():
            return text
        mapped[group.strip()] = role.strip()
    return mapped


def _form_body(form: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "issuer": str(form.get("issuer") or ""),
        "client_id": str(form.get("client_id") or ""),
        "scopes": str(form.get("scopes") or ""),
        "groups_claim": str(form.get("groups_claim") or ""),
        "role_map": _role_map(str(form.get("role_map") or "")),
        "default_role": str(form.get("default_role") or "member"),
        "enforce": form.get("enforce") == "on",
        "allowed_domains": str(form.get("allowed_domains") or ""),
    }
    secret = str(form.get("client_secret") or "")
    if secret:
        body["client_secret"] = secret
    age = str(form.get("session_max_age_minutes") or "").strip()
    body["session_max_age_minutes"] = int(age) if age.isdigit() else age
    return body


async def _submitted(request: Request) -> dict[str, Any]:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    return _form_body(form)


@router.post(SETTINGS, response_class=HTMLResponse)
async def save_sso_settings(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """Save (the provider is asked for its discovery document first); a wrong field is named on the page."""
    viewer.require_owner()
    body = await _submitted(request)
    try:
        save(db, request.app.state.settings, viewer.org.id, body, viewer.user.id)
    except SsoFieldError as exc:
        context = _settings_context(request, viewer, db, error=str(exc), field=exc.field, form=body)
        return render(request, "sso_settings.html", context, 400)
    return RedirectResponse(SETTINGS.format(org_slug=viewer.org.slug) + "?saved=true", status_code=303)


@router.post(SETTINGS + "/test", response_class=HTMLResponse)
async def test_sso_settings(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """ "Test sign-in": the flow over the form's settings, before they are saved; nothing changes."""
    viewer.require_owner()
    body = await _submitted(request)
    settings = request.app.state.settings
    try:
        trial = checked(db, settings, viewer.org.id, body)
        state, url = start(db, settings, viewer.org, "/", trial=trial)
    except SsoFieldError as exc:
        context = _settings_context(request, viewer, db, error=str(exc), field=exc.field, form=body)
        return render(request, "sso_settings.html", context, 400)
    except (ProviderError, StackLensError) as exc:
        context = _settings_context(request, viewer, db, error=f"issuer: {exc}", field="issuer", form=body)
        return render(request, "sso_settings.html", context, 400)
    request.scope["session"][STATE_KEY] = state
    return _continue(request, url)


@router.post(SETTINGS + "/remove")
async def remove_sso_settings(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_owner()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    remove(db, viewer.org.id, viewer.user.id)
    return RedirectResponse(SETTINGS.format(org_slug=viewer.org.slug), status_code=303)


@router.get(AUDIT, response_class=HTMLResponse)
def audit_page(
    request: Request, viewer: OrgViewer, db: Db, action: str = "signin", cursor: str = ""
) -> Response:
    """Owners: sign-ins, refusals with their reasons, role changes and break-glass uses, and agents' tool
    calls (``action=mcp``, docs/agents.md), newest first."""
    viewer.require_owner()
    action = (
        action
        if action in ("signin", "signin.refused", "signin.break_glass", "signin.role_changed", "sso", "mcp")
        else "signin"
    )
    try:
        rows, next_cursor = audit.list_audit(db, viewer.org.id, action, cursor or None, 100)
    except (StackLensError, ValueError):
        rows, next_cursor = audit.list_audit(db, viewer.org.id, action, None, 100)
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "rows": rows,
        "next_cursor": next_cursor,
        "action": action,
        "reasons": audit.REASONS,
        "break_glass": break_glass_accounts(db, viewer.org.id),
    }
    return render(request, "audit.html", context)
