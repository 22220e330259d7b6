"""Jira Cloud and Data Center against a local server that checks requests as Jira documents them."""

from __future__ import annotations

import base64

from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client, doc


def test_jira_cloud_sends_adf_with_basic_auth(fake: FakeTrackers) -> None:
    jira = client(fake, "jira", ft.JIRA_TOKEN, email=ft.JIRA_EMAIL)
    account = jira.account()
    assert (account.name, account.targets) == ("Dana Dev", ["OPS"])
    ticket = jira.create("ops", "Boom " + "x" * 300, doc())
    post = fake.calls[-1]
    assert (post.method, post.path) == ("POST", "/rest/api/3/issue")
    expected = base64.b64encode(f"{ft.JIRA_EMAIL}:{ft.JIRA_TOKEN}".encode()).decode()
    assert post.headers["authorization"] == f"Basic {expected}"
    fields = post.body["fields"]
    assert fields["project"] == {"key": "OPS"} and fields["issuetype"] == {"name": "Bug"}
    assert len(fields["summary"]) == 255
    adf = fields["description"]
    assert adf["type"] == "doc" and adf["version"] == 1
    assert [b["type"] for b in adf["content"]] == [
        "heading",
        "bulletList",
        "codeBlock",
        "paragraph",
        "paragraph",
    ]
    link = adf["content"][3]["content"][0]
    assert link["marks"] == [
        {"type": "link", "attrs": {"href": "https://stacklens.example.com/orgs/acme/projects/web/issues/7"}}
    ]
    assert (ticket.key, ticket.url) == ("OPS-1", f"{fake.url}/browse/OPS-1")
    fake.close_ticket("OPS-1")
    assert jira.get(f"{fake.url}/browse/OPS-1").state == "closed"
    assert jira.find_marker("OPS", "stacklensabc123").key == "OPS-1"
    assert fake.calls[-1].path.startswith("/rest/api/3/search/jql?jql=")


def test_jira_data_center_uses_v2_a_bearer_pat_and_plain_text(fake: FakeTrackers) -> None:
    jira = client(fake, "jira", ft.JIRA_PAT)
    assert jira.account().targets == ["OPS"]
    jira.create("OPS", "Boom", doc())
    post = fake.calls[-1]
    assert post.path == "/rest/api/2/issue" and post.headers["authorization"] == f"Bearer {ft.JIRA_PAT}"
    assert "Open the issue in StackLens: https://stacklens.example.com" in post.body["fields"]["description"]
