"""The OpenID Connect protocol as a relying party: discovery, the authorization request (PKCE, ``state``,
``nonce``), the code exchange and the ID token's checks.

Every call to the provider goes through :class:`~stacklens.outbound.client.OutboundClient` (the SSRF guard, a
deadline, a capped answer): an owner types the issuer URL, so it is an outside address like a webhook's. The
JOSE work (signature against the provider's JWKS, ``iss``, ``aud``, ``exp``, ``iat``, ``nonce``) is
``joserfc``'s, the JOSE library of Authlib's authors (Authlib's own ``authlib.jose`` is deprecated in its
favour); PKCE's S256 challenge is Authlib's. Nothing here parses or signs a JWT by hand.

Keys rotate: a token signed with a key id the cached key set does not hold makes the key set be fetched again
(at most once a second per provider, :data:`JWKS_REFETCH_S`, so forged key ids cannot turn the callback into a
way to make StackLens hammer the provider).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jws, jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    InvalidKeyIdError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from stacklens.outbound import OutboundClient, OutboundRefused

DISCOVERY_PATH = "/.well-known/openid-configuration"
NEEDED_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")
# Asymmetric algorithms only: an HS256 token would be checked against the client secret, which the provider
# and every copy of the configuration share; none of the providers documented in docs/sso.md needs it.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY_S = 60  # clock skew allowed on exp / iat between the provider and this server
DISCOVERY_TTL_S = 300.0
JWKS_REFETCH_S = 1.0
MAX_DOCUMENT_BYTES = 512 * 1024  # discovery documents and key sets are a few KiB


class ProviderError(Exception):
    """The provider cannot be used: ``field`` names the setting at fault, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class TokenRefused(Exception):
    """An ID token (or the code exchange) failed a check; ``reason`` is the audit log's word for it."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


@dataclass(frozen=True)
class TokenSet:
    """What the token endpoint answered that StackLens keeps: the ID token, and a refresh token when the
    provider gives one (``offline_access`` with most providers)."""

    id_token: str
    refresh_token: str | None = None


@dataclass(frozen=True)
class Provider:
    """What discovery says about a provider."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algorithms: tuple[str, ...] = ALGORITHMS
    auth_methods: tuple[str, ...] = ()  # token_endpoint_auth_methods_supported (empty: not said)


def _get_json(client: OutboundClient, url: str, field: str) -> dict[str, Any]:
    try:
        answer = client.request(
            "GET", url, {"Accept": "application/json"}, max_answer_bytes=MAX_DOCUMENT_BYTES
        )
    except OutboundRefused as exc:
        raise ProviderError(field, f"{url} is not reachable from this server: {exc}") from exc
    except (httpx.HTTPError, OSError) as exc:
        raise ProviderError(field, f"{url} cannot be reached: {exc.__class__.__name__}: {exc}") from exc
    except Exception as exc:  # AnswerTooLarge and kin: say what happened, never a traceback
        raise ProviderError(field, f"{url}: {exc}") from exc
    if not answer.ok:
        raise ProviderError(field, f"{url} answered {answer.status}")
    try:
        document = json.loads(answer.body)
    except ValueError as exc:
        raise ProviderError(field, f"{url} did not answer JSON") from exc
    if not isinstance(document, dict):
        raise ProviderError(field, f"{url} did not answer a JSON object")
    return document


_discovered: dict[str, tuple[float, Provider]] = {}
_key_sets: dict[str, tuple[float, KeySet]] = {}
_refetched: dict[str, float] = {}  # jwks_uri → when an unknown key id last made it be fetched again
_lock = threading.Lock()


def discover(client: OutboundClient, issuer: str, *, fresh: bool = False) -> Provider:
    """The provider at ``issuer`` (``{issuer}/.well-known/openid-configuration``), checked: it must name
    the same issuer (OpenID Connect Discovery §4.3) and publish the endpoints a code flow needs."""
    now = time.monotonic()
    with _lock:
        cached = _discovered.get(issuer)
    if cached and not fresh and now - cached[0] < DISCOVERY_TTL_S:
        return cached[1]
    document = _get_json(client, issuer.rstrip("/") + DISCOVERY_PATH, "issuer")
    named = document.get("issuer")
    # A trailing slash typed or not is the same provider; its tokens' iss is checked against its own spelling.
    if not isinstance(named, str) or named.rstrip("/") != issuer.rstrip("/"):
        raise ProviderError(
            "issuer",
            f"the discovery document names the issuer {document.get('issuer')!r}, not {issuer!r}: "
            "enter the issuer exactly as the provider writes it",
        )
    missing = [name for name in NEEDED_ENDPOINTS if not isinstance(document.get(name), str)]
    if missing:
        raise ProviderError(
            "issuer", f"the discovery document has no {', '.join(missing)}: it is not an OpenID provider"
        )
    offered = document.get("id_token_signing_alg_values_supported")
    algorithms = tuple(a for a in ALGORITHMS if not isinstance(offered, list) or a in offered)
    if not algorithms:
        raise ProviderError(
            "issuer", f"the provider signs ID tokens only with {offered}; StackLens needs RS256, ES256 or kin"
        )
    provider = Provider(
        issuer=named,
        authorization_endpoint=document["authorization_endpoint"],
        token_endpoint=document["token_endpoint"],
        jwks_uri=document["jwks_uri"],
        algorithms=algorithms,
        auth_methods=tuple(
            m for m in document.get("token_endpoint_auth_methods_supported") or () if isinstance(m, str)
        ),
    )
    with _lock:
        _discovered[issuer] = (now, provider)
    return provider


