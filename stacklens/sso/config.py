"""An organization's company sign-in settings (`GET/PUT /api/sso`, the settings page): read, checked, saved.

Saving checks the provider for real (its discovery document, through the outbound guard): a typo in the issuer
is answered at once, naming the field, not at the first person's sign-in. The client secret is write-only: it
is stored encrypted under the server secret and only ``has_client_secret`` is ever answered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.keys.values import decrypt_value, encrypt_value
from stacklens.control.models import SsoConfig, utcnow
from stacklens.control.roles import RANK, ROLES
from stacklens.errors import InvalidInput
from stacklens.outbound import AllowList, OutboundClient
from stacklens.public_url import absolute_link
from stacklens.settings import Settings
from stacklens.sso.oidc import ProviderError, discover

# The roles a provider's groups may map to (the design's contract): the memberships' own four roles, stored as
# mapped (stacklens.control.roles).
SSO_ROLES = ROLES
ROLE_RANK = RANK
DEFAULT_MAX_AGE = 720  # minutes: 12 h
MIN_MAX_AGE = 5
MAX_MAX_AGE = 60 * 24 * 30
CALLBACK_PATH = "/auth/sso/callback"
_DOMAIN_RE = re.compile(r"(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
_CLAIM_RE = re.compile(r"[A-Za-z0-9_:/.\-]{1,100}")
_SCOPE_RE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,100}")  # RFC 6749 §3.3 scope-token


class SsoFieldError(InvalidInput):
    """A setting is wrong: ``field`` names it (the API's 400 and the settings page show both)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class SsoSettings:
    """The settings as the API answers them (never the secret)."""

    issuer: str
    client_id: str
    has_client_secret: bool
    scopes: list[str]
    groups_claim: str
    role_map: dict[str, str]
    default_role: str
    enforce: bool
    session_max_age_minutes: int
    allowed_domains: list[str]
    callback_url: str
    configured: bool = True
    updated_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        answer = asdict(self)
        answer.pop("extra")
        return answer


@dataclass(frozen=True)
class ProviderSettings:
    """What a sign-in needs (the secret decrypted), from a saved configuration or one being tried."""

    org_id: int
    issuer: str
    client_id: str
    client_secret: str
    scopes: list[str]
    groups_claim: str
    role_map: dict[str, str]
    default_role: str
    session_max_age_minutes: int
    allowed_domains: list[str]
    enforce: bool = False


def callback_url(settings: Settings) -> str:
    """The redirect URI to register at the provider (one for every organization: the state says which)."""
    return absolute_link(settings, CALLBACK_PATH)


def outbound_client(settings: Settings) -> OutboundClient:
    """Calls to a provider: guarded like every outbound call (STACKLENS_OUTBOUND_ALLOW opens private
    addresses, for a provider inside the company network)."""
    return OutboundClient(allow=AllowList.parse(settings.outbound_allow), deadline_s=15.0)


def config_row(session: Session, org_id: int) -> SsoConfig | None:
    return session.scalar(select(SsoConfig).where(SsoConfig.org_id == org_id))


def read_settings(session: Session, settings: Settings, org_id: int) -> SsoSettings:
    """The organization's settings; ``configured`` false (and the defaults) when there are none."""
    row = config_row(session, org_id)
    if row is None:
        return SsoSettings(
            issuer="",
            client_id="",
            has_client_secret=False,
            scopes=["openid", "email", "profile"],
            groups_claim="groups",
            role_map={},
            default_role="member",
            enforce=False,
            session_max_age_minutes=DEFAULT_MAX_AGE,
            allowed_domains=[],
            callback_url=callback_url(settings),
            configured=False,
        )
    return SsoSettings(
        issuer=row.issuer,
        client_id=row.client_id,
        has_client_secret=bool(row.client_secret_encrypted),
        scopes=list(row.scopes),
        groups_claim=row.groups_claim,
        role_map=dict(row.role_map),
        default_role=row.default_role,
        enforce=row.enforce,
        session_max_age_minutes=row.session_max_age_minutes,
        allowed_domains=list(row.allowed_domains),
        callback_url=callback_url(settings),
        updated_at=row.updated_at.isoformat().replace("+00:00", "Z"),
    )


def provider_settings(session: Session, settings: Settings, org_id: int) -> ProviderSettings | None:
    row = config_row(session, org_id)
    if row is None:
        return None
    return ProviderSettings(
        org_id=org_id,
        issuer=row.issuer,
        client_id=row.client_id,
        client_secret=decrypt_value(row.client_secret_encrypted, settings)
        if row.client_secret_encrypted
        else "",
        scopes=list(row.scopes),
        groups_claim=row.groups_claim,
        role_map=dict(row.role_map),
        default_role=row.default_role,
        session_max_age_minutes=row.session_max_age_minutes,
        allowed_domains=list(row.allowed_domains),
        enforce=row.enforce,
    )


def _text(body: Mapping[str, Any], name: str, current: str, limit: int) -> str:
    value = body.get(name, current)
    if not isinstance(value, str):
        raise SsoFieldError(name, "must be text")
    value = value.strip()
    if len(value) > limit:
        raise SsoFieldError(name, f"must be at most {limit} characters")
    return value


def _issuer(value: str) -> str:
    if not value:
        raise SsoFieldError(
            "issuer", "is required: the provider's issuer URL, like https://id.example.com/realms/acme"
        )
    if not re.match(r"https?://[^/\s?#]+", value) or any(c in value for c in "?# "):
        raise SsoFieldError("issuer", "must be an http(s) URL without query or fragment")
    return value


def _role(name: str, value: Any) -> str:
    if value not in SSO_ROLES:
        raise SsoFieldError(name, f"{value!r} is not a role: use one of {', '.join(SSO_ROLES)}")
    return str(value)


def _role_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise SsoFieldError("role_map", 'must be an object of group → role, like {"sre": "owner"}')
    if len(value) > 500:
        raise SsoFieldError("role_map", "may map at most 500 groups")
    mapped: dict[str, str] = {}
    for group, role in value.items():
        if not isinstance(group, str) or not group.strip() or len(group) > 300:
            raise SsoFieldError("role_map", "group names must be text of 1 to 300 characters")
        if role not in SSO_ROLES:
            raise SsoFieldError(
                "role_map",
                f"group {group!r} maps to {role!r}, which is not a role: use one of {', '.join(SSO_ROLES)}",
            )
        mapped[group.strip()] = role
    return mapped


def _list(body: Mapping[str, Any], name: str, current: list[str]) -> list[str]:
    value = body.get(name, current)
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value) or len(value) > 100:
        raise SsoFieldError(name, "must be a list of text (at most 100)")
    return [item.strip() for item in value if item.strip()]


