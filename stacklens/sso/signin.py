"""A person's sign-in through the organization's provider: from ``/auth/sso/{org}/start`` to the callback.

:func:`start` stores the sign-in under way (state hashed, nonce, PKCE verifier) and answers the provider's
address; :func:`finish` takes the callback's ``state`` and ``code``, uses the sign-in once, exchanges the
code, checks the ID token (:mod:`stacklens.sso.oidc`) and then the organization's own rules (allowed domains),
finds or creates the person (just in time, with the role their groups map to) and makes their role follow
their groups. Every outcome lands in the audit log (:mod:`stacklens.sso.audit`); a refusal's reason goes
there, and the person is told only that the sign-in did not work.

A "Test sign-in" runs the same flow over settings not saved yet (``trial``): it checks everything up to the
person's role and changes nothing.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from stacklens.control import accounts
from stacklens.control.keys.values import decrypt_value, encrypt_value
from stacklens.control.models import Membership, Organization, SsoIdentity, SsoLogin, User, utcnow
from stacklens.control.owners import locked_membership, takes_the_last_owner
from stacklens.errors import Forbidden, NotFound
from stacklens.settings import Settings
from stacklens.sso import audit
from stacklens.sso.config import (
    ROLE_RANK,
    ProviderSettings,
    callback_url,
    outbound_client,
    provider_settings,
)
from stacklens.sso.oidc import (
    ProviderError,
    TokenRefused,
    authorization_url,
    discover,
    exchange_code,
    verify_id_token,
)

PENDING_FOR = timedelta(minutes=10)  # a person takes a minute or two at the provider; ten is generous
FORGOTTEN_AFTER = timedelta(
    days=1
)  # unused sign-ins are deleted after a day (they are useless after ten minutes)


class SsoNotConfigured(NotFound):
    """The organization has no company sign-in."""


class SignInRefused(Forbidden):
    """The sign-in did not work. ``reason`` (the audit log's word) and the message are for the log and the
    owners; the person is shown :data:`PLAIN_MESSAGE`."""

    def __init__(self, reason: str, message: str, org_id: int | None = None, trial: bool = False) -> None:
        self.reason = reason
        self.org_id = org_id
        self.trial = trial
        super().__init__(message)


PLAIN_MESSAGE = (
    "Single sign-on did not work, so you are not signed in. Try again; if it keeps failing, ask an owner of "
    "your organization, who can see why in the audit log."
)


@dataclass(frozen=True)
class SignedIn:
    """A finished sign-in: who, where, with which role, and how long their session may last."""

    user: User
    org: Organization
    role: str  # the role the groups map to (owner | admin | member | viewer)
    session_max_age_minutes: int
    next_path: str
    trial: bool = False
    email: str = ""
    refresh_token: str | None = None  # kept (encrypted) with the session, refreshed while it lasts


def _hash(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8")).hexdigest()


def start(
    session: Session,
    settings: Settings,
    org: Organization,
    next_path: str = "/",
    trial: ProviderSettings | None = None,
) -> tuple[str, str]:
    """``(state, provider URL)`` of a new sign-in into ``org`` (or a test of ``trial`` settings).
    :class:`SsoNotConfigured` when the organization has none; :class:`~stacklens.sso.oidc.ProviderError`
    when the provider cannot be reached."""
    chosen = trial or provider_settings(session, settings, org.id)
    if chosen is None:
        raise SsoNotConfigured(f"{org.name} has no single sign-on")
    provider = discover(outbound_client(settings), chosen.issuer)
    state = secrets.token_urlsafe(32)
    nonce = secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)  # 64 characters: RFC 7636 asks for 43 to 128
    stored_trial: dict[str, Any] | None = None
    if trial is not None:
        stored_trial = {**asdict(trial), "client_secret": encrypt_value(trial.client_secret, settings)}
    now = utcnow()
    session.execute(delete(SsoLogin).where(SsoLogin.created_at < now - FORGOTTEN_AFTER))
    session.add(
        SsoLogin(
            org_id=org.id,
            state_hash=_hash(state),
            nonce=nonce,
            code_verifier=verifier,
            next_path=next_path[:500],
            trial=stored_trial,
            created_at=now,
        )
    )
    session.flush()
    url = authorization_url(
        provider,
        client_id=chosen.client_id,
        redirect_uri=callback_url(settings),
        scopes=chosen.scopes,
        state=state,
        nonce=nonce,
        code_verifier=verifier,
    )
    return state, url


def _claim(claims: dict[str, Any], path: str) -> Any:
    """A claim by name, or by a dotted path into nested objects (Keycloak's ``realm_access.roles``)."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def groups_of(claims: dict[str, Any], groups_claim: str) -> list[str] | None:
    """The person's groups: a list claim, or one text (some providers send a single group as text); ``None``
    when the token has no such claim at all (Google's never has): then groups say nothing about the role."""
    value = _claim(claims, groups_claim)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)][:1000]
    return None


