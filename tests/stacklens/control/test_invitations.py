"""Invitations: one working link per address, signed, usable once, by the invited address only."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError
from stacklens.control.invitations import (
    InvitationGone,
    accept_with_new_account,
    create_invitation,
    open_invitation,
    pending_invitations,
    revoke_invitation,
    signer_for,
)
from stacklens.control.models import Membership
from stacklens.settings import Settings

SIGNER = signer_for(b"test-secret-key-0123456789abcdef")


def test_invite_accept_once_and_only_the_newest_link(settings: Settings, make_org) -> None:
    org_id = int(make_org()["org_id"])
    with session_scope(settings) as session:
        _, first = create_invitation(session, SIGNER, org_id, "ada@example.test", role="owner")
        invitation, token = create_invitation(session, SIGNER, org_id, "ada@example.test", role="owner")
        assert [i.id for i in pending_invitations(session, org_id)] == [invitation.id]
        with pytest.raises(InvitationGone, match="withdrawn"):
            open_invitation(session, SIGNER, first)
        assert open_invitation(session, SIGNER, token + "x") is None  # a forged signature is no invitation
        assert open_invitation(session, signer_for(b"another-secret-0123456789abcdef"), token) is None
        user, organization = accept_with_new_account(session, SIGNER, token, "password-123")
        assert organization.id == org_id and user.email == "ada@example.test"
        membership = session.scalar(select(Membership).where(Membership.user_id == user.id))
        assert membership is not None and membership.role == "owner"
        with pytest.raises(InvitationGone, match="used already"):
            open_invitation(session, SIGNER, token)


def test_a_bad_role_and_a_revoked_invitation(settings: Settings, make_org) -> None:
    org_id = int(make_org()["org_id"])
    with session_scope(settings) as session:
        with pytest.raises(AccountError, match="role must be one of"):
            create_invitation(session, SIGNER, org_id, "bob@example.test", role="king")
        invitation, _ = create_invitation(session, SIGNER, org_id, "bob@example.test")
        revoke_invitation(session, org_id, invitation.id, None)
        assert pending_invitations(session, org_id) == []
        with pytest.raises(AccountError, match="no open invitation"):
            revoke_invitation(session, org_id, invitation.id, None)
