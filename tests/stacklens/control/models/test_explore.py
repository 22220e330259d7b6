"""The saved-query table: a row's defaults, and an organization's rows deleted with it."""

from __future__ import annotations

from sqlalchemy import delete, select

from stacklens.control.db import session_scope
from stacklens.control.models import Organization
from stacklens.control.models.explore import SavedQuery
from stacklens.settings import Settings


def test_defaults_and_the_organizations_rows_going_with_it(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session:
        # Saved with the organization's API key: nobody signed in, so no owner.
        rows = [SavedQuery(org_id=org["org_id"], name="Slow pages") for org in (acme, other)]
        session.add_all(rows)
        session.flush()
        assert (rows[0].owner_user_id, rows[0].description, rows[0].query) == (None, "", {})
        assert rows[0].created_at.tzinfo is not None
    with session_scope(settings) as session:
        session.execute(delete(Organization).where(Organization.id == acme["org_id"]))
    with session_scope(settings) as session:
        assert session.scalars(select(SavedQuery.org_id)).all() == [other["org_id"]]
