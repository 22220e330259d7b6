"""A team's work on issues in Debian's chromium against the real server: create a team and choose its members,
assign an issue from its page, comment with markdown, a mention and the project's hostile payload (nothing
of it runs), see the history in time order, bulk-assign from the list and filter by `assigned:`.
Screenshots at 1400 and 1024 px go to tests/_artifacts/team/."""

from __future__ import annotations

import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.test_browser import HOSTILE

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _checkout() -> None:
    raise ValueError("card declined while charging order 42")


def _search() -> None:
    raise KeyError("query")


def test_team_assign_comment_and_list(chromium, server, stores, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory("Team Co")
    rows = land(org["org_id"], org["project_id"], [sdk_event(_checkout), sdk_event(_search)])
    member = add_member(stores, org)
    handle = member.split("@")[0]
    shots = shots_dir("team")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    issues = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    page.goto(f"{server}/orgs/{org['org_slug']}/settings/teams")
    expect(page.locator("#no-teams")).to_contain_text("No teams yet.")
    page.fill("#team-slug", "Bad Slug")
    page.evaluate("document.querySelector('#team-slug').removeAttribute('pattern')")
    page.click("#create-team")
    expect(page.locator("#teams-error")).to_contain_text("slug: use 1 to 63 lower-case letters")
    assert errors == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    errors.clear()  # the refused form's 400, as asked
    page.fill("#team-slug", "payments")
    page.fill("#team-name", "Payments")
    page.click("#create-team")
    expect(page.locator("#team-payments h2")).to_have_text("#payments Payments")
    page.check(f"#team-payments input[value='{member}']")
    page.click("#team-payments button[type=submit]")
    expect(page.locator("#team-payments .team-members")).to_have_text(f"1 member: {member}")
    page.screenshot(path=str(shots / "teams_1400.png"), full_page=True)

    page.goto(f"{issues}/{rows[0]['issue_id']}")
    expect(page.locator("#assignee-now")).to_have_text("Unassigned")
    page.select_option("#assign-to", "#payments")
    page.click("#assign-button")
    expect(page.locator("#assignee-now")).to_contain_text("Assigned to #payments")
    page.fill(
        "#comment-body",
        f"@{handle} can you look? **Card** declined — see [runbook](https://runbook.test/cards)\n\n{HOSTILE}",
    )
    page.click("#comment-submit")
    comment = page.locator(".timeline-item.comment")
    expect(comment).to_have_count(1)
    expect(comment.locator(".mention")).to_have_text(f"@{handle}")
    expect(comment.locator(".comment-body strong")).to_have_text("Card")
    expect(comment.locator(".comment-body a")).to_have_attribute("rel", "noopener noreferrer nofollow")
    expect(comment.locator(".comment-body")).to_contain_text("<script>window.__pwned=1</script>")
    assert page.evaluate("() => window.__pwned") is None
    page.click("#status-actions button[value=resolve]")
    items = page.locator("#issue-history .timeline-item")
    expect(items).to_have_count(3)
    assert [c.split()[1] for c in items.evaluate_all("els => els.map(e => e.className)")] == [
        "assignment",
        "comment",
        "status-change",
    ]
    page.locator("#issue-history").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "issue_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.reload()  # laid out for 1024 px from the start, as a reader at that width gets it
    page.screenshot(path=str(shots / "issue_1024.png"), full_page=True)

    # Edit one's own comment.
    page.click(".comment-edit summary")
    page.fill(".comment-edit textarea", "_Fixed_ in the next release")
    page.click(".comment-edit button[type=submit]")
    expect(page.locator(".timeline-item.comment em")).to_have_text("Fixed")
    expect(page.locator(".timeline-item.comment .timeline-meta")).to_contain_text("edited")

    # The list: bulk-assign the other issue to the member, then filter.
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{issues}?status=all")
    page.check(f"input[name=issue_ids][value='{rows[1]['issue_id']}']")
    page.select_option("#bulk-assignee", member)
    page.click("#bulk-assign")
    expect(page.locator(".issue-row .assignee")).to_have_count(2)
    page.screenshot(path=str(shots / "list_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.reload()
    page.screenshot(path=str(shots / "list_1024.png"), full_page=True)
    page.click("#assigned-filters a:has-text('#payments (team)')")
    expect(page.locator(".issue-row")).to_have_count(1)
    expect(page.locator(".issue-row .issue-title")).to_contain_text("card declined")
    page.fill("input[name=query]", "unassigned")
    page.click("#filters button[type=submit]")
    expect(page.locator(".issue-row")).to_have_count(0)
    expect(page.locator("table.issues")).to_contain_text("No issues match.")

    # The member: assigned:me finds both (one directly, one through the team).
    page.context.clear_cookies()
    sign_in_page(page, server, member, PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{issues}?status=all")
    page.click("#assigned-filters a:has-text('Assigned to me')")
    expect(page.locator(".issue-row")).to_have_count(2)
    page.goto(f"{server}/orgs/{org['org_slug']}/settings/teams")
    expect(page.locator("#new-team")).to_have_count(0)
    expect(page.locator(".team-members-form")).to_have_count(0)
    page.screenshot(path=str(shots / "teams_member_1024.png"), full_page=True)

    # Their notification settings: daily digest of comments in this project.
    page.goto(f"{server}/account")
    page.click("#notifications-link")
    choice = f"{org['org_slug']}/{org['project']}/comments"
    page.select_option(f"select[name='{choice}']", "daily")
    page.click("#save-notifications")
    expect(page.locator("#notifications-saved")).to_have_text("Saved.")
    expect(page.locator(f"select[name='{choice}']")).to_have_value("daily")
    page.screenshot(path=str(shots / "notifications_1024.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.reload()
    page.screenshot(path=str(shots / "notifications_1400.png"), full_page=True)
    assert not errors, errors


def test_ownership_rules_assign_new_issues(chromium, server, stores, org_factory) -> None:
    from playwright.sync_api import expect

    from stacklens.control.db import session_scope
    from stacklens.control.teams import create_team
    from stacklens.issues.auto_assign import assign_new_issues
    from stacklens.warehouse.client import get_warehouse
    from tests.stacklens.issues.test_auto_assign import event

    org = org_factory("Owned Co")
    with session_scope(stores) as session:
        create_team(session, org["org_id"], "payments", "Payments")
    shots = shots_dir("team")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{base}/settings")
    page.click("#settings-ownership-link")
    page.fill("#codeowners-text", "/src/checkout/ @acme/payments\n/src/search/ @someone\n")
    page.click("#import-codeowners")
    expect(page.locator("#codeowners-notes")).to_contain_text("@someone is no member here")
    expect(page.locator("#rules-text")).to_have_value("path:src/checkout/ #payments")
    page.click("#save-rules")
    expect(page.locator("#rules-saved")).to_contain_text("Rules saved.")
    page.screenshot(path=str(shots / "ownership_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.reload()
    page.screenshot(path=str(shots / "ownership_1024.png"), full_page=True)

    (row,) = land(org["org_id"], org["project_id"], [event("/srv/app/src/checkout/pay.py")])
    with session_scope(stores) as session:
        assert assign_new_issues(session, get_warehouse(stores)).assigned == 1
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base}/issues/{row['issue_id']}")
    expect(page.locator("#assignee-now")).to_contain_text("Assigned to #payments")
    expect(page.locator("#assignee-why")).to_have_text("— matched path:src/checkout/ → #payments")
    expect(page.locator("#issue-history .assignment")).to_contain_text(
        "system assigned it to #payments (matched path:src/checkout/ → #payments)"
    )
    page.locator("#assignee").screenshot(path=str(shots / "issue_assigned_by_rule.png"))
    assert not errors, errors
