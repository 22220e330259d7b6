"""Personal tokens: created once (only the digest kept), listed, revoked, refused when expired or revoked,
validation naming the field, and another organization's token as unknown as a missing one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from stacklens.agents import tokens
from stacklens.control.db import session_scope
from stacklens.control.models import AgentToken, User, utcnow
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings


def test_create_list_resolve_revoke_and_expire(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    with session_scope(settings) as session:
        user = session.scalars(select(User).where(User.email == acme["email"])).one()
        row, raw = tokens.create_token(session, acme["org_id"], user.id, " laptop ", ["write"], 7)
        assert (
            raw.startswith("stacklens_pat_")
            and row.token_hash == tokens.digest(raw)
            and raw not in row.prefix + "x"
        )
        assert row.scopes == ["read", "write"] and row.name == "laptop"
        who = tokens.resolve(session, raw)
        assert (who.org_id, who.email, who.role, who.kind) == (
            acme["org_id"],
            acme["email"],
            "owner",
            "personal",
        )
        assert who.may_write
        listed = tokens.list_tokens(session, acme["org_id"], user.id)
        assert [t.id for t in listed] == [row.id]
        assert tokens.list_tokens(session, other["org_id"], user.id) == []
        with pytest.raises(NotFound):
            tokens.revoke_token(session, other["org_id"], None, row.id)
        expired, expired_raw = tokens.create_token(session, acme["org_id"], user.id, "old", ["read"], 1)
        expired.expires_at = utcnow() - timedelta(seconds=1)
        with pytest.raises(tokens.TokenRefused, match="expired"):
            tokens.resolve(session, expired_raw)
        tokens.revoke_token(session, acme["org_id"], user.id, row.id)
        with pytest.raises(tokens.TokenRefused, match="revoked"):
            tokens.resolve(session, raw)
        with pytest.raises(tokens.TokenRefused, match="unknown"):
            tokens.resolve(session, "stacklens_pat_nothing")
        assert session.scalars(select(AgentToken.token_hash)).all() != [raw]


@pytest.mark.parametrize(
    ("name", "scopes", "days", "field"),
    [
        ("", ["read"], 30, "name"),
        ("x" * 101, ["read"], 30, "name"),
        ("ok", ["admin"], 30, "scopes"),
        ("ok", "read", 30, "scopes"),
        ("ok", ["read"], 0, "expires_in_days"),
        ("ok", ["read"], 400, "expires_in_days"),
        ("ok", ["read"], True, "expires_in_days"),
    ],
)
def test_bad_fields_are_named(name: object, scopes: object, days: object, field: str) -> None:
    check = {"name": tokens.check_name, "scopes": tokens.check_scopes, "expires_in_days": tokens.check_days}
    value = {"name": name, "scopes": scopes, "expires_in_days": days}[field]
    with pytest.raises(InvalidInput, match=rf"^{field}:"):
        check[field](value)


def test_the_member_named_by_the_api_key_must_belong_to_its_organization(
    settings: Settings, make_org
) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    with session_scope(settings) as session:
        assert tokens.member_of(session, acme["org_id"], acme["email"].upper()).email == acme["email"]
        with pytest.raises(NotFound, match="member"):
            tokens.member_of(session, acme["org_id"], other["email"])
        with pytest.raises(InvalidInput, match="member"):
            tokens.member_of(session, acme["org_id"], None)
