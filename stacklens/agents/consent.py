"""The member's approval of an MCP client (docs/agents.md, "Connect with OAuth").

`/oauth/authorize` (the SDK's handler) checks the client, its redirect URI and the PKCE challenge, then sends
the browser to `/oauth/consent` with the request signed under the server secret (nothing stored until the
member decides; ten minutes to decide). The consent page signs the member in (password or single sign-on),
shows the client, the scopes and the organization, and on approval issues a one-time code and sends the
browser back to the client's redirect URI with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from stacklens.agents.oauth_store import CODE_LIFETIME, Grant, client_name, issue_code
from stacklens.agents.tokens import SCOPES
from stacklens.control.models import utcnow
from stacklens.errors import InvalidInput
from stacklens.settings import Settings

MAX_AGE = timedelta(minutes=10)
SALT = "stacklens.oauth.consent"


@dataclass(frozen=True)
class ConsentRequest:
    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    state: str | None
    scopes: list[str]
    resource: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "redirect_uri_explicit": self.redirect_uri_explicit,
            "code_challenge": self.code_challenge,
            "state": self.state,
            "scopes": self.scopes,
            "resource": self.resource,
        }


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.secret(), salt=SALT)


def requested_scopes(scopes: list[str] | None) -> list[str]:
    """What a client asked for, known scopes only; ``read`` when it named none (write must be asked)."""
    chosen = [s for s in (scopes or []) if s in SCOPES]
    return ["read", "write"] if "write" in chosen else ["read"]


def sign(settings: Settings, request: ConsentRequest) -> str:
    return str(_serializer(settings).dumps(request.as_dict()))


def read(settings: Settings, blob: str) -> ConsentRequest:
    try:
        data = _serializer(settings).loads(blob, max_age=int(MAX_AGE.total_seconds()))
    except BadSignature as exc:
        raise InvalidInput("request: this approval link is not valid or older than ten minutes") from exc
    return ConsentRequest(**data)


def redirect_with(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


def approve(session: Session, request: ConsentRequest, org_id: int, user_id: int, scopes: list[str]) -> str:
    """Issue the code for what the member approved (at most what was asked); the redirect URL to send to."""
    granted = [s for s in request.scopes if s in scopes] or ["read"]
    code = issue_code(
        session,
        Grant(
            client_id=request.client_id,
            org_id=org_id,
            user_id=user_id,
            scopes=granted,
            code_challenge=request.code_challenge,
            redirect_uri=request.redirect_uri,
            redirect_uri_explicit=request.redirect_uri_explicit,
            resource=request.resource,
            expires_at=utcnow() + CODE_LIFETIME,
        ),
    )
    params = {"code": code}
    if request.state:
        params["state"] = request.state
    return redirect_with(request.redirect_uri, params)


def deny(request: ConsentRequest) -> str:
    params = {"error": "access_denied", "error_description": "the member did not approve"}
    if request.state:
        params["state"] = request.state
    return redirect_with(request.redirect_uri, params)


def name_of(session: Session, request: ConsentRequest) -> str:
    return client_name(session, request.client_id)
