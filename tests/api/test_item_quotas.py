"""Project quotas, category limits and spike protection through a real server, with memory and Redis buckets;
the refusal's X-Sentry-Rate-Limits as sentry-python's own transport reads and obeys it."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import pytest
import sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef
from sentry_sdk.transport import HttpTransport

from api import token_buckets
from api.token_buckets import get_rate_limiter
from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.api.routers.test_ingest import error_payload, transaction_payload
from tests.api.sentry_live import envelope, event_item, fresh_event
from tests.conftest import override_settings


@pytest.fixture(params=["memory", "redis"])
def quota_settings(request: pytest.FixtureRequest, settings: Settings) -> Settings:
    """Migrated stores; the rate limits in this process's memory or in Redis; spike protection's floor low
    enough for a test to reach."""
    current = settings.model_copy(update={"spike_floor_per_minute": 1000})
    if request.param == "redis":
        current = current.model_copy(update={"redis_url": request.getfixturevalue("redis_url")})
    override_settings(current)
    migrate_control_store(current)
    apply_migrations(current)
    return current


def _org(settings: Settings, projects: int = 2) -> dict[str, Any]:
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(
            session, f"Q {uuid.uuid4().hex[:6]}", f"o-{uuid.uuid4().hex[:8]}@example.test", "password-123"
        )
        made = [create_project(session, org.id, f"Proj {i} {uuid.uuid4().hex[:4]}") for i in range(projects)]
        return {
            "org_id": org.id,
            "api_key": api_key,
            "projects": [{"id": p.id, "slug": p.slug, "key": key} for p, key in made],
        }


def _send(base: str, project: dict[str, Any], payload: dict[str, Any], kind: str = "event") -> httpx.Response:
    item = ({"type": kind}, json.dumps(payload).encode())
    return httpx.post(
        f"{base}/api/{project['id']}/envelope/",
        params={"sentry_key": project["key"]},
        content=envelope([item] if kind != "event" else [event_item(payload)]),
    )


def test_a_project_quota_refuses_that_project_while_another_flows(quota_settings: Settings) -> None:
    org = _org(quota_settings)
    noisy, quiet = org["projects"]
    with serve(quota_settings) as base:
        auth = {"Authorization": f"Bearer {org['api_key']}"}
        put = httpx.put(
            f"{base}/api/projects/{noisy['slug']}/quota", json={"events_per_minute": 3}, headers=auth
        )
        assert put.status_code == 200, put.text
        answer = put.json()
        assert {k: answer[k] for k in ("project", "events_per_minute", "categories", "attachment_bytes")} == {
            "project": noisy["slug"],
            "events_per_minute": 3,
            "categories": {},
            "attachment_bytes": None,  # no quota of its own: the installation's applies
        }
        assert (
            httpx.get(f"{base}/api/projects/{noisy['slug']}/quota", headers=auth).json()["events_per_minute"]
            == 3
        )
        answers = [_send(base, noisy, fresh_event()).status_code for _ in range(4)]
        assert answers == [200, 200, 200, 429]
        refused = _send(base, noisy, fresh_event())
        assert refused.status_code == 429 and refused.json()["error"] == "Rate Limited"
        retry = int(refused.headers["Retry-After"])
        assert 1 <= retry <= 20
        assert refused.headers["X-Sentry-Rate-Limits"] == f"{retry}::project:project_quota"
        # The other project of the same organization keeps flowing.
        assert [_send(base, quiet, fresh_event()).status_code for _ in range(5)] == [200] * 5
        bad = httpx.put(
            f"{base}/api/projects/{noisy['slug']}/quota", json={"events_per_minute": 0}, headers=auth
        )
        assert bad.status_code == 400
        other = _org(quota_settings)
        foreign = httpx.put(
            f"{base}/api/projects/{noisy['slug']}/quota",
            json={"events_per_minute": 5},
            headers={"Authorization": f"Bearer {other['api_key']}"},
        )
        assert foreign.status_code == 404


def test_a_category_limit_and_sentry_python_backs_off_only_that_category(quota_settings: Settings) -> None:
    org = _org(quota_settings, projects=1)
    (project,) = org["projects"]
    with serve(quota_settings) as base:
        put = httpx.put(
            f"{base}/api/projects/{project['slug']}/quota",
            json={"events_per_minute": None, "categories": {"transaction": 1}},
            headers={"Authorization": f"Bearer {org['api_key']}"},
        )
        assert put.json()["categories"] == {"transaction": 1}
        dsn = f"{base.replace('://', '://' + project['key'] + '@')}/{project['id']}"
        # The SDK's own client and HTTP transport (no global init): what it sends, how it reads the answer.
        client = sentry_sdk.Client(dsn=dsn, send_client_reports=True, default_integrations=False)
        transport = client.transport
        assert isinstance(transport, HttpTransport)

        def capture(kind: str, payload: dict[str, Any]) -> None:
            transport.capture_envelope(Envelope(items=[Item(payload=PayloadRef(json=payload), type=kind)]))
            client.flush(timeout=10)

        capture("transaction", transaction_payload())  # spends the one transaction of the minute
        capture("transaction", transaction_payload())  # refused: 429 naming `transaction`
        disabled = {category for category, until in transport._disabled_until.items() if until}
        assert disabled == {"transaction"}, transport._disabled_until
        assert transport._check_disabled("transaction") and not transport._check_disabled("error")
        # Errors still flow; the next transaction is dropped in the SDK (counted as `ratelimit_backoff`).
        before = _accepted(base, org)
        capture("event", error_payload(1))
        capture("transaction", transaction_payload())
        client.close(timeout=10)  # sends the client report of what it dropped
        after = _accepted(base, org)
        assert after.get(("error", "accepted", "")) == before.get(("error", "accepted", ""), 0) + 1
        assert after.get(("transaction", "accepted", "")) == 1
        assert after.get(("transaction", "rate_limited", "category_quota")) == 1
        assert after.get(("transaction", "rate_limited", "ratelimit_backoff")) == 1


def _accepted(base: str, org: dict[str, Any]) -> dict[tuple[str, str, str], int]:
    deadline = time.monotonic() + 5
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        answer = httpx.get(f"{base}/api/outcomes", headers={"Authorization": f"Bearer {org['api_key']}"})
        assert answer.status_code == 200, answer.text
        rows = answer.json()["rows"]
        if rows:
            break
        time.sleep(0.2)
    counts: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row["category"], row["outcome"], row["reason"])
        counts[key] = counts.get(key, 0) + row["quantity"]
    return counts


def test_spike_protection_holds_a_project_to_a_multiple_of_its_last_hour(
    quota_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = quota_settings.model_copy(update={"spike_floor_per_minute": 3, "spike_multiple": 10.0})
    override_settings(current)
    org = _org(current)
    spiking, steady = org["projects"]
    limiter = get_rate_limiter(current)
    # The six requests must fall in the minute the history is written against: the limiter's clock is held
    # at this minute for the test (on a loaded machine the wall clock's minute turned between the two, and
    # waiting for a fresh minute cost up to 20 s a run).
    minute = int(time.time() // 60)
    monkeypatch.setattr(token_buckets, "_minute", lambda now=None: minute if now is None else int(now // 60))
    with serve(current) as base:
        # The last hour: 30 items in all, half a per minute; held to max(3, 10 × 0.5) = 5 per minute.
        for m in range(minute - 60, minute, 2):
            limiter.buckets.add_recent(limiter._history_key(spiking["id"]), m, 1)
        assert limiter.buckets.recent(limiter._history_key(spiking["id"]), range(minute - 60, minute)) == 30
        started = time.monotonic()
        answers = [_send(base, spiking, fresh_event()) for _ in range(6)]
        # The bucket refills 5 a minute, one every 12 s: on a machine so loaded that the sends took longer,
        # each 12 s let one more through (the full run's failure) — the refusal then comes that much later.
        while answers[-1].status_code == 200 and len(answers) < 6 + (time.monotonic() - started) // 12:
            answers.append(_send(base, spiking, fresh_event()))
        assert [a.status_code for a in answers] == [200] * (len(answers) - 1) + [429]
        header = answers[-1].headers["X-Sentry-Rate-Limits"]
        assert header.endswith("::project:spike_protection"), header
        assert "spike protection: the project is held to 5 events per minute" in answers[-1].json()["detail"]
        # A project without history is held to the floor only: a quiet project can still send.
        assert [_send(base, steady, fresh_event()).status_code for _ in range(3)] == [200] * 3
