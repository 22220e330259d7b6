"""GitLab against a local server that checks requests as GitLab documents them."""

from __future__ import annotations

from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client, doc


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
