"""The demo's merge: the shop's two receipt failures (relay refused, bad address: two exceptions of one
`send`) become one issue through the real API; other issues stay; run again, there is nothing left to
merge."""

from __future__ import annotations

from demo.merges import merge_demo_issues
from tests.dashboards.landing import land, sdk_event


class SmtpUnavailable(ConnectionError):
    pass


def _send(email: str) -> None:
    if email == "relay":
        raise SmtpUnavailable("relay smtp-2.internal:587 refused connection")
    raise ValueError(f"cannot send receipt for o-1: bad address {email!r}")


def _out_of_stock() -> None:
    raise RuntimeError("only 1 left")


def test_the_two_receipt_issues_become_one(client, org_factory) -> None:
    org = org_factory("Demo Shop")
    payloads = [sdk_event(lambda: _send("relay")) for _ in range(2)]
    payloads += [sdk_event(lambda: _send("nobody")), sdk_event(_out_of_stock)]
    rows = land(org["org_id"], org["project_id"], payloads)
    assert len({r["issue_id"] for r in rows[:3]}) == 2, "two exceptions, two issues"
    said = merge_demo_issues(client, org["api_key"], org["project"])
    assert said == f"  Merged 1 receipt issue(s) into issue {rows[0]['issue_id']} (3 events)."
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    listed = client.get(f"/api/projects/{org['project']}/issues", headers=auth).json()["issues"]
    assert sorted((i["id"], i["events"]) for i in listed) == sorted(
        [(str(rows[0]["issue_id"]), 3), (str(rows[3]["issue_id"]), 1)]
    )
    again = merge_demo_issues(client, org["api_key"], org["project"])
    assert again == "  Nothing to merge: 1 receipt issue(s)."
