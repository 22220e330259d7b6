"""Each tracker's client against a local server that checks requests as the tracker documents them: who the
token is and what it reaches, creating a ticket (Jira's description in ADF), reading one back, the marker
search, and the failures: a refused token, a missing target, 5xx then success, a timeout."""

from __future__ import annotations

import base64

import pytest

from stacklens.integrations.document import Document
from stacklens.integrations.trackers import tracker_for
from stacklens.integrations.trackers.base import Connection, Tracker, TrackerRefused, TrackerUnavailable
from stacklens.outbound import AllowList, OutboundClient
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers


def client(fake: FakeTrackers, kind: str, token: str, email: str = "", timeout: float = 5.0) -> Tracker:
    outbound = OutboundClient(allow=AllowList.parse("127.0.0.1"), timeout_s=timeout)
    tracker = tracker_for(Connection(kind, fake.url, token, email), outbound)
    waits: list[float] = []
    tracker.sleep = waits.append
    tracker.waits = waits  # type: ignore[attr-defined]
    return tracker


def doc() -> Document:
    return (
        Document()
        .heading("Error")
        .facts([("Error", "ZeroDivisionError: division by zero"), ("Culprit", "app.checkout in total")])
        .code("ZeroDivisionError: division by zero\n  at total (app/checkout.py:12)")
        .link("Open the issue in StackLens", "https://stacklens.example.com/orgs/acme/projects/web/issues/7")
        .paragraph("StackLens reference: stacklensabc123")
    )


def test_github_enterprise_account_create_read_and_marker(fake: FakeTrackers) -> None:
    gh = client(fake, "github", ft.GITHUB_TOKEN)
    account = gh.account()
    assert account.name == "octocat" and account.targets == ["acme/web", "acme/api"]
    assert [c.path for c in fake.calls] == ["/api/v3/user", "/api/v3/user/repos?per_page=100&sort=updated"]
    ticket = gh.create("acme/web", "ZeroDivisionError: division by zero", doc())
    assert (ticket.key, ticket.state) == ("acme/web#1", "open")
    assert ticket.url == "https://github.example.com/acme/web/issues/1"
    post = fake.calls[-1]
    assert (post.method, post.path) == ("POST", "/api/v3/repos/acme/web/issues")
    assert post.headers["authorization"] == f"Bearer {ft.GITHUB_TOKEN}"
    assert (
        "```\nZeroDivisionError" in post.body["body"]
        and "[Open the issue in StackLens](https://" in post.body["body"]
    )
    fake.close_ticket("acme/web#1")
    assert gh.get("https://github.example.com/acme/web/issues/1").state == "closed"
    assert gh.get("acme/web#1").key == gh.get("1", "acme/web").key == "acme/web#1"
    assert gh.find_marker("acme/web", "stacklensabc123").key == "acme/web#1"
    assert gh.find_marker("acme/web", "stacklensother") is None


def test_gitlab_encodes_the_project_path_and_uses_private_token(fake: FakeTrackers) -> None:
    gl = client(fake, "gitlab", ft.GITLAB_TOKEN)
    assert gl.account().targets == ["acme/platform/web"]
    ticket = gl.create("acme/platform/web", "Boom", doc())
    post = fake.calls[-1]
    assert post.path == "/api/v4/projects/acme%2Fplatform%2Fweb/issues"
    assert post.headers["private-token"] == ft.GITLAB_TOKEN and "authorization" not in post.headers
    assert set(post.body) == {"title", "description"}
    assert (ticket.key, ticket.url) == (
        "acme/platform/web#1",
        "https://gitlab.example.com/acme/platform/web/-/issues/1",
    )
    fake.close_ticket(ticket.key)
    assert gl.get(ticket.url).state == "closed"
    assert gl.find_marker("acme/platform/web", "stacklensabc123").key == ticket.key


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


def test_linear_graphql_with_the_bare_api_key(fake: FakeTrackers) -> None:
    linear = client(fake, "linear", ft.LINEAR_KEY)
    assert linear.account().targets == ["ENG"]
    ticket = linear.create("eng", "Boom", doc())
    mutation = fake.calls[-1]
    assert (mutation.method, mutation.path) == ("POST", "/graphql")
    assert mutation.headers["authorization"] == ft.LINEAR_KEY
    assert mutation.body["variables"]["input"]["teamId"] == "team-uuid-eng"
    assert (ticket.key, ticket.state) == ("ENG-1", "open")
    fake.close_ticket("ENG-1")
    assert linear.get("https://linear.app/acme/issue/ENG-1/slug").state == "closed"
    assert linear.find_marker("ENG", "stacklensabc123").key == "ENG-1"