def _max_age(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SsoFieldError("session_max_age_minutes", "must be a whole number of minutes")
    if not MIN_MAX_AGE <= value <= MAX_MAX_AGE:
        raise SsoFieldError(
            "session_max_age_minutes", f"must be between {MIN_MAX_AGE} and {MAX_MAX_AGE} minutes (30 days)"
        )
    return value


def checked(session: Session, settings: Settings, org_id: int, body: Mapping[str, Any]) -> ProviderSettings:
    """``body`` over the saved settings (a field left out keeps its value; the secret too), every field
    checked and the provider asked for its discovery document; :class:`SsoFieldError` names what is wrong."""
    if not isinstance(body, Mapping):
        raise SsoFieldError("body", "must be a JSON object")
    current = read_settings(session, settings, org_id)
    saved = provider_settings(session, settings, org_id)
    issuer = _issuer(_text(body, "issuer", current.issuer, 500))
    client_id = _text(body, "client_id", current.client_id, 300)
    if not client_id:
        raise SsoFieldError("client_id", "is required: the client id the provider gave this application")
    secret_value = body.get("client_secret")
    if secret_value is not None and not isinstance(secret_value, str):
        raise SsoFieldError("client_secret", "must be text")
    client_secret = (secret_value or "").strip() or (saved.client_secret if saved else "")
    if not client_secret:
        raise SsoFieldError(
            "client_secret", "is required: the client secret the provider gave this application"
        )
    if len(client_secret) > 2000:
        raise SsoFieldError("client_secret", "must be at most 2,000 characters")
    scopes = _list(body, "scopes", current.scopes)
    bad = [scope for scope in scopes if not _SCOPE_RE.fullmatch(scope)]
    if bad:
        raise SsoFieldError("scopes", f"{bad[0]!r} is not a scope")
    if "openid" not in scopes:
        scopes = ["openid", *scopes]  # an ID token is only issued for the openid scope
    groups_claim = _text(body, "groups_claim", current.groups_claim, 100) or "groups"
    if not _CLAIM_RE.fullmatch(groups_claim):
        raise SsoFieldError("groups_claim", "must be a claim name (letters, digits, _ : / . -), like groups")
    role_map = _role_map(body.get("role_map", current.role_map))
    default_role = _role("default_role", body.get("default_role", current.default_role))
    max_age = _max_age(body.get("session_max_age_minutes", current.session_max_age_minutes))
    domains = [
        domain.lower().lstrip("@") for domain in _list(body, "allowed_domains", current.allowed_domains)
    ]
    for domain in domains:
        if not _DOMAIN_RE.fullmatch(domain):
            raise SsoFieldError("allowed_domains", f"{domain!r} is not a domain name, like example.com")
    enforce = body.get("enforce", current.enforce)
    if not isinstance(enforce, bool):
        raise SsoFieldError("enforce", "must be true or false")
    try:
        # Stored as the provider spells it (a trailing slash typed or not), the value its tokens' iss carries.
        issuer = discover(outbound_client(settings), issuer, fresh=True).issuer
    except ProviderError as exc:
        raise SsoFieldError(exc.field, str(exc)) from exc
    return ProviderSettings(
        org_id=org_id,
        issuer=issuer,
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        groups_claim=groups_claim,
        role_map=role_map,
        default_role=default_role,
        session_max_age_minutes=max_age,
        allowed_domains=domains,
        enforce=enforce,
    )


def save(
    session: Session,
    settings: Settings,
    org_id: int,
    body: Mapping[str, Any],
    actor_user_id: int | None = None,
) -> SsoSettings:
    """Check ``body`` (see :func:`checked`) and store it; recorded in the activity log (never the secret)."""
    provider = checked(session, settings, org_id, body)
    enforce = provider.enforce
    row = config_row(session, org_id)
    if row is None:
        row = SsoConfig(org_id=org_id)
        session.add(row)
    changed_secret = bool(body.get("client_secret"))
    row.issuer = provider.issuer
    row.client_id = provider.client_id
    row.client_secret_encrypted = encrypt_value(provider.client_secret, settings)
    row.scopes = provider.scopes
    row.groups_claim = provider.groups_claim
    row.role_map = provider.role_map
    row.default_role = provider.default_role
    row.enforce = enforce
    row.session_max_age_minutes = provider.session_max_age_minutes
    row.allowed_domains = provider.allowed_domains
    row.updated_at = utcnow()
    session.flush()
    detail = {
        "issuer": provider.issuer,
        "client_id": provider.client_id,
        "enforce": enforce,
        "secret_changed": changed_secret,
        "session_max_age_minutes": provider.session_max_age_minutes,
    }
    record_activity(session, org_id, "sso.configured", "organization", org_id, actor_user_id, detail)
    return read_settings(session, settings, org_id)


def remove(session: Session, org_id: int, actor_user_id: int | None = None) -> bool:
    """Turn company sign-in off (password sign-in is allowed again); ``False`` when there was none."""
    row = config_row(session, org_id)
    if row is None:
        return False
    session.delete(row)
    record_activity(session, org_id, "sso.removed", "organization", org_id, actor_user_id, {})
    return True
