"""Compare two events in a real browser (issue 71): two events of one issue whose recursions differ by three
frames over 27 identical library frames. The page says how the frames were aligned and how many were skipped,
and only the three frames one event has differ. Screenshots at 1024 and 1440 px (tests/_artifacts/compare)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land
from tests.dashboards.test_performance_browser import CSP_PROBE

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("compare")


def _event(depth: int) -> dict[str, Any]:
    """Outermost frame first, as sentry-python sends them: 27 framework frames, then the recursion."""
    frames = [
        {"filename": f"lib/framework_{n}.py", "function": f"dispatch_{n}", "lineno": 10 + n, "in_app": False}
        for n in range(27)
    ]
    frames += [
        {
            "filename": "app/search.py",
            "function": "expand",
            "lineno": 40,
            "in_app": True,
            "vars": {"level": str(n)},
        }
        for n in range(depth)
    ]
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": time.time() - 60,
        "exception": {
            "values": [{"type": "RecursionError", "value": "too deep", "stacktrace": {"frames": frames}}]
        },
    }


def test_compare_aligns_frames_and_says_how_many_were_skipped(chromium, server, org_factory) -> None:
    org = org_factory()
    shallow, deep = land(org["org_id"], org["project_id"], [_event(3), _event(6)])
    assert shallow["issue_id"] == deep["issue_id"]
    issue = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues/{shallow['issue_id']}"
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{issue}/compare?a={shallow['event_id']}&b={deep['event_id']}")
    summary = page.locator("#frame-alignment").inner_text()
    assert "30 in both, 3 skipped (0 only in the first event, 3 only in the second)" in summary, summary
    stack = page.locator("table.compare tbody").first
    differing = stack.locator("tr.differs").all_inner_texts()
    # The frame count and the three frames only the deeper event has; the 27 library frames read as the same.
    assert len(differing) == 4 and sum("—" in row for row in differing) == 3, differing
    assert stack.locator("tr.same", has_text="dispatch_").count() == 27
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"compare-{width}.png"), full_page=True)
    assert page.evaluate("window.__csp || []") == []
    # Issue 71 (small things): notification settings name the project, its slug beside it.
    page.goto(f"{server}/account/notifications")
    assert page.locator("td.project-name").first.inner_text() == f"Web App {org['project']}"
    page.screenshot(path=str(SHOTS / "notifications-1440.png"), full_page=True)
    assert errors == []
