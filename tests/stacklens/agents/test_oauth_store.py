"""OAuth state: a client's metadata stored encrypted, a code spent once for a token pair, a refresh that
rotates the pair, and revocation by either secret."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.agents import oauth_store
from stacklens.agents.tokens import TokenRefused, resolve
from stacklens.control.db import session_scope
from stacklens.control.models import OAuthClient, User, utcnow
from stacklens.settings import Settings


def test_client_code_tokens_refresh_and_revoke(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    with session_scope(settings) as session:
        oauth_store.save_client(
            session, settings, "c1", {"client_id": "c1", "client_name": "Cursor", "client_secret": "s3cret"}
        )
        session.flush()
        stored = session.scalars(select(OAuthClient)).one()
        assert "s3cret" not in stored.info_encrypted and stored.name == "Cursor"
        assert oauth_store.load_client(session, settings, "c1")["client_secret"] == "s3cret"
        assert oauth_store.load_client(session, settings, "nope") is None
        user_id = session.scalars(select(User.id).where(User.email == acme["email"])).one()
        code = oauth_store.issue_code(
            session,
            oauth_store.Grant(
                "c1",
                acme["org_id"],
                user_id,
                ["read"],
                "c" * 43,
                "http://x/cb",
                True,
                None,
                utcnow() + oauth_store.CODE_LIFETIME,
            ),
        )
        issued = oauth_store.exchange_code(session, "c1", code)
        with pytest.raises(LookupError):
            oauth_store.exchange_code(session, "c1", code)  # once only
        who = resolve(session, issued.access_token)
        assert (who.kind, who.client, who.scopes) == ("oauth", "Cursor", frozenset({"read"}))
        assert oauth_store.refresh_scopes(session, "c1", issued.refresh_token) == ["read"]
        assert oauth_store.refresh_scopes(session, "c2", issued.refresh_token) is None
        rotated = oauth_store.exchange_refresh(session, "c1", issued.refresh_token, ["read", "write"])
        assert rotated.scopes == ["read"]  # never more than approved
        with pytest.raises(TokenRefused):
            resolve(session, issued.access_token)
        oauth_store.revoke_by_secret(session, rotated.refresh_token)
        with pytest.raises(TokenRefused):
            resolve(session, rotated.access_token)
        oauth_store.revoke_by_secret(session, "unknown")  # ignored
