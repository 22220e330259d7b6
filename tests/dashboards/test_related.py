"""The related-issues panel, filled by the pipelines' own `related_issues` asset (materialized in process on
the test's warehouse): grouped by reason, each related issue linked with what it shares and its strength."""

from __future__ import annotations

import re
import time
import uuid

import dagster as dg

from pipelines.assets.issues import related_issues
from pipelines.resources import resources_for
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event


def _checkout() -> None:
    raise ValueError("checkout failed")


def _payment() -> None:
    raise KeyError("payment")


def _unrelated() -> None:
    raise TypeError("elsewhere")


def _panel(html: str) -> dict[str, list[str]]:
    section = re.search(r'<section class="card" id="related">(.*?)</section>', html, re.S)
    assert section, "no related-issues panel"
    groups: dict[str, list[str]] = {}
    for label, body in re.findall(r"<h3>(.*?)</h3>\s*<ul class=\"plain\">(.*?)</ul>", section.group(1), re.S):
        groups[label] = [" ".join(item.split()) for item in re.findall(r"<li[^>]*>(.*?)</li>", body, re.S)]
    return groups


def test_related_panel_groups_by_reason_with_strength(client, org_factory, stores) -> None:
    org = org_factory()
    ann = {"id": "u-ann", "email": "ann@example.test"}
    rows = land(
        org["org_id"],
        org["project_id"],
        [
            sdk_event(_checkout, user=ann, release="shop@1.0"),
            sdk_event(_payment, user=ann, release="shop@1.0"),
            sdk_event(_unrelated, user={"id": "u-bob"}, release="shop@2.0"),
        ],
    )
    checkout, payment, unrelated = (row["issue_id"] for row in rows)
    result = dg.materialize([related_issues], resources={"warehouse": resources_for(stores)["warehouse"]})
    assert result.success

    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    groups = _panel(client.get(f"{base}/{checkout}").text)
    assert list(groups) == ["Same user", "Same time window", "Similar stack trace", "Same release"]
    # Ann's two issues: one shared user of one each (Jaccard 1.00); one shared release of one each.
    for label in ("Same user", "Same release"):
        assert len(groups[label]) == 1, groups[label]
        item = groups[label][0]
        assert f'href="{base}/{payment}"' in item and "KeyError" in item
        assert "1 shared · 1.00" in item
    assert all(
        f"/{unrelated}" not in item for label in ("Same user", "Same release") for item in groups[label]
    )
    # Both issues' events arrived within the same five minutes as the third one's.
    window = " ".join(groups["Same time window"])
    assert f"/{payment}" in window and f"/{unrelated}" in window

    # One in-app frame (the capturing helper) shared out of three distinct ones: Jaccard 1/3.
    assert any(f"/{payment}" in item and "1 shared · 0.33" in item for item in groups["Similar stack trace"])

    # The unrelated issue shares no user or release: those groups say so.
    other = _panel(client.get(f"{base}/{unrelated}").text)
    assert other["Same user"] == ["None."] and other["Same release"] == ["None."]
    assert any(f"/{checkout}" in item for item in other["Same time window"])


def _job_event(function: str, user: str, seconds_ago: float, release: str = "shop@1.0") -> dict:
    """An event of its own stack (one frame named ``function``) by ``user``, ``seconds_ago`` from now."""
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": time.time() - seconds_ago,
        "release": release,
        "user": {"id": user},
        "exception": {
            "values": [
                {
                    "type": "RuntimeError",
                    "value": f"{function} failed",
                    "stacktrace": {
                        "frames": [{"module": "billing.jobs", "function": function, "in_app": True}]
                    },
                }
            ]
        },
    }


def test_same_release_lists_issues_that_share_something_more_ten_at_most(client, org_factory, stores) -> None:
    org = org_factory()
    rows = land(
        org["org_id"],
        org["project_id"],
        [
            _job_event("close_books", "u-ann", 3600),
            # Release only: another user, an hour before, its own frame.
            _job_event("send_invoices", "u-bob", 7200),
            # Release and user (windows an hour apart, frames of their own): twelve of them.
            *[_job_event(f"job_{n:02d}", "u-ann", 0) for n in range(12)],
        ],
    )
    books, invoices = rows[0]["issue_id"], rows[1]["issue_id"]
    result = dg.materialize([related_issues], resources={"warehouse": resources_for(stores)["warehouse"]})
    assert result.success

    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    groups = _panel(client.get(f"{base}/{books}").text)
    same_release = groups["Same release"]
    assert len(same_release) == 10, same_release
    assert all("also same user" in item and "job_" in item for item in same_release), same_release
    assert not any(f"/{invoices}" in item for item in same_release)
    assert len(groups["Same user"]) == 10
    # The release-only issue relates to nothing by release alone.
    assert _panel(client.get(f"{base}/{invoices}").text)["Same release"] == ["None."]
