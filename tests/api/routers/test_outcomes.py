"""Outcomes through a real server: every kind of refusal and accepted items sent through the entrances are
counted once, by project, category, outcome and reason, and `GET /api/outcomes` and the usage page show the
counts that were sent; the page in Debian's chromium at 1400 and 1024 px (screenshots in
tests/_artifacts/usage, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.api.routers.test_ingest import error_payload, transaction_payload
from tests.api.sentry_live import envelope, event_item, fresh_event
from tests.browser import shots_dir, sign_in_page, watch_errors

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PASSWORD = "password-123"
SHOTS = shots_dir("usage")
UNKNOWN_KEY = "stacklens_app_" + "Z" * 24


@pytest.fixture
def stores(settings: Settings) -> Settings:
    migrate_control_store(settings)
    apply_migrations(settings)
    return settings


def _org(settings: Settings) -> dict[str, Any]:
    email = f"owner-{uuid.uuid4().hex[:8]}@example.test"
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, f"Usage {uuid.uuid4().hex[:6]}", email, PASSWORD)
        a, key_a = create_project(session, org.id, f"Shop {uuid.uuid4().hex[:4]}")
        b, key_b = create_project(session, org.id, f"Admin {uuid.uuid4().hex[:4]}")
        return {
            "org_id": org.id,
            "org_slug": org.slug,
            "email": email,
            "api_key": api_key,
            "a": {"id": a.id, "slug": a.slug, "key": key_a},
            "b": {"id": b.id, "slug": b.slug, "key": key_b},
        }


def _line(kind: str, key: str, payload: Any) -> bytes:
    # The order the SDKs write: type and app key first.
    return json.dumps(
        {"v": 1, "type": kind, "app_key": key, "ts": "2026-11-21T19:22:03.123Z", "payload": payload}
    ).encode()


def _send_everything(base: str, org: dict[str, Any]) -> None:
    a, b = org["a"], org["b"]
    auth = {"Authorization": f"Bearer {org['api_key']}", "Content-Type": "application/x-ndjson"}
    body = b"\n".join(
        [
            _line("event", a["key"], error_payload(1)),
            _line("event", a["key"], error_payload(2)),
            _line("transaction", a["key"], transaction_payload()),
            _line("event", a["key"], "not an event"),  # invalid
            _line("event", a["key"], {"message": "x" * (1024 * 1024 + 10)}),  # too large
            _line("event", UNKNOWN_KEY, error_payload(3)),  # no project of the organization
            _line(
                "client_report",
                b["key"],
                {
                    "timestamp": time.time(),
                    "discarded_events": [
                        {"reason": "queue_overflow", "category": "error", "quantity": 4},
                        {"reason": "sample_rate", "category": "transaction", "quantity": 7},
                        {
                            "reason": "sample_rate",
                            "category": "profile",
                            "quantity": 2,
                        },  # not a category of ours
                    ],
                },
            ),
        ]
    )
    answer = httpx.post(f"{base}/api/ingest", content=body, headers=auth, timeout=30)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["accepted"], len(answer.json()["rejected"])) == (3, 3)
    # An envelope with an event and an attachment (kept: docs/feedback.md).
    attachment = ({"type": "attachment", "filename": "log.txt"}, b"hello")
    sent = httpx.post(
        f"{base}/api/{b['id']}/envelope/",
        params={"sentry_key": b["key"]},
        content=envelope([event_item(fresh_event()), attachment]),
    )
    assert sent.status_code == 200, sent.text
    # Project a's own quota: one event a minute; the second envelope is refused.
    put = httpx.put(
        f"{base}/api/projects/{a['slug']}/quota",
        json={"events_per_minute": 1},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert put.status_code == 200, put.text
    codes = [
        httpx.post(
            f"{base}/api/{a['id']}/envelope/",
            params={"sentry_key": a["key"]},
            content=envelope([event_item(fresh_event())]),
        ).status_code
        for _ in range(2)
    ]
    assert codes == [200, 429]


def _expected(org: dict[str, Any]) -> dict[tuple[str | None, str, str, str], int]:
    a, b = org["a"]["slug"], org["b"]["slug"]
    return {
        (a, "error", "accepted", ""): 3,
        (a, "transaction", "accepted", ""): 1,
        (a, "error", "invalid", "unreadable"): 1,
        (a, "error", "too_large", "line_too_large"): 1,
        (a, "error", "rate_limited", "project_quota"): 1,
        (None, "error", "invalid", "unknown_app_key"): 1,
        (b, "client_report", "accepted", ""): 1,
        (b, "error", "dropped", "queue_overflow"): 4,
        (b, "transaction", "filtered", "sample_rate"): 7,
        (b, "error", "accepted", ""): 1,
        (b, "attachment", "accepted", ""): 1,
    }


def _api_counts(base: str, org: dict[str, Any], **params: str) -> dict[tuple[str | None, str, str, str], int]:
    answer = httpx.get(  # read-your-writes waits for pending counts: up to a minute on a slow, loaded host
        f"{base}/api/outcomes",
        params=params,
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    counts: dict[tuple[str | None, str, str, str], int] = {}
    # The hour the outcomes were counted in: this one, or the one before when the test crossed the hour.
    hours = {time.strftime("%Y-%m-%dT%H:00:00Z", time.gmtime(time.time() - ago)) for ago in (0, 600)}
    for row in answer.json()["rows"]:
        assert set(row) == {"hour", "project", "category", "outcome", "reason", "quantity"}
        assert row["hour"] in hours
        key = (row["project"], row["category"], row["outcome"], row["reason"])
        counts[key] = counts.get(key, 0) + row["quantity"]
    return counts


def test_every_outcome_is_counted_once_through_the_api_and_the_page(chromium, stores: Settings) -> None:
    org = _org(stores)
    other = _org(stores)
    with serve(stores) as base:
        _send_everything(base, org)
        expected = _expected(org)
        assert _api_counts(base, org) == expected  # read-your-writes: pending counts are written first
        assert _api_counts(base, org, project=org["b"]["slug"], category="error") == {
            k: v for k, v in expected.items() if k[0] == org["b"]["slug"] and k[1] == "error"
        }
        assert _api_counts(base, other) == {}, "another organization sees none of it"
        bad = httpx.get(
            f"{base}/api/outcomes",
            params={"range": "1y"},
            headers={"Authorization": f"Bearer {org['api_key']}"},
        )
        assert bad.status_code == 400
        time.sleep(2.5)  # a tick of the writer: nothing is counted twice
        assert _api_counts(base, org) == expected
        _check_page(base, org, expected)
        _screenshots(chromium, base, org, other)


def _check_page(
    base: str, org: dict[str, Any], expected: dict[tuple[str | None, str, str, str], int]
) -> None:
    with httpx.Client(base_url=base, timeout=30) as web:
        login = web.get("/login").text
        token = re.search(r'name="csrf_token" value="([^"]+)"', login)
        assert token
        signed = web.post(
            "/login", data={"email": org["email"], "password": PASSWORD, "csrf_token": token.group(1)}
        )
        assert signed.status_code in (200, 303), signed.text
        page = web.get(f"/orgs/{org['org_slug']}/usage")
        assert page.status_code == 200
        html = page.text
        totals: dict[str, int] = {}
        for (_, _, outcome, _), n in expected.items():
            totals[outcome] = totals.get(outcome, 0) + n
        for outcome, n in totals.items():
            assert f'data-outcome="{outcome}">{n:,}<' in html, outcome
        shown = re.findall(r'data-quantity="(\d+)"', html)
        assert sum(int(n) for n in shown) == sum(expected.values())
        assert "<code>queue_overflow</code>" in html and "<code>line_too_large</code>" in html
        # Each reason says why, in plain words: the service's own, and the SDK's as the SDK's.
        assert "the line is over the 1 MiB line limit" in html
        assert "the SDK&#39;s send queue was full (reported by the SDK)" in html
        assert 'id="nav-usage"' in html
        assert web.get(f"/orgs/{org['org_slug']}/usage", params={"range": "1y"}).status_code == 400


def _screenshots(chromium: Browser, base: str, org: dict[str, Any], other: dict[str, Any]) -> None:

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    for width in (1400, 1024):
        page = chromium.new_page(viewport={"width": width, "height": 900})
        watch_errors(page, errors, with_url=True)
        sign_in_page(page, base, org["email"], PASSWORD)
        page.goto(f"{base}/orgs/{org['org_slug']}/usage")
        page.wait_for_selector("#plot-usage-outcomes .main-svg")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page is {overflow} px wider than the window at {width} px"
        page.screenshot(path=str(SHOTS / f"usage-{width}.png"), full_page=True)
        page.close()
    page = chromium.new_page(viewport={"width": 1024, "height": 700})
    sign_in_page(page, base, other["email"], PASSWORD)
    page.goto(f"{base}/orgs/{other['org_slug']}/usage")
    assert "No items in the last 24h" in page.inner_text("main")
    page.screenshot(path=str(SHOTS / "usage-empty-1024.png"), full_page=True)
    assert errors == []
