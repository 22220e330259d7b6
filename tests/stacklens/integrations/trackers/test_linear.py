"""Linear against a local server that checks requests as Linear documents them."""

from __future__ import annotations

from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client, doc


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