def _key_set(client: OutboundClient, provider: Provider, *, refetch: bool = False) -> KeySet:
    now = time.monotonic()
    with _lock:
        cached = _key_sets.get(provider.jwks_uri)
        last = _refetched.get(provider.jwks_uri, -JWKS_REFETCH_S)
        if cached and refetch and now - last >= JWKS_REFETCH_S:
            _refetched[provider.jwks_uri] = now
        elif cached:
            return cached[1]
    document = _get_json(client, provider.jwks_uri, "issuer")
    try:
        keys = KeySet.import_key_set(document)  # type: ignore[arg-type]  # checked by the library
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise ProviderError("issuer", f"the provider's key set cannot be read: {exc}") from exc
    with _lock:
        _key_sets[provider.jwks_uri] = (now, keys)
    return keys


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier`` (RFC 7636)."""
    return str(create_s256_code_challenge(verifier))


def authorization_url(
    provider: Provider,
    *,
    client_id: str,
    redirect_uri: str,
    scopes: list[str],
    state: str,
    nonce: str,
    code_verifier: str,
) -> str:
    """Where the browser goes to sign in at the provider."""
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": " ".join(scopes),
        "state": state,
        "nonce": nonce,
        "code_challenge": pkce_challenge(code_verifier),
        "code_challenge_method": "S256",
    }
    separator = "&" if "?" in provider.authorization_endpoint else "?"
    return provider.authorization_endpoint + separator + urlencode(query)


def _auth_methods(provider: Provider) -> tuple[str, ...]:
    """The client authentication methods to try, in order: client_secret_basic first (the default of OAuth 2.0
    and OpenID Connect when a client registered none), then client_secret_post, as far as the provider says it
    takes them."""
    offered = provider.auth_methods or ("client_secret_basic",)
    return tuple(m for m in ("client_secret_basic", "client_secret_post") if m in offered) or (
        "client_secret_basic",
        "client_secret_post",
    )


def _token_request(
    client: OutboundClient, provider: Provider, form: dict[str, str], client_id: str, secret: str, method: str
) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if method == "client_secret_basic":
        # RFC 6749 §2.3.1: each part form-encoded before the pair is base64-encoded.
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    else:
        form = {**form, "client_id": client_id, "client_secret": secret}
    try:
        answer = client.post(
            provider.token_endpoint,
            urlencode(form).encode("ascii"),
            headers,
            max_answer_bytes=MAX_DOCUMENT_BYTES,
        )
    except OutboundRefused as exc:
        raise TokenRefused("provider_unreachable", f"the token endpoint is not reachable: {exc}") from exc
    except Exception as exc:  # httpx errors, deadline, a too large answer: a refusal with its reason
        raise TokenRefused("provider_unreachable", f"the token endpoint failed: {exc}") from exc
    try:
        body = json.loads(answer.body)
    except ValueError:
        body = {}
    return answer.status, body if isinstance(body, dict) else {}


def exchange_code(
    client: OutboundClient,
    provider: Provider,
    *,
    client_id: str,
    client_secret: str,
    code: str,
    redirect_uri: str,
    code_verifier: str,
) -> TokenSet:
    """The tokens the provider gives for ``code``. The client authenticates with client_secret_basic or,
    when the provider refuses that client (``invalid_client``: it was registered for the other method),
    client_secret_post; a provider checks the client before the code, so the code is still unused then."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": code_verifier,
    }
    status: int = 0
    body: dict[str, Any] = {}
    for method in _auth_methods(provider):
        status, body = _token_request(client, provider, form, client_id, client_secret, method)
        if body.get("error") != "invalid_client":
            break
    if not 200 <= status < 300:
        raise TokenRefused(
            "code_exchange_failed", f"the token endpoint answered {status} {body.get('error') or ''}"
        )
    id_token = body.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise TokenRefused("no_id_token", "the token endpoint answered no id_token (is `openid` a scope?)")
    refresh = body.get("refresh_token")
    return TokenSet(id_token, refresh if isinstance(refresh, str) and refresh else None)