@pytest.mark.parametrize(
    ("kind", "email"), [("github", ""), ("gitlab", ""), ("jira", ft.JIRA_EMAIL), ("linear", "")]
)
def test_a_refused_token_says_so(fake: FakeTrackers, kind: str, email: str) -> None:
    with pytest.raises(TrackerRefused, match="refused the (token|API key)"):
        client(fake, kind, "wrong-token", email=email).account()


@pytest.mark.parametrize(
    ("kind", "token", "email", "target"),
    [
        ("github", ft.GITHUB_TOKEN, "", "acme/nope"),
        ("gitlab", ft.GITLAB_TOKEN, "", "acme/nope"),
        ("jira", ft.JIRA_TOKEN, ft.JIRA_EMAIL, "NOPE"),
        ("linear", ft.LINEAR_KEY, "", "NOPE"),
    ],
)
def test_a_missing_target_is_refused_and_nothing_is_created(
    fake: FakeTrackers, kind: str, token: str, email: str, target: str
) -> None:
    with pytest.raises(TrackerRefused) as refused:
        client(fake, kind, token, email=email).create(target, "Boom", doc())
    assert kind.title()[:4].lower() in str(refused.value).lower() and fake.tickets == {}


def test_5xx_then_success_is_retried_honouring_retry_after(fake: FakeTrackers) -> None:
    gh = client(fake, "github", ft.GITHUB_TOKEN)
    fake.script[:] = [(503, {"Retry-After": "2"}, 0), (502, {}, 0)]
    ticket = gh.create("acme/web", "Boom", doc())
    assert ticket.key == "acme/web#1" and len(fake.tickets) == 1
    assert gh.waits == [2.0, 3.0]  # type: ignore[attr-defined]


def test_5xx_every_time_gives_up_with_a_clear_message(fake: FakeTrackers) -> None:
    gl = client(fake, "gitlab", ft.GITLAB_TOKEN)
    fake.script[:] = [(500, {}, 0)] * 3
    with pytest.raises(TrackerUnavailable, match=r"GitLab failed \(500\) .* after 3 attempt"):
        gl.account()


def test_a_retry_after_beyond_the_wait_limit_is_reported_not_waited(fake: FakeTrackers) -> None:
    fake.script[:] = [(429, {"Retry-After": "600"}, 0)]
    with pytest.raises(TrackerUnavailable, match="retry .* after 600 s"):
        client(fake, "github", ft.GITHUB_TOKEN).account()


def test_a_timeout_retries_reads_but_never_resends_a_create(fake: FakeTrackers) -> None:
    gh = client(fake, "github", ft.GITHUB_TOKEN, timeout=0.3)
    fake.script[:] = [(0, {}, 0.8)]  # the first answer comes too late
    assert gh.account().name == "octocat"
    fake.script[:] = [(0, {}, 0.8)]
    before = len(fake.calls)
    with pytest.raises(TrackerUnavailable, match="did not answer within 0.3 s"):
        gh.create("acme/web", "Boom", doc())
    assert len(fake.calls) == before + 1  # one POST: it may have created the ticket; the marker settles it


def test_the_ssrf_guard_refuses_an_internal_tracker_not_allowed(fake: FakeTrackers) -> None:
    tracker = tracker_for(Connection("github", fake.url, ft.GITHUB_TOKEN), OutboundClient())
    with pytest.raises(TrackerRefused, match="STACKLENS_OUTBOUND_ALLOW"):
        tracker.account()
    assert fake.calls == []


@pytest.mark.parametrize(
    ("kind", "reference"),
    [("github", "not a ticket"), ("gitlab", "https://x/y"), ("jira", "ops"), ("linear", "ENG")],
)
def test_a_bad_reference_names_the_field(fake: FakeTrackers, kind: str, reference: str) -> None:
    with pytest.raises(TrackerRefused, match="^reference: "):
        client(fake, kind, "t").get(reference)
