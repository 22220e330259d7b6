"""What every tracker client shares, against a local server that checks requests as each tracker documents
them: a refused token, a missing target, 5xx then success, Retry-After, a timeout, the SSRF guard, a bad
reference. Each tracker's own requests are in test_github.py, test_gitlab.py, test_jira.py, test_linear.py."""

from __future__ import annotations

import pytest

from stacklens.integrations.trackers import tracker_for
from stacklens.integrations.trackers.base import Connection, TrackerRefused, TrackerUnavailable
from stacklens.outbound import OutboundClient
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers
from tests.stacklens.integrations.trackers.clients import client, doc


@pytest.mark.parametrize(
    ("kind", "email"), [("github", ""), ("gitlab", ""), ("jira", ft.JIRA_EMAIL), ("linear", "")]
)
def test_a_refused_token_says_so(fake: FakeTrackers, kind: str, email: str) -> None:
    with pytest.raises(TrackerRefused, match=r"refused the (token|API key)"):
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
    with pytest.raises(TrackerUnavailable, match=r"retry .* after 600 s"):
        client(fake, "github", ft.GITHUB_TOKEN).account()


def test_a_timeout_retries_reads_but_never_resends_a_create(fake: FakeTrackers) -> None:
    gh = client(fake, "github", ft.GITHUB_TOKEN, timeout=0.3)
    fake.script[:] = [(0, {}, 0.8)]  # the first answer comes too late
    assert gh.account().name == "octocat"
    fake.script[:] = [(0, {}, 0.8)]
    before = len(fake.calls)
    with pytest.raises(TrackerUnavailable, match=r"did not answer within 0.3 s"):
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
    with pytest.raises(TrackerRefused, match=r"^reference: "):
        client(fake, kind, "t").get(reference)
