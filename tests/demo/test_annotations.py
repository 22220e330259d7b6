"""The demo's deploy annotations: one per release the shop shipped, at the release's first seen, tagged deploy
and naming the release, posted through the real API; run again, nothing is posted twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from demo.annotations import TAGS, annotate_deploys, deploy_text
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise RuntimeError("checkout failed")


def test_each_release_gets_one_deploy_annotation_at_its_first_seen(client, org_factory) -> None:
    org = org_factory("Demo Shop")
    now = datetime.now(UTC).replace(microsecond=0)
    payloads = []
    for version, days_ago in (("shop@1.2.0", 9), ("shop@1.2.0", 8), ("shop@1.3.0", 4), ("shop@1.3.0", 2)):
        payload = sdk_event(_fail, release=version)
        payload["timestamp"] = (now - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")
        payloads.append(payload)
    land(org["org_id"], org["project_id"], payloads)

    said = annotate_deploys(client, org["api_key"], org["project"])
    assert said == "  Annotated 2 deploy(s) as the shop's CI would."
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    rows = client.get("/api/annotations", params={"range": "30d"}, headers=auth).json()["rows"]
    got = sorted((r["release"], r["text"], r["tags"], r["project"], r["time"][:19]) for r in rows)
    expected = [
        (v, deploy_text(v), TAGS, org["project"], (now - timedelta(days=d)).isoformat()[:19])
        for v, d in (("shop@1.2.0", 9), ("shop@1.3.0", 4))
    ]
    assert got == expected
    assert (
        annotate_deploys(client, org["api_key"], org["project"])
        == "  Annotated 0 deploy(s) as the shop's CI would."
    )
