"""Sign-in through a real OpenID Connect provider (oidc-provider on loopback): just-in-time members with the
mapped role, the role following the groups, and every forged claim (signature, iss, aud, exp, nonce), a
replayed callback and a domain not allowed refused with the reason in the audit log. A rotated signing key is
fetched again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import Membership, Organization, SsoIdentity, User
from stacklens.settings import Settings
from stacklens.sso import audit, oidc
from stacklens.sso.config import save
from stacklens.sso.signin import SignInRefused, finish, start
from tests.stacklens.sso.provider import (
    CALLBACK,
    OidcProvider,
    callback_params,
    new_org,
    oidc_provider,
    sso_settings,
)

__all__ = ["oidc_provider"]
PEOPLE = {
    "ada": {"email": "ada@acme.test", "email_verified": True, "name": "Ada", "groups": ["sre", "staff"]},
    "bob": {"email": "bob@acme.test", "email_verified": True, "groups": ["staff"]},
    "eve": {"email": "eve@elsewhere.test", "email_verified": True, "groups": ["sre"]},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Settings:
    return sso_settings(tmp_path_factory.mktemp("sso"), warehouse_url)


@pytest.fixture
def sso(store: Settings, oidc_provider: OidcProvider) -> Iterator[dict[str, Any]]:
    """A new organization with single sign-on through the provider (its own client)."""
    org = new_org(store, "Acme SSO")
    # client_secret_basic here (the default a provider gives a client); the page tests register for
    # client_secret_post, which StackLens falls back to when the provider answers invalid_client.
    client_id, secret = oidc_provider.register(CALLBACK, "client_secret_basic")
    oidc_provider.set_users(PEOPLE)
    oidc_provider.reset()
    with session_scope(store) as session:
        save(
            session,
            store,
            org["org_id"],
            {
                "issuer": oidc_provider.issuer,
                "client_id": client_id,
                "client_secret": secret,
                "scopes": ["openid", "email", "profile", "groups"],
                "groups_claim": "groups",
                "role_map": {"sre": "owner", "leads": "admin", "staff": "member"},
                "default_role": "viewer",
                "allowed_domains": ["acme.test"],
            },
        )
    yield {"settings": store, "org": org, "provider": oidc_provider}
    oidc_provider.reset()


def _sign_in(sso: dict[str, Any], login: str) -> tuple[str, str]:
    """Start a sign-in, sign in at the provider; ``(state, code)`` of the callback."""
    settings = sso["settings"]
    with session_scope(settings) as session:
        org = session.get(Organization, sso["org"]["org_id"])
        state, url = start(session, settings, org, "/")
    assert "code_challenge=" in url and "code_challenge_method=S256" in url and "nonce=" in url
    params = callback_params(sso["provider"].sign_in(url, login, CALLBACK))
    assert params["state"] == state
    return state, params["code"]


def _finish(sso: dict[str, Any], state: str, code: str):
    settings = sso["settings"]
    with session_scope(settings) as session:
        try:
            done = finish(session, settings, state, code, ip="203.0.113.9")
            return done.user.email, done.role, None
        except SignInRefused as refused:
            return None, None, refused


def _audit(sso: dict[str, Any], action: str = "signin") -> list[audit.AuditRow]:
    with session_scope(sso["settings"]) as session:
        return audit.list_audit(session, sso["org"]["org_id"], action)[0]


def _role(sso: dict[str, Any], email: str) -> str | None:
    with session_scope(sso["settings"]) as session:
        return session.scalar(
            select(Membership.role)
            .join(User, User.id == Membership.user_id)
            .where(User.email == email, Membership.org_id == sso["org"]["org_id"])
        )


def test_first_sign_in_creates_the_member_with_the_mapped_role_and_groups_move_it(sso) -> None:
    email, role, refused = _finish(sso, *_sign_in(sso, "ada"))
    assert refused is None and (email, role) == ("ada@acme.test", "owner")
    assert _role(sso, "ada@acme.test") == "owner"
    with session_scope(sso["settings"]) as session:
        identity = session.scalar(select(SsoIdentity).where(SsoIdentity.subject == "ada"))
        assert identity is not None and identity.issuer == sso["provider"].issuer
    actions = [row.action for row in _audit(sso)]
    assert actions[:2] == ["signin.sso", "signin.member_created"]

    # Ada leaves the SRE group at the provider: the next sign-in makes her a member.
    sso["provider"].set_users({"ada": {**PEOPLE["ada"], "groups": ["staff"]}})
    assert _finish(sso, *_sign_in(sso, "ada"))[:2] == ("ada@acme.test", "member")
    assert _role(sso, "ada@acme.test") == "member"
    changed = _audit(sso, "signin.role_changed")[0]
    assert (changed.detail["from"], changed.detail["to"], changed.email) == (
        "owner",
        "member",
        "ada@acme.test",
    )

    # A person in no mapped group gets the default role: viewer, stored as viewer (read-only).
    sso["provider"].set_users({"bob": {**PEOPLE["bob"], "groups": ["interns"]}})
    assert _finish(sso, *_sign_in(sso, "bob"))[:2] == ("bob@acme.test", "viewer")
    assert _role(sso, "bob@acme.test") == "viewer"


def test_each_of_the_four_roles_is_stored_as_mapped_and_follows_the_groups(sso) -> None:
    """admin and viewer are memberships' own roles now, not member in disguise: what the map says is kept."""
    for groups, role in (
        (["leads"], "admin"),
        (["staff", "leads"], "admin"),
        ([], "viewer"),
        (["staff"], "member"),
    ):
        sso["provider"].set_users({"bob": {**PEOPLE["bob"], "groups": groups}})
        assert _finish(sso, *_sign_in(sso, "bob"))[:2] == ("bob@acme.test", role), groups
        assert _role(sso, "bob@acme.test") == role, groups
    changes = [(row.detail["from"], row.detail["to"]) for row in _audit(sso, "signin.role_changed")]
    assert changes == [("viewer", "member"), ("admin", "viewer")]  # newest first; joined as admin