def role_for(groups: list[str], role_map: dict[str, str], default_role: str) -> str:
    """The highest role any of ``groups`` maps to; ``default_role`` when none is mapped."""
    mapped = [role_map[group] for group in groups if group in role_map]
    return max(mapped, key=lambda role: ROLE_RANK[role]) if mapped else default_role


def _trial_settings(settings: Settings, stored: dict[str, Any]) -> ProviderSettings:
    return ProviderSettings(**{**stored, "client_secret": decrypt_value(stored["client_secret"], settings)})


def login_of_state(session: Session, state: str) -> tuple[int, bool] | None:
    """``(organization id, already used)`` of the sign-in of ``state``, without using it; ``None`` when this
    server never issued it."""
    if not isinstance(state, str) or not state or len(state) > 200:
        return None
    login = session.scalar(select(SsoLogin).where(SsoLogin.state_hash == _hash(state)))
    return None if login is None else (login.org_id, login.used_at is not None)


def _take(session: Session, state: str) -> SsoLogin:
    """The sign-in of ``state``, marked used in the same statement that checks it was not: a second callback
    with the same state (a replay, or a reload) is refused even when both arrive at once."""
    if not isinstance(state, str) or not state or len(state) > 200:
        raise SignInRefused("unknown_state", "the callback carries no state")
    login = session.scalar(select(SsoLogin).where(SsoLogin.state_hash == _hash(state)))
    if login is None:
        raise SignInRefused("unknown_state", "the callback's state was not issued by this server")
    taken = session.execute(
        update(SsoLogin).where(SsoLogin.id == login.id, SsoLogin.used_at.is_(None)).values(used_at=utcnow())
    )
    if not taken.rowcount:  # type: ignore[attr-defined]  # an UPDATE's result has rowcount
        raise SignInRefused("replayed", "this sign-in was already used (a replayed callback)", login.org_id)
    if utcnow() - login.created_at > PENDING_FOR:
        raise SignInRefused("sign_in_expired", "the sign-in took longer than ten minutes", login.org_id)
    return login


def finish(
    session: Session, settings: Settings, state: str, code: str, error: str = "", ip: str = ""
) -> SignedIn:
    """Finish a sign-in (see the module's docstring); :class:`SignInRefused` with the reason, which is
    recorded in the organization's audit log before it is raised (the caller must still commit)."""
    trial = False
    try:
        login = _take(session, state)
        trial = login.trial is not None
        return _finish(session, settings, login, code, error, ip)
    except SignInRefused as refused:
        refused.trial = refused.trial or trial
        if refused.org_id is not None:
            audit.record(
                session,
                refused.org_id,
                "signin.tested" if refused.trial else "signin.refused",
                detail={"reason": refused.reason, "message": str(refused), "ip": ip, "ok": False},
            )
        raise


