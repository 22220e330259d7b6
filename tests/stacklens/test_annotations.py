"""Annotations in the control store: Grafana's shape stored (ISO 8601 or epoch milliseconds, now by
default; tags from a list or a comma-separated string), listed newest first by project and window, deleted,
never another organization's, and each bad field named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from stacklens.annotations import BadAnnotation, create_annotation, delete_annotation, list_annotations
from stacklens.control.db import session_scope
from stacklens.errors import NotFound
from stacklens.settings import Settings

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_create_list_and_delete_within_the_organization(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    org = int(acme["org_id"])
    with session_scope(settings) as session:
        deploy = create_annotation(
            session,
            org,
            {
                "text": " deploy api ",
                "tags": "deploy, api,deploy",
                "project": acme["project"],
                "release": "shop@1.4.0",
            },
            now=NOW,
        )
        assert (deploy.time, deploy.text, deploy.tags, deploy.project) == (
            NOW,
            "deploy api",
            ["deploy", "api"],
            acme["project"],
        )
        flag = create_annotation(
            session, org, {"text": "flag on", "time": int((NOW - timedelta(hours=2)).timestamp() * 1000)}
        )
        old = create_annotation(session, org, {"text": "campaign", "time": "2026-11-01T08:00:00+01:00"})
        assert flag.time == NOW - timedelta(hours=2) and flag.project == ""
        assert old.time == datetime(2026, 11, 1, 7, 0, tzinfo=UTC)
        assert [n.id for n in list_annotations(session, org)] == [deploy.id, flag.id, old.id]
        window = list_annotations(session, org, since=NOW - timedelta(days=1), until=NOW)
        assert [n.id for n in window] == [flag.id]  # [since, until): the deploy at NOW is outside
        # A project's charts show its own and the organization-wide ones.
        assert {n.id for n in list_annotations(session, org, project_ids=[int(acme["project_id"])])} == {
            deploy.id,
            flag.id,
            old.id,
        }
        assert {n.id for n in list_annotations(session, org, project_ids=[])} == {flag.id, old.id}
        assert list_annotations(session, int(other["org_id"])) == []
        with pytest.raises(NotFound):
            delete_annotation(session, int(other["org_id"]), deploy.id)
        delete_annotation(session, org, deploy.id)
        assert deploy.id not in [n.id for n in list_annotations(session, org)]
        assert deploy.as_json()["time"] == "2026-11-20T12:00:00Z"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("deploy", "body"),
        ({"text": ""}, "text"),
        ({"text": "x", "color": "red"}, "color"),
        ({"text": "x", "time": "yesterday"}, "time"),
        ({"text": "x", "time": "2999-01-01T00:00:00Z"}, "time"),
        ({"text": "x", "time": True}, "time"),
        ({"text": "x", "tags": ["a"] * 11}, "tags"),
        ({"text": "x", "tags": [3]}, "tags[0]"),
        ({"text": "x", "project": "nope"}, "project"),
        ({"text": "x\x00"}, "text"),
        ({"text": "x", "release": "r" * 201}, "release"),
    ],
)
def test_each_bad_field_is_named(settings: Settings, make_org, body: object, field: str) -> None:
    org = int(make_org()["org_id"])
    with session_scope(settings) as session, pytest.raises(BadAnnotation) as refused:
        create_annotation(session, org, body, now=NOW)
    assert refused.value.field == field


def test_another_organizations_project_is_no_project(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session, pytest.raises(BadAnnotation, match="project: no project"):
        create_annotation(session, int(acme["org_id"]), {"text": "x", "project": other["project"]})
