"""The demo's merge: the shop's two ways of not sending a receipt, tracked as one issue.

The background worker's ``demo_shop.mailer.send`` fails when the relay refuses the connection
(*SmtpUnavailable*) and when the order's address is bad (*ValueError: cannot send receipt …*): grouping keeps
them apart (two exceptions, two crash sites), and a team that owns "receipts are not sent" merges them.
Once the backfill has landed, this does so the way a person would (``POST /api/issues/merge``), so the
demo's issue page shows a *Merged issues* section (with Split out) and the history says who merged what.
Safe to run again: with one receipt issue left there is nothing to merge."""

from __future__ import annotations

import httpx

TITLES = ("SmtpUnavailable:", "ValueError: cannot send receipt")


def merge_demo_issues(client: httpx.Client, api_key: str, project: str) -> str:
    """Merge the project's receipt issues; what was done, as one line for the console."""
    headers = {"Authorization": f"Bearer {api_key}"}
    page = client.get(
        f"/api/projects/{project}/issues",
        params={"status": "all", "range": "90d", "sort": "events", "limit": 100},
        headers=headers,
    )
    page.raise_for_status()
    ids = [i["id"] for i in page.json()["issues"] if str(i["title"]).startswith(TITLES)]
    if len(ids) < 2:
        return f"  Nothing to merge: {len(ids)} receipt issue(s)."
    merged = client.post("/api/issues/merge", json={"ids": ids}, headers=headers)
    merged.raise_for_status()
    body = merged.json()
    return (
        f"  Merged {len(body['merged'])} receipt issue(s) into issue {body['id']} ({body['events']} events)."
    )
