"""GitHub (and Enterprise) against a local server that checks requests as GitHub documents them."""

from __future__ import annotations

from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client, doc


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
