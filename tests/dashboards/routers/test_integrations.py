"""The integrations page and the issue page's link actions without a browser: only owners connect and
delete, members link; another organization's connection, link or issue answers 404 and is left alone; a
token never appears in a page; a tracker that fails answers with its words and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.settings import Settings, override_settings
from tests.dashboards.conftest import add_member, csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers


def _divide() -> None:
    print(1 / 0)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTrackers]:
    server = FakeTrackers().start()
    yield server
    server.stop()
    assert server.violations == []


@pytest.fixture
def allowed(stores: Settings) -> Iterator[Settings]:
    current = stores.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(current)
    yield current
    override_settings(None)


@pytest.fixture
def web(allowed: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(allowed)) as client:
        yield client


def _connect(web: TestClient, org: dict, fake: FakeTrackers, token: str = ft.GITLAB_TOKEN):
    page = f"/orgs/{org['org_slug']}/settings/integrations"
    form = {
        "csrf_token": csrf_of(web.get(page).text),
        "type": "gitlab",
        "name": "Platform",
        "base_url": fake.url,
        "token": token,
        "default_target": "acme/platform/web",
    }
    return web.post(page, data=form)


def test_owner_connects_member_links_and_other_orgs_see_nothing(web, org_factory, fake, allowed) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    sign_in(web, acme["email"])
    refused = _connect(web, acme, fake, token="wrong")
    assert refused.status_code == 400 and "GitLab refused the token (401)" in refused.text
    connected = _connect(web, acme, fake)
    assert connected.status_code == 200 and "Connected to GitLab as <b>gitlab-dev</b>" in connected.text
    assert ft.GITLAB_TOKEN not in connected.text and "…en99" in connected.text
    with session_scope(allowed) as session:
        (connection,) = session.scalars(select(TrackerConnection)).all()
        connection_id = connection.id
    (row,) = land(acme["org_id"], acme["project_id"], [sdk_event(_divide)])
    issue_path = f"/orgs/{acme['org_slug']}/projects/{acme['project']}/issues/{row['issue_id']}"

    member = add_member(allowed, acme)
    web.cookies.clear()
    sign_in(web, member)
    page = web.get(f"/orgs/{acme['org_slug']}/settings/integrations")
    assert "Platform" in page.text and 'id="integration-form"' not in page.text  # members do not connect
    token = csrf_of(page.text)
    assert (
        web.post(f"/orgs/{acme['org_slug']}/settings/integrations", data={"csrf_token": token}).status_code
        == 403
    )
    issue = web.get(issue_path)
    assert 'id="create-link-form"' in issue.text and "ZeroDivisionError: division by zero" in issue.text
    created = web.post(
        issue_path + "/links",
        data={"csrf_token": csrf_of(issue.text), "action": "create", "integration_id": str(connection_id)},
        follow_redirects=False,
    )
    assert created.status_code == 303 and created.headers["location"].endswith("?done=linked#linked-issues")
    shown = web.get(issue_path + "?done=linked")
    assert "Linked issue created." in shown.text and "acme/platform/web#1" in shown.text
    with session_scope(allowed) as session:
        link_id = session.scalars(select(ExternalLink)).one().id

    web.cookies.clear()
    sign_in(web, other["email"])
    theirs = web.get(f"/orgs/{other['org_slug']}/settings/integrations")
    assert "Platform" not in theirs.text and "No tracker connected yet" in theirs.text
    token = csrf_of(theirs.text)
    base = f"/orgs/{other['org_slug']}/settings/integrations"
    assert web.post(f"{base}/{connection_id}/delete", data={"csrf_token": token}).status_code == 404
    (their_row,) = land(other["org_id"], other["project_id"], [sdk_event(_divide)])
    their_issue = f"/orgs/{other['org_slug']}/projects/{other['project']}/issues/{their_row['issue_id']}"
    page = web.get(their_issue)
    assert "connect GitHub, GitLab, Jira or Linear" in page.text
    borrowed = web.post(
        their_issue + "/links",
        data={"csrf_token": csrf_of(page.text), "action": "create", "integration_id": str(connection_id)},
    )
    # another organization's connection answers as a missing one: 404, the page again with the reason
    assert (
        borrowed.status_code == 404
        and f"no integration {connection_id} in this organization" in borrowed.text
    )
    assert web.post(f"{their_issue}/links/{link_id}/unlink", data={"csrf_token": token}).status_code == 404
    assert web.get(issue_path).status_code == 404  # another organization's issue
    assert list(fake.tickets) == ["acme/platform/web#1"]
    with session_scope(allowed) as session:
        assert len(session.scalars(select(ExternalLink)).all()) == 1
        assert len(session.scalars(select(TrackerConnection)).all()) == 1
