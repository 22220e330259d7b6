"""The release-health rule types over real warehouse rows (raw `sessions` in the embedded engine, folded into
the session states as the pipeline folds them), evaluated by the live tick and delivered to a real local
webhook receiver:

- ``crash_free_rate`` watches the newest release (by first seen, in the rule's environment): too few sessions
  is insufficient data, never firing; below the threshold fires; between the threshold and the resolve
  threshold it stays firing; at or above the resolve threshold it resolves — each transition one signed
  notification naming the release, the value and the threshold in the catalog's units;
- ``release_regression`` fires once for a release whose verdict against the previous release is a significant
  regression, naming the reason (metric, both values, both sample sizes); a newer release with a change
  that is not significant notifies nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.alerts.measures import measure
from stacklens.alerts.release_measures import crash_free
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertEvaluation, AlertRuleState
from stacklens.releases.health import Window, release_health
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.alerts.release_seed import land, spread

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
BASE = "http://sl.test"


@pytest.fixture
def world(settings: Settings, client):
    settings = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    receiver = Receiver().start()
    org_id, project_id, slug = org_with_project(settings)
    with session_scope(settings) as session:
        channel, secret = create_channel(
            session, org_id, settings, type="webhook", name="hook", url=receiver.url
        )
    receiver.secret = secret
    yield settings, client, org_id, project_id, slug, channel.id, receiver
    receiver.stop()


def _states(settings: Settings, rule_id: int) -> dict[str, str]:
    with session_scope(settings) as session:
        return {
            s.scope_key: s.state
            for s in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id == rule_id))
        }


def _decisions(settings: Settings, rule_id: int) -> list[str]:
    with session_scope(settings) as session:
        return [
            e.decision
            for e in session.scalars(
                select(AlertEvaluation).where(AlertEvaluation.rule_id == rule_id).order_by(AlertEvaluation.id)
            )
        ]


def _delivered(settings: Settings, receiver: Receiver) -> list[dict]:
    outbox.drain(settings)
    assert all(r.signature_ok for r in receiver.received)
    return [r.json()["data"] for r in receiver.received]


def test_crash_free_rate_of_the_newest_release_fires_below_and_resolves_above(world) -> None:
    settings, client, org_id, project_id, slug, channel_id, receiver = world
    with session_scope(settings) as session:
        rule = rules.create_rule(
            session,
            org_id,
            {
                "name": "Crash-free below 98 %",
                "type": "crash_free_rate",
                "project": slug,
                "threshold": 98,
                "warning_threshold": 99,
                "resolve_threshold": 98.5,
                "window": "24h",
                "min_samples": 50,
                "environment": "production",
                "channels": [channel_id],
            },
        )
        users = rules.create_rule(
            session,
            org_id,
            {
                "name": "Crash-free users, any environment",
                "type": "crash_free_rate",
                "metric": "crash_free_users",
                "project": slug,
                "threshold": 90,
                "window": "24h",
                "min_samples": 20,
            },
        )
    # An older release that crashes a lot (not the newest: never judged), the newest production release with
    # too few sessions, and a newer release seen in staging only (the newest for a rule without environment).
    old = spread(org_id, project_id, "shop@1.0.0", NOW - timedelta(days=3), NOW - timedelta(hours=1), 600, 10)
    new = spread(
        org_id, project_id, "shop@1.1.0", NOW - timedelta(minutes=50), NOW - timedelta(minutes=20), 30, 10
    )
    staging = spread(
        org_id,
        project_id,
        "shop@2.0.0-rc1",
        NOW - timedelta(minutes=30),
        NOW - timedelta(minutes=10),
        40,
        8,
        environment="staging",
        users=12,
    )
    land(client, old + new + staging)
    evaluate(settings, client, BASE, NOW)
    assert _states(settings, rule.id) == {"*": "insufficient_data"}  # 30 sessions < 50: 90 % never fires
    assert _decisions(settings, rule.id) == ["insufficient data: 30 samples < 50 needed"]
    (measured,) = measure(client, [rule], NOW)[rule.id]
    assert (measured.release, measured.samples, measured.value) == ("shop@1.1.0", 30, pytest.approx(90.0))
    # Without an environment the newest release is the staging one: 12 users, those of every 8th session
    # crashed.
    crashed_users = {r["distinct_id"] for r in staging if r["status"] == "crashed"}
    (any_env,) = measure(client, [users], NOW)[users.id]
    assert any_env.release == "shop@2.0.0-rc1"
    assert any_env.value == pytest.approx(100 * (1 - len(crashed_users) / 12))
    assert _states(settings, users.id) == {"*": "firing" if any_env.value < 90 else "ok"}

    # 70 more sessions, one crashed: 4 crashed of 100 → 96.00 % < 98.00 %: firing, one notification.
    land(
        client,
        spread(
            org_id, project_id, "shop@1.1.0", NOW - timedelta(minutes=19), NOW - timedelta(minutes=2), 70, 70
        ),
    )
    first = evaluate(settings, client, BASE, NOW)
    again = evaluate(settings, client, BASE, NOW + timedelta(minutes=1))
    assert _states(settings, rule.id) == {"*": "firing"}
    fired = [d for d in _delivered(settings, receiver) if d["rule_id"] == rule.id]
    assert len(fired) == 1 and again.notifications == 0 and first.notifications >= 1
    data = fired[0]
    assert data["subject"] == (
        "[Firing] Crash-free below 98 %: Crash-free sessions of the newest release 96.00 % < 98.00 %"
    )
    assert (data["release"], data["samples"], data["value"], data["threshold"]) == (
        "shop@1.1.0",
        100,
        96.0,
        98,
    )
    assert "Value: 96.00 % against threshold 98.00 % (100 sessions)" in data["text"]
    assert data["link"] == f"{BASE}/orgs/acme/projects/{slug}/releases/shop%401.1.0"

    # 100 sessions without a crash: 98.00 % — not below the threshold, but below the resolve threshold:
    # firing.
    land(
        client,
        spread(
            org_id, project_id, "shop@1.1.0", NOW + timedelta(minutes=1), NOW + timedelta(minutes=20), 100
        ),
    )
    evaluate(settings, client, BASE, NOW + timedelta(minutes=21))
    assert _states(settings, rule.id) == {"*": "firing"}
    assert _decisions(settings, rule.id)[-1] == "still firing: 98.00 % < resolve 98.50 %"
    # 300 more: 4 of 500 → 99.20 % >= 98.50 %: resolved, one notification.
    land(
        client,
        spread(
            org_id, project_id, "shop@1.1.0", NOW + timedelta(minutes=21), NOW + timedelta(minutes=50), 300
        ),
    )
    evaluate(settings, client, BASE, NOW + timedelta(minutes=51))
    assert _states(settings, rule.id) == {"*": "resolved"}
    assert _decisions(settings, rule.id)[-1] == "resolved: 99.20 % >= 98.50 %"
    sent = [d for d in _delivered(settings, receiver) if d["rule_id"] == rule.id]
    assert [d["state"] for d in sent] == ["firing", "resolved"]
    assert sent[1]["subject"].endswith("Crash-free sessions of the newest release 99.20 % >= 98.50 %")
    # The rule's figure is the release pages' figure for the same window and environment.
    span = Window.last(timedelta(hours=24), NOW + timedelta(minutes=51))
    page = {r.version: r for r in release_health(client, org_id, project_id, span, "production")}
    got = crash_free(client, [rule], NOW + timedelta(minutes=51))[rule.id]
    assert (got.value, got.sessions) == (page["shop@1.1.0"].crash_free_sessions, page["shop@1.1.0"].sessions)


def test_release_regression_fires_once_naming_the_reason_and_not_for_a_change_within_noise(world) -> None:
    settings, client, org_id, project_id, slug, channel_id, receiver = world
    with session_scope(settings) as session:
        rule = rules.create_rule(
            session,
            org_id,
            {
                "name": "Release regressions",
                "type": "release_regression",
                "project": slug,
                "window": "7d",
                "environment": "production",
                "channels": [channel_id],
            },
        )
    # 1.0.0: 1 crash in 100 sessions; 1.1.0: 1 in 20 — 95.00 % against 99.00 %, 2,000 sessions each.
    land(
        client,
        spread(org_id, project_id, "shop@1.0.0", NOW - timedelta(days=6), NOW - timedelta(days=3), 2000, 100)
        + spread(
            org_id, project_id, "shop@1.1.0", NOW - timedelta(days=3), NOW - timedelta(minutes=5), 2000, 20
        ),
    )
    first = evaluate(settings, client, BASE, NOW)
    again = evaluate(settings, client, BASE, NOW + timedelta(minutes=1))
    later = evaluate(settings, client, BASE, NOW + timedelta(minutes=30))
    assert (first.notifications, again.notifications, later.notifications) == (1, 0, 0)
    assert _states(settings, rule.id) == {"*": "ok", "shop@1.1.0": "firing"}
    ((data),) = _delivered(settings, receiver)
    assert data["subject"] == "[Firing] Release regression: shop@1.1.0 against shop@1.0.0"
    crash = next(r for r in data["reasons"] if r.startswith("crash-free sessions"))
    assert crash.startswith(
        "crash-free sessions 95.00 % (2,000 sessions) vs 99.00 % (2,000 sessions) in shop@1.0.0: −4.0 points"
    ), crash
    assert f"Why: {crash}" in data["text"] and data["release"] == "shop@1.1.0"
    assert data["link"] == f"{BASE}/orgs/acme/projects/{slug}/releases/shop%401.1.0"
    decisions = _decisions(settings, rule.id)
    assert decisions[0] == "release regression: shop@1.1.0 against shop@1.0.0"
    assert decisions[1].startswith("still a regression: shop@1.1.0 against shop@1.0.0 (notified ")

    # 1.2.0: 16 crashes in 300 sessions (94.67 %) against 1.1.0's 95.00 %: no significant change, no message;
    # 1.1.0 is no longer the newest release: its firing ends without a message.
    newer = spread(
        org_id, project_id, "shop@1.2.0", NOW + timedelta(minutes=1), NOW + timedelta(minutes=50), 300
    )
    for row in newer[::19][:16]:
        row["status"], row["errors"] = "crashed", 1
    land(client, newer)
    quiet = evaluate(settings, client, BASE, NOW + timedelta(minutes=55))
    assert quiet.notifications == 0 and quiet.firing == []
    assert _states(settings, rule.id) == {"*": "ok", "shop@1.1.0": "resolved"}
    assert _decisions(settings, rule.id)[-1] == "shop@1.2.0 against shop@1.1.0: no significant regression"
    assert len(_delivered(settings, receiver)) == 1
