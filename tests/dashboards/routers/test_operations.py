"""`/admin/operations`: operators see the installation's storage and maintenance; anyone else finds nothing,
and a visitor who is not signed in is sent to sign in."""

from __future__ import annotations

from sqlalchemy import update

from stacklens.control.db import session_scope
from stacklens.control.models import User
from tests.dashboards.conftest import add_member, sign_in


def test_only_operators_see_the_page(client, org_factory, stores) -> None:
    org = org_factory("Acme")
    assert client.get("/admin/operations", follow_redirects=False).headers["location"].startswith("/login")
    sign_in(client, org["email"])
    refused = client.get("/admin/operations")
    assert refused.status_code == 404 and "not yours to see" in refused.text  # an owner is not an operator
    with session_scope(stores) as session:
        session.execute(update(User).where(User.email == org["email"]).values(is_operator=True))
    page = client.get("/admin/operations")
    assert page.status_code == 200
    assert "No raw data yet" in page.text and "none pending" in page.text and "None recorded yet" in page.text
    assert "No items reached the service in the last 24 hours" in page.text
    member = add_member(stores, org)
    client.post("/logout", data={"csrf_token": ""})
    client.cookies.clear()
    sign_in(client, member)
    assert client.get("/admin/operations").status_code == 404
