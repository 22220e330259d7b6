"""The issue page's team work through the app: assign (page and bulk from the list), the `assigned:` filters,
comments with markdown and hostile input escaped, edit and delete one's own only, the history in time order,
the activity page, and another organization's member who can neither see, assign nor comment."""

from __future__ import annotations

import re

import httpx

from stacklens.settings import Settings
from tests.dashboards.conftest import PASSWORD, add_member, csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.routers.test_issue_detail import section, text_of
from tests.dashboards.test_browser import HOSTILE


def _fail_a() -> None:
    raise KeyError("a")


def _fail_b() -> None:
    raise ValueError("b")


def _issues(org) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"


def _post(client, page: str, action: str, data: dict) -> httpx.Response:
    token = csrf_of(client.get(page).text)
    return client.post(action, data={**data, "csrf_token": token}, follow_redirects=False)


def _titles(client, org, query: str) -> list[str]:
    html = client.get(_issues(org), params={"query": query, "status": "all"}).text
    return re.findall(r'class="issue-title" href="[^"]+/(\d+)"', html)


def test_assign_comment_and_history(client, stores: Settings, org_factory) -> None:
    org, other = org_factory("Mine"), org_factory("Other")
    rows = land(org["org_id"], org["project_id"], [sdk_event(_fail_a), sdk_event(_fail_b)])
    first, second = str(rows[0]["issue_id"]), str(rows[1]["issue_id"])
    member = add_member(stores, org)
    page = f"{_issues(org)}/{first}"
    sign_in(client, org["email"])

    html = client.get(page).text
    assert text_of(section(html, "assignee-now")) == "Unassigned"
    assert "No status changes, assignments or comments yet." in html
    answer = _post(client, page, f"{page}/assign", {"assignee": member})
    assert answer.status_code == 303 and answer.headers["location"].endswith("#assignee")
    refused = _post(client, page, f"{page}/assign", {"assignee": "someone@else.test"})
    assert refused.status_code == 400 and "not a member" in text_of(refused.text)
    assert _post(client, page, f"{page}/status", {"action": "resolve"}).status_code == 303
    body = f"Over to @{member.split('@')[0]}: **checkout** {HOSTILE} [runbook](https://runbook.test/a)"
    made = _post(client, page, f"{page}/comments", {"body": body})
    assert made.status_code == 303 and "#comment-" in made.headers["location"]
    assert _post(client, page, f"{page}/comments", {"body": "   "}).status_code == 400

    html = client.get(page).text
    assert text_of(section(html, "assignee-now")).startswith(f"Assigned to {member} by {org['email']}")
    history = section(html, "issue-history")
    assert "<script>window" not in history and "<img" not in history and "&lt;script&gt;" in history
    assert '<a href="https://runbook.test/a" rel="noopener noreferrer nofollow">runbook</a>' in history
    assert "<strong>checkout</strong>" in history and 'class="mention"' in history
    story = [m for m in re.findall(r'class="timeline-item ([a-z-]+)', history)]
    assert story == ["assignment", "status-change", "comment"]
    assert f"assigned it to {member}" in text_of(history)
    assert "changed the status from unresolved to resolved" in text_of(history)
    comment_id = re.search(r'id="comment-(\d+)"', history).group(1)

    # Someone else of the organization sees the comment but cannot change or delete it.
    client.cookies.clear()
    sign_in(client, member, PASSWORD)
    html = client.get(page).text
    assert "comment-edit" not in section(html, "issue-history")
    assert _post(client, page, f"{page}/comments/{comment_id}/edit", {"body": "mine"}).status_code == 403
    assert _post(client, page, f"{page}/comments/{comment_id}/delete", {}).status_code == 403
    # The list: assigned to me / unassigned / to a person; bulk assign and unassign.
    assert _titles(client, org, "assigned:me") == [first]
    assert _titles(client, org, "unassigned") == [second]
    listing = _issues(org)
    bulk = _post(
        client, listing, f"{listing}/bulk", {"action": "assign", "assignee": "none", "issue_ids": [first]}
    )
    assert bulk.status_code == 303
    assert sorted(_titles(client, org, "unassigned")) == sorted([first, second])
    bulk = _post(
        client,
        listing,
        f"{listing}/bulk",
        {"action": "assign", "assignee": member, "issue_ids": [first, second]},
    )
    assert bulk.status_code == 303 and sorted(_titles(client, org, "assigned:me")) == sorted([first, second])
    bad = _post(
        client, listing, f"{listing}/bulk", {"action": "assign", "assignee": "#nope", "issue_ids": [first]}
    )
    assert bad.status_code == 400 and "#nope" in text_of(bad.text)
    assert "assigned to " + member in text_of(client.get(listing, params={"status": "all"}).text)

    # The author edits and deletes their own comment.
    client.cookies.clear()
    sign_in(client, org["email"])
    assert _post(client, page, f"{page}/comments/{comment_id}/edit", {"body": "_fixed_"}).status_code == 303
    history = section(client.get(page).text, "issue-history")
    assert "<em>fixed</em>" in history and "edited" in text_of(history)
    assert _post(client, page, f"{page}/comments/{comment_id}/delete", {}).status_code == 303
    assert f'id="comment-{comment_id}"' not in section(client.get(page).text, "issue-history")
    activity = text_of(client.get(f"/orgs/{org['org_slug']}/settings/activity").text)
    assert f"Assigned issue {first} to {member}." in activity
    assert f"Set issue {first} to resolved." in activity
    assert f"Unassigned issue {first} (it was assigned to {member})." in activity
    assert f"Commented on issue {first}, mentioning {member}." in activity

    # Another organization's owner: the issue is not there for them, and nothing they post lands.
    client.cookies.clear()
    sign_in(client, other["email"])
    theirs = f"/orgs/{other['org_slug']}/projects/{other['project']}/issues/{first}"
    assert client.get(theirs).status_code == 404
    assert client.get(page).status_code == 404
    token = csrf_of(client.get(_issues(other)).text)
    for action, data in (("assign", {"assignee": other["email"]}), ("comments", {"body": "hi"})):
        for path in (theirs, page):
            sent = client.post(f"{path}/{action}", data={**data, "csrf_token": token}, follow_redirects=False)
            assert sent.status_code == 404, (path, action)


