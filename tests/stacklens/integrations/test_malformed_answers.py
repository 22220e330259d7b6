"""A tracker — or a look-alike server, or a proxy in front of one — answering JSON of the wrong shape: every
client turns it into a TrackerUnavailable that names the tracker, the call and what it found, never an
AttributeError, KeyError or TypeError. An answer whose body cannot be decoded is reported the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from stacklens.integrations.trackers.base import Tracker, TrackerUnavailable
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client

GITLAB_ISSUE = "/api/v4/projects/acme%2Fplatform%2Fweb/issues/1"

# (client kind, token, e-mail, path answered, JSON answered, the call, words expected in the message)
CASES: list[tuple[str, str, str, str, Any, Callable[[Tracker], object], str]] = [
    (
        "github",
        ft.GITHUB_TOKEN,
        "",
        "/api/v3/repos/acme/web/issues/1",
        [{"number": 1, "state": "closed"}],
        lambda t: t.get("acme/web#1"),
        "GitHub answered issue acme/web#1 with a JSON list where an object was expected",
    ),
    (
        "github",
        ft.GITHUB_TOKEN,
        "",
        "/api/v3/repos/acme/web/issues/1",
        {"state": "open", "html_url": "https://x"},
        lambda t: t.get("acme/web#1"),
        "GitHub answered issue acme/web#1 with no usable 'number'",
    ),
    (
        "github",
        ft.GITHUB_TOKEN,
        "",
        "/api/v3/search/issues",
        {"items": {"number": 1}},
        lambda t: t.find_marker("acme/web", "stacklensabc"),
        "a JSON object where a list was expected",
    ),
    (
        "github",
        ft.GITHUB_TOKEN,
        "",
        "/api/v3/user",
        "octocat",
        lambda t: t.account(),
        "GitHub answered the token's user (GET /user) with a JSON string",
    ),
    (
        "gitlab",
        ft.GITLAB_TOKEN,
        "",
        GITLAB_ISSUE,
        [],
        lambda t: t.get("acme/platform/web#1"),
        "GitLab answered issue acme/platform/web#1 with a JSON list",
    ),
    (
        "gitlab",
        ft.GITLAB_TOKEN,
        "",
        "/api/v4/projects/acme%2Fplatform%2Fweb/issues",
        [7, 8],
        lambda t: t.find_marker("acme/platform/web", "stacklensabc"),
        "a list holding a JSON number where objects were expected",
    ),
    (
        "jira",
        ft.JIRA_TOKEN,
        ft.JIRA_EMAIL,
        "/rest/api/3/issue/OPS-1",
        {"fields": {"status": "Done"}},
        lambda t: t.get("OPS-1"),
        "Jira answered issue OPS-1 with no usable 'key'",
    ),
    (
        "jira",
        ft.JIRA_TOKEN,
        ft.JIRA_EMAIL,
        "/rest/api/3/project/search",
        {"values": "OPS"},
        lambda t: t.account(),
        "a JSON string where a list was expected",
    ),
    (
        "linear",
        ft.LINEAR_KEY,
        "",
        "/graphql",
        {"data": {"issue": "ENG-1"}},
        lambda t: t.get("ENG-1"),
        "Linear answered issue ENG-1 with a JSON string where an object was expected",
    ),
    (
        "linear",
        ft.LINEAR_KEY,
        "",
        "/graphql",
        [{"data": {}}],
        lambda t: t.account(),
        "with a JSON list where an object was expected",
    ),
    (
        "linear",
        ft.LINEAR_KEY,
        "",
        "/graphql",
        {"data": {"viewer": {"name": "x"}, "teams": {"nodes": [1]}}},
        lambda t: t.account(),
        "a list holding a JSON number",
    ),
]


@pytest.mark.parametrize(
    ("kind", "token", "email", "path", "answer", "call", "words"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_a_malformed_answer_is_a_tracker_error_in_plain_words(
    fake: FakeTrackers,
    kind: str,
    token: str,
    email: str,
    path: str,
    answer: Any,
    call: Callable[[Tracker], object],
    words: str,
) -> None:
    fake.tickets["acme/web#1"] = {
        "key": "acme/web#1",
        "title": "t",
        "body": "",
        "state": "open",
        "target": "x",
    }
    fake.answers[path] = answer
    with pytest.raises(TrackerUnavailable) as caught:
        call(client(fake, kind, token, email))
    assert words in str(caught.value)
    assert "not what its API documents" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None  # raised, not a caught crash


def test_a_body_that_cannot_be_decoded_is_reported(fake: FakeTrackers) -> None:
    """``Content-Encoding: gzip`` over a body that is not gzip: httpx raises a DecodingError (not a
    TransportError) while reading it."""
    fake.script[:] = [(200, {"Content-Encoding": "gzip"}, 0)]
    with pytest.raises(
        TrackerUnavailable, match="GitHub answered issue acme/web#1 with a body that cannot be"
    ):
        client(fake, "github", ft.GITHUB_TOKEN).get("acme/web#1")
