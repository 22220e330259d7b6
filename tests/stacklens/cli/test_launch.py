"""The demo's control-store side fills the members page: a pending invitation, made once."""

from __future__ import annotations

from stacklens.cli.launch import DEMO_TEAMMATE, ensure_demo
from stacklens.control.db import session_scope
from stacklens.control.invitations import pending_invitations


def test_demo_has_one_pending_invitation(settings) -> None:
    first = ensure_demo(settings)
    again = ensure_demo(settings)
    assert first.worker_key == again.worker_key
    with session_scope(settings) as session:
        from stacklens.control.accounts import organization_by_name

        org = organization_by_name(session, first.organization)
        pending = pending_invitations(session, org.id)
    assert [(row.email, row.role) for row in pending] == [(DEMO_TEAMMATE, "member")]
