"""The demo's deploy annotations: what a CI pipeline posts when it ships a release.

The demo's traffic moves the shop from one release to the next over its history (``demo.traffic.release_at``);
SDKs see each release only through its events. A team would also have its CI say when it deployed, as Grafana
users do with ``POST /api/annotations`` — so once the backfill has landed this posts one annotation per
release the shop shipped, at the moment its traffic switched to it (the release's first seen), tagged
``deploy``. The charts then show the CI's note beside the release marker (one marker: they are at the same
moment). Safe to run again: a release whose deploy is already annotated is skipped."""

from __future__ import annotations

import httpx

TAGS = ["deploy", "ci"]


def deploy_text(version: str) -> str:
    return f"Deploy {version} to production (CI)"


def annotate_deploys(client: httpx.Client, api_key: str, project: str) -> str:
    """Annotate each release's deploy once; what was done, as one line for the console."""
    headers = {"Authorization": f"Bearer {api_key}"}
    releases = client.get(f"/api/projects/{project}/releases", params={"range": "90d"}, headers=headers)
    releases.raise_for_status()
    existing = client.get("/api/annotations", params={"range": "90d", "project": project}, headers=headers)
    existing.raise_for_status()
    done = {row["text"] for row in existing.json()["rows"]}
    posted = 0
    for row in sorted(releases.json()["rows"], key=lambda r: str(r["first_seen"])):
        text = deploy_text(str(row["version"]))
        if text in done or not row.get("first_seen"):
            continue
        body = {
            "time": row["first_seen"],
            "text": text,
            "tags": TAGS,
            "project": project,
            "release": row["version"],
        }
        client.post("/api/annotations", json=body, headers=headers).raise_for_status()
        posted += 1
    return f"  Annotated {posted} deploy(s) as the shop's CI would."
