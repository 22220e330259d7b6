"""Saved queries: an organization's named questions, stored normalised, each field checked, never another
organization's."""

from __future__ import annotations

import pytest

from stacklens.control.db import session_scope
from stacklens.errors import NotFound
from stacklens.explore.query import BadQuery
from stacklens.explore.saved import create_saved, delete_saved, get_saved, list_saved, replace_saved
from stacklens.settings import Settings

QUESTION = {
    "name": " Errors by release ",
    "query": {"dataset": "errors", "group_by": ["release"], "range": "7d"},
}


def test_save_list_replace_and_delete(settings: Settings, make_org) -> None:
    acme, other = int(make_org("Acme")["org_id"]), int(make_org("Globex")["org_id"])
    with session_scope(settings) as session:
        saved = create_saved(session, acme, QUESTION)
        assert saved.name == "Errors by release" and saved.description == ""
        assert saved.query["aggregates"] == [{"fn": "count", "metric": ""}]  # normalised as a URL keeps it
        assert saved.as_json()["created_at"].endswith("Z")
        replaced = replace_saved(
            session, acme, saved.id, {**QUESTION, "name": "By release", "description": "weekly"}
        )
        assert (replaced.name, replaced.description) == ("By release", "weekly")
        assert [s.id for s in list_saved(session, acme)] == [saved.id] and list_saved(session, other) == []
        with pytest.raises(NotFound):
            get_saved(session, other, saved.id)
        delete_saved(session, acme, saved.id)
        with pytest.raises(NotFound):
            get_saved(session, acme, saved.id)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ({**QUESTION, "owner": 1}, "owner"),
        ({**QUESTION, "name": "  "}, "name"),
        ({**QUESTION, "description": 7}, "description"),
        ({**QUESTION, "query": {"dataset": "nothing"}}, "query.dataset"),
    ],
)
def test_each_bad_field_is_named(settings: Settings, make_org, body: object, field: str) -> None:
    org = int(make_org()["org_id"])
    with session_scope(settings) as session, pytest.raises(BadQuery) as refused:
        create_saved(session, org, body)
    assert refused.value.field == field