def test_merge_and_split_refusals_and_scope(client, stores: Settings, org_factory) -> None:
    """The list's Merge and the page's Split out say what is wrong (400, naming the field) and never reach
    another organization's issue; a merged issue's page redirects (301) to the survivor."""
    org, other = org_factory("Mine"), org_factory("Other")
    rows = land(
        org["org_id"], org["project_id"], [sdk_event(_fail_a), sdk_event(_fail_b), sdk_event(_fail_b)]
    )
    theirs = land(other["org_id"], other["project_id"], [sdk_event(_fail_a)])
    first, second, foreign = str(rows[0]["issue_id"]), str(rows[1]["issue_id"]), str(theirs[0]["issue_id"])
    sign_in(client, org["email"])
    bulk = f"{_issues(org)}/bulk"

    alone = _post(client, _issues(org), bulk, {"action": "merge", "issue_ids": [first]})
    assert alone.status_code == 400 and "ids: name at least two different issues" in alone.text
    stranger = _post(client, _issues(org), bulk, {"action": "merge", "issue_ids": [first, foreign]})
    assert stranger.status_code == 400 and f"no issue {foreign} in this project" in stranger.text
    nothing = _post(client, f"{_issues(org)}/{first}", f"{_issues(org)}/{first}/split", {})
    assert nothing.status_code == 400 and "fingerprints:" in nothing.text

    # Issue 71: the list asks first, naming the survivor (the one with more events); nothing is merged yet.
    asked = _post(client, _issues(org), bulk, {"action": "merge", "issue_ids": [first, second]})
    assert asked.status_code == 200 and 'id="merge-confirm"' in asked.text
    assert f"(#{second})" in text_of(section(asked.text, "merge-survivor"))
    assert client.get(f"{_issues(org)}/{first}", follow_redirects=False).status_code == 200
    merged = _post(
        client, _issues(org), bulk, {"action": "merge", "issue_ids": [first, second], "confirm": "1"}
    )
    assert merged.status_code == 303 and merged.headers["location"] == f"{_issues(org)}/{second}?done=merged"
    moved = client.get(f"{_issues(org)}/{first}", follow_redirects=False)
    assert moved.status_code == 301 and moved.headers["location"] == f"{_issues(org)}/{second}"
    html = client.get(f"{_issues(org)}/{second}?done=merged").text
    assert "Issues merged: their events" in html
    assert text_of(section(html, "merged-issues")).count("KeyError") == 1
    # Another organization's member cannot split it (its page is not theirs: 404).
    client.cookies.clear()
    sign_in(client, other["email"])
    other_page = f"/orgs/{other['org_slug']}/projects/{other['project']}/issues"
    refused = _post(
        client, other_page, f"{other_page}/{second}/split", {"fingerprints": rows[0]["fingerprint"]}
    )
    assert refused.status_code == 404


def test_merge_and_split_while_another_runs_answer_409(client, stores: Settings, org_factory) -> None:
    """While a merge or split of the project's issues runs (its claim held), the list's Merge and the page's
    Split out are refused with 409 and say so; nothing is merged. Once it is done, the merge goes through."""
    from stacklens.control.db import session_scope
    from stacklens.control.grouping_claims import grouping_claimed
    from stacklens.control.issue_merges import overrides_of

    org = org_factory("Busy")
    rows = land(org["org_id"], org["project_id"], [sdk_event(_fail_a), sdk_event(_fail_b)])
    first, second = str(rows[0]["issue_id"]), str(rows[1]["issue_id"])
    sign_in(client, org["email"])
    bulk, page = f"{_issues(org)}/bulk", f"{_issues(org)}/{second}"
    with session_scope(stores) as holder, grouping_claimed(holder, org["project_id"]):
        busy = _post(
            client, _issues(org), bulk, {"action": "merge", "issue_ids": [first, second], "confirm": "1"}
        )
        assert busy.status_code == 409
        assert "another merge or split of this project&#39;s issues is in progress" in busy.text
        split = _post(client, page, f"{page}/split", {"fingerprints": rows[0]["fingerprint"]})
        assert split.status_code == 409 and "in progress" in split.text
        with session_scope(stores) as session:
            assert overrides_of(session, org["project_id"]) == {}
    merged = _post(
        client, _issues(org), bulk, {"action": "merge", "issue_ids": [first, second], "confirm": "1"}
    )
    assert merged.status_code == 303