FORGERIES = [
    ({"sign_with": "foreign"}, "bad_signature"),
    ({"claims": {"iss": "https://evil.example"}}, "wrong_issuer"),
    ({"claims": {"aud": "another-client"}}, "wrong_audience"),
    ({"claims": {"exp": 1_000_000_000, "iat": 999_999_000}}, "expired"),
    ({"claims": {"nonce": "not-the-sign-ins-nonce"}}, "nonce_mismatch"),
    ({"claims": {"nonce": None}}, "missing_claim"),
]


@pytest.mark.parametrize(("forgery", "reason"), FORGERIES, ids=[r for _, r in FORGERIES])
def test_a_forged_id_token_is_refused_with_the_reason_audited(sso, forgery, reason) -> None:
    state, code = _sign_in(sso, "ada")
    sso["provider"].forge_next(**forgery)
    email, _, refused = _finish(sso, state, code)
    assert email is None and refused is not None and refused.reason == reason, refused
    row = _audit(sso, "signin.refused")[0]
    assert row.reason == reason and row.ip == "203.0.113.9"
    assert _role(sso, "ada@acme.test") is None  # nobody was created


def test_a_replayed_callback_and_a_domain_not_allowed_are_refused(sso) -> None:
    state, code = _sign_in(sso, "ada")
    assert _finish(sso, state, code)[2] is None
    refused = _finish(sso, state, code)[2]
    assert refused is not None and refused.reason == "replayed"

    refused = _finish(sso, *_sign_in(sso, "eve"))[2]
    assert refused is not None and refused.reason == "domain_not_allowed"
    assert [row.reason for row in _audit(sso, "signin.refused")] == ["domain_not_allowed", "replayed"]
    assert _role(sso, "eve@elsewhere.test") is None


def test_a_rotated_signing_key_is_fetched_again(sso, monkeypatch: pytest.MonkeyPatch) -> None:
    _finish(sso, *_sign_in(sso, "bob"))  # the key set is cached now
    # No once-a-second limit on the key set's fetch here: the forged-signature test may have spent this
    # second's fetch with its unknown key id, and what is checked here is that a rotation is fetched at all.
    monkeypatch.setattr(oidc, "JWKS_REFETCH_S", 0.0)
    state, code = _sign_in(sso, "bob")
    sso["provider"].forge_next(sign_with="rotated")
    email, role, refused = _finish(sso, state, code)
    assert refused is None and (email, role) == ("bob@acme.test", "member")


def test_a_token_without_the_groups_claim_leaves_the_role_as_it_is(sso) -> None:
    assert _finish(sso, *_sign_in(sso, "ada"))[:2] == ("ada@acme.test", "owner")
    sso["provider"].set_users({"ada": {k: v for k, v in PEOPLE["ada"].items() if k != "groups"}})
    assert _finish(sso, *_sign_in(sso, "ada"))[2] is None
    assert _role(sso, "ada@acme.test") == "owner"  # not the default role: no groups said otherwise
    sso["provider"].set_users({"ada": {**PEOPLE["ada"], "groups": []}})
    assert _finish(sso, *_sign_in(sso, "ada"))[:2] == ("ada@acme.test", "viewer")
    assert _role(sso, "ada@acme.test") == "viewer"  # an empty list is followed