def refresh(
    client: OutboundClient, provider: Provider, *, client_id: str, client_secret: str, refresh_token: str
) -> TokenSet | None:
    """Refresh at the provider: the new tokens (a rotated refresh token, or the same one), or ``None`` when
    the provider refuses (``invalid_grant``: the person was disabled, signed out or the grant revoked).
    :class:`TokenRefused` (``provider_unreachable``) when it cannot be asked: that is not a refusal."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    status: int = 0
    body: dict[str, Any] = {}
    for method in _auth_methods(provider):
        status, body = _token_request(client, provider, form, client_id, client_secret, method)
        if body.get("error") != "invalid_client":
            break
    if 200 <= status < 300:
        renewed = body.get("refresh_token")
        return TokenSet(
            str(body.get("id_token") or ""), renewed if isinstance(renewed, str) else refresh_token
        )
    if status in (400, 401) and body.get("error") in (
        "invalid_grant",
        "unauthorized_client",
        "invalid_client",
    ):
        return None
    raise TokenRefused("provider_unreachable", f"the token endpoint answered {status} to a refresh")


def _kid(id_token: str) -> str | None:
    try:
        header = jws.extract_compact(id_token.encode("ascii")).protected
    except (JoseError, ValueError, UnicodeEncodeError) as exc:
        raise TokenRefused("malformed_token", f"the ID token is not a signed JWT: {exc}") from exc
    kid = header.get("kid")
    return kid if isinstance(kid, str) else None


def verify_id_token(
    client: OutboundClient,
    provider: Provider,
    id_token: str,
    *,
    client_id: str,
    nonce: str,
    now: int | None = None,
) -> dict[str, Any]:
    """The ID token's claims once its signature (the provider's published keys), ``iss``, ``aud``, ``exp``,
    ``iat``, ``sub`` and ``nonce`` all hold; else :class:`TokenRefused` with the reason."""
    kid = _kid(id_token)
    keys = _key_set(client, provider)
    if kid is not None and not _has_kid(keys, kid):
        keys = _key_set(client, provider, refetch=True)  # a rotated key: fetch the set again
    try:
        token = jwt.decode(id_token, keys, algorithms=list(provider.algorithms))
    except (BadSignatureError, InvalidKeyIdError) as exc:
        raise TokenRefused("bad_signature", f"the ID token's signature does not verify: {exc}") from exc
    except JoseError as exc:
        raise TokenRefused("bad_signature", f"the ID token cannot be verified: {exc}") from exc
    return check_claims(token.claims, issuer=provider.issuer, client_id=client_id, nonce=nonce, now=now)


def _has_kid(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)


_CLAIM_REASONS = {
    "iss": "wrong_issuer",
    "aud": "wrong_audience",
    "nonce": "nonce_mismatch",
    "azp": "wrong_audience",
}


def check_claims(
    claims: Mapping[str, Any], *, issuer: str, client_id: str, nonce: str, now: int | None = None
) -> dict[str, Any]:
    """``claims`` when they are an ID token's for this client and this sign-in (OpenID Connect Core
    §3.1.3.7); else :class:`TokenRefused` naming the claim."""
    registry = jwt.JWTClaimsRegistry(
        now=now,
        leeway=LEEWAY_S,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(dict(claims))
    except ExpiredTokenError as exc:
        raise TokenRefused("expired", "the ID token has expired") from exc
    except MissingClaimError as exc:
        raise TokenRefused("missing_claim", f"the ID token lacks a claim: {exc}") from exc
    except InvalidClaimError as exc:
        claim = str(getattr(exc, "claim", "") or "")
        reason = _CLAIM_REASONS.get(claim, "issued_in_future" if claim == "iat" else f"invalid_{claim}")
        raise TokenRefused(reason, f"the ID token's {claim or 'claims'} is not valid: {exc}") from exc
    except JoseError as exc:
        raise TokenRefused("invalid_claims", f"the ID token's claims are not valid: {exc}") from exc
    audiences = claims.get("aud")
    if isinstance(audiences, list) and len(audiences) > 1 and claims.get("azp") != client_id:
        raise TokenRefused(
            "wrong_audience", "the ID token is for several audiences and not authorized for us"
        )
    return dict(claims)