def _finish(
    session: Session, settings: Settings, login: SsoLogin, code: str, error: str, ip: str
) -> SignedIn:
    org_id = login.org_id
    org = session.get(Organization, org_id)
    trial = login.trial is not None
    chosen = (
        _trial_settings(settings, login.trial)
        if login.trial
        else provider_settings(session, settings, org_id)
    )
    if org is None or chosen is None:
        raise SignInRefused("not_configured", "single sign-on was turned off during the sign-in", org_id)
    if error:
        raise SignInRefused("provider_refused", f"the provider answered error={error[:100]}", org_id)
    if not isinstance(code, str) or not code or len(code) > 2000:
        raise SignInRefused("no_code", "the callback carries no authorization code", org_id)
    client = outbound_client(settings)
    try:
        provider = discover(client, chosen.issuer)
        tokens = exchange_code(
            client,
            provider,
            client_id=chosen.client_id,
            client_secret=chosen.client_secret,
            code=code,
            redirect_uri=callback_url(settings),
            code_verifier=login.code_verifier,
        )
        claims = verify_id_token(
            client, provider, tokens.id_token, client_id=chosen.client_id, nonce=login.nonce
        )
    except ProviderError as exc:
        raise SignInRefused("provider_unreachable", str(exc), org_id) from exc
    except TokenRefused as exc:
        raise SignInRefused(exc.reason, str(exc), org_id) from exc
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SignInRefused("no_email", "the ID token has no email claim (add the `email` scope)", org_id)
    email = email.strip().lower()
    if claims.get("email_verified") is False:
        raise SignInRefused("email_not_verified", f"the provider has not verified {email}", org_id)
    domain = email.rsplit("@", 1)[1]
    if chosen.allowed_domains and domain not in chosen.allowed_domains:
        raise SignInRefused("domain_not_allowed", f"{email}: the domain {domain} is not allowed", org_id)
    found = groups_of(claims, chosen.groups_claim)
    groups = found or []
    role = role_for(groups, chosen.role_map, chosen.default_role)
    subject = str(claims["sub"])
    if trial:
        audit.record(
            session,
            org_id,
            "signin.tested",
            detail={"email": email, "role": role, "groups": groups[:50], "ip": ip, "ok": True},
        )
        user = session.scalar(select(User).where(User.email == email)) or User(email=email)
        return SignedIn(user, org, role, chosen.session_max_age_minutes, login.next_path, True, email)
    user = _person(session, org_id, chosen.issuer, subject, email, claims)
    _membership(session, org_id, user, role, groups, follow=found is not None)
    audit.record(
        session,
        org_id,
        "signin.sso",
        target_id=user.id,
        actor_user_id=user.id,
        detail={"email": email, "role": role, "groups": groups[:50], "ip": ip},
    )
    return SignedIn(
        user, org, role, chosen.session_max_age_minutes, login.next_path, False, email, tokens.refresh_token
    )


def _person(
    session: Session, org_id: int, issuer: str, subject: str, email: str, claims: dict[str, Any]
) -> User:
    """The user the provider's ``sub`` stands for; on a first sign-in the account with the same (verified)
    e-mail, or a new one without a usable password."""
    identity = session.scalar(
        select(SsoIdentity).where(
            SsoIdentity.org_id == org_id, SsoIdentity.issuer == issuer, SsoIdentity.subject == subject[:255]
        )
    )
    now = utcnow()
    if identity is not None:
        user = session.get(User, identity.user_id)
        if user is not None:
            identity.last_sign_in_at = now
            if not user.is_active:
                raise SignInRefused("account_disabled", f"{user.email}'s account is disabled", org_id)
            return user
        session.delete(identity)
        session.flush()
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        name = claims.get("name") if isinstance(claims.get("name"), str) else ""
        # No password anyone knows: an SSO person signs in through the provider (a reset sets one).
        user = User(
            email=accounts.normalise_email(email),
            name=str(name)[:200],
            password_hash=accounts.hash_password(secrets.token_urlsafe(32)),
        )
        session.add(user)
        session.flush()
    elif not user.is_active:
        raise SignInRefused("account_disabled", f"{user.email}'s account is disabled", org_id)
    session.add(
        SsoIdentity(
            org_id=org_id,
            issuer=issuer,
            subject=subject[:255],
            user_id=user.id,
            created_at=now,
            last_sign_in_at=now,
        )
    )
    session.flush()
    return user


def _membership(
    session: Session, org_id: int, user: User, role: str, groups: list[str], *, follow: bool = True
) -> None:
    """Join ``user`` with ``role`` (just in time), or make their role follow their groups (``follow``: the
    token carries the groups claim; without it a member keeps the role an owner gave them)."""
    stored = role  # the mapped role is a membership role (config checked it against control.roles)
    membership = locked_membership(session, org_id, user.id)
    if membership is None:
        session.add(Membership(org_id=org_id, user_id=user.id, role=stored))
        audit.record(
            session,
            org_id,
            "signin.member_created",
            target_id=user.id,
            actor_user_id=user.id,
            detail={"email": user.email, "role": role, "groups": groups[:50]},
        )
        return
    if membership.role == stored or not follow:
        return
    if takes_the_last_owner(session, org_id, membership, stored):
        audit.record(
            session,
            org_id,
            "signin.role_kept",
            target_id=user.id,
            actor_user_id=user.id,
            detail={"email": user.email, "role": membership.role, "mapped": role, "why": "the last owner"},
        )
        return
    previous = membership.role
    membership.role = stored
    audit.record(
        session,
        org_id,
        "signin.role_changed",
        target_id=user.id,
        actor_user_id=user.id,
        detail={"email": user.email, "from": previous, "to": stored, "mapped": role, "groups": groups[:50]},
    )
