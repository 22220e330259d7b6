from __future__ import annotations

from fastapi.testclient import TestClient

from api.app import create_app
from api.token_buckets import get_rate_limiter
from stacklens.cli.main import main
from stacklens.settings import Settings


def test_limits_show_quota_usage_and_follow_set_quota(control_settings: Settings, make_org, capsys) -> None:
    org = make_org("Acme")
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    # Half the minute's quota: the bucket refills 1,000 a second, so the reads below see it partly spent even
    # when a loaded machine takes seconds between the two.
    get_rate_limiter(control_settings).take_events(org["org_id"], 30_000, 60_000)
    with TestClient(create_app(control_settings)) as client:
        body = client.get("/api/limits", headers=headers).json()
        assert body["events_per_minute"]["limit"] == 60_000
        assert 30_000 <= body["events_per_minute"]["available"] < 60_000
        assert body["requests_per_second"]["limit"] == 50
        assert body["backend"] == "memory"
        assert body["this_hour"]["requests"] == 1
        assert main(["admin", "set-quota", "--org", "Acme", "--events-per-minute", "120000"]) == 0
        raised = client.get("/api/limits", headers=headers).json()
        assert raised["events_per_minute"]["limit"] == 120_000
        # A raised quota applies at once: the difference is added to what was available.
        assert raised["events_per_minute"]["available"] >= body["events_per_minute"]["available"] + 60_000
        assert raised["this_hour"]["requests"] == 2
        other = make_org("Other")
        theirs = client.get("/api/limits", headers={"Authorization": f"Bearer {other['api_key']}"}).json()
        assert theirs["events_per_minute"] == {"limit": 60_000, "available": 60_000}
