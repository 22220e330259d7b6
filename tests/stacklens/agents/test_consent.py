"""The consent request travels signed (tampering or age refuses it), approval issues a one-time code sent
back with the client's state, and a denial says so."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from stacklens.agents import consent, oauth_store
from stacklens.control.db import session_scope
from stacklens.control.models import User
from stacklens.errors import InvalidInput
from stacklens.settings import Settings

REQUEST = consent.ConsentRequest(
    client_id="client-1",
    redirect_uri="http://127.0.0.1:9/callback?keep=1",
    redirect_uri_explicit=True,
    code_challenge="x" * 43,
    state="st8",
    scopes=["read", "write"],
    resource=None,
)


def test_signed_request_round_trips_and_tampering_is_refused(settings: Settings) -> None:
    blob = consent.sign(settings, REQUEST)
    assert consent.read(settings, blob) == REQUEST
    with pytest.raises(InvalidInput, match="request"):
        consent.read(settings, blob[:-2] + "xx")


def test_requested_scopes_default_to_read() -> None:
    assert consent.requested_scopes(None) == ["read"]
    assert consent.requested_scopes(["write", "admin"]) == ["read", "write"]


def test_approve_issues_a_code_with_what_the_member_chose(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    with session_scope(settings) as session:
        user_id = session.scalars(select(User.id).where(User.email == acme["email"])).one()
        location = consent.approve(session, REQUEST, acme["org_id"], user_id, ["read"])
        query = parse_qs(urlsplit(location).query)
        assert location.startswith("http://127.0.0.1:9/callback?") and query["keep"] == ["1"]
        assert query["state"] == ["st8"]
        grant = oauth_store.find_code(session, "client-1", query["code"][0])
        assert grant is not None and grant.scopes == ["read"] and grant.org_id == acme["org_id"]
        assert oauth_store.find_code(session, "another-client", query["code"][0]) is None
    denied = parse_qs(urlsplit(consent.deny(REQUEST)).query)
    assert denied["error"] == ["access_denied"] and denied["state"] == ["st8"]
