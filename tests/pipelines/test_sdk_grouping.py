"""The `issues` and `related_issues` marts over errors made by sentry-sdk itself and landed by the ingest
service: N error sites with varying messages, moving line numbers and varying call paths are exactly N
issues; the same exception type in two functions never merges; relation strengths match exactly."""

from __future__ import annotations

import importlib.util
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import polars as pl
import pytest

from pipelines.embedded import materialize_now
from stacklens.ingest.in_app import InAppRules
from stacklens.ingest.service import Attribution, ingest_batch
from tests.stacklens.ingest.sdk_events import capture

ORG, PROJECT, APP_KEY = 7, 70, "stacklens_app_grouping"

# The application: five error sites (two raise the same type) and the ways to reach them.
SHOP = """
class PaymentDeclined(Exception):
    pass


USERS = {"u-1": "Ann"}


def charge(amount, order):
    raise PaymentDeclined(f"card declined for {amount} cents on order {order}")


def refund(amount, order):
    raise PaymentDeclined(f"refund of {amount} refused for order {order}")


def load_user(uid, order):
    return USERS[f"{uid}-{order}"]


def parse_quantity(text, order):
    return int(f"{text}x{order}")


def split_bill(total, order):
    return total // (order - order)


def view_a(site, arg, order):
    return site(arg, order)


def view_b(site, arg, order):
    prepared = arg
    return site(prepared, order)


def middleware(depth, site, arg, order):
    if depth == 0:
        return view_a(site, arg, order)
    return middleware(depth - 1, site, arg, order)


def recurse(depth, site, arg, order):
    if depth == 0:
        return site(arg, order)
    return recurse(depth - 1, site, arg, order)
"""
SITES = ["charge", "refund", "load_user", "parse_quantity", "split_bill"]
PER_SITE = [7, 5, 4, 6, 4]  # at least 4 each: every site through every path


def shop_release(tmp_path: Path, release: int) -> ModuleType:
    """The application as released: release 2 has lines added above everything, so every line moved."""
    folder = tmp_path / f"r{release}"
    folder.mkdir()
    source = "# release notes\n" * (release - 1) * 11 + SHOP
    (folder / "shop_errors.py").write_text(source)
    spec = importlib.util.spec_from_file_location("shop_errors", folder / "shop_errors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reach(shop: ModuleType, site: str, path: int, n: int) -> Any:
    """The ``path``-th way to reach ``site``: two views, middleware chains and recursions of varying depth."""
    func, arg, order = getattr(shop, site), f"{n * 37}", 1000 + n * 7919
    return [
        lambda: shop.view_a(func, arg, order),
        lambda: shop.view_b(func, arg, order),
        lambda: shop.middleware(1 + n % 4, func, arg, order),
        lambda: shop.recurse(2 + n * 3, func, arg, order),
    ][path % 4]()


def window(k: int) -> datetime:
    base = (datetime.now(UTC) - timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    return base + timedelta(minutes=5 * k, seconds=17)


@pytest.fixture
def landed(client, instance, settings, tmp_path, defs) -> list[dict[str, Any]]:
    releases = {1: shop_release(tmp_path, 1), 2: shop_release(tmp_path, 2)}
    options = {"project_root": str(tmp_path), "in_app_include": ["shop_errors"]}
    # Time windows (5 minutes): charge in W0,W1; refund in W1,W2; the others each in their own window.
    windows = {"charge": [0, 1], "refund": [1, 2], "load_user": [5], "parse_quantity": [7], "split_bill": [9]}
    payloads = []
    for site, count in zip(SITES, PER_SITE, strict=True):
        for n in range(count):
            release = 1 + n % 2
            payload = capture(
                lambda s=site, n=n, r=release: reach(releases[r], s, n, n),
                release=f"shop@{release}.0.0",
                **options,
            )
            payload["timestamp"] = window(windows[site][n % len(windows[site])]).isoformat()
            payload["user"] = {"id": f"user-{site}-{n % 2}"}
            payloads.append(payload)
    lines = [
        orjson.dumps({"v": 1, "type": "event", "ts": "2026-01-01T00:00:00Z", "payload": p}) for p in payloads
    ]
    result = ingest_batch(
        settings,
        ORG,
        b"\n".join(lines),
        header_app_key=APP_KEY,
        idempotency_key=None,
        # The SDK marks the shop's frames; the test harness's frames it leaves unmarked, and the project's
        # in-app rules say they are not the application's (else they would be in-app, as Sentry infers).
        resolve=lambda raw: (
            Attribution(PROJECT, None, 1, in_app=InAppRules(exclude=("tests",))) if raw == APP_KEY else None
        ),
        take_events=lambda _n: None,
    )
    assert result.accepted == sum(PER_SITE) and not result.rejected, result.rejected
    outcomes = materialize_now(defs, instance, ["issues", "related_issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    return payloads


def crash_line(payload: dict[str, Any]) -> int:
    return payload["exception"]["values"][-1]["stacktrace"]["frames"][-1]["lineno"]


def test_n_sites_are_exactly_n_issues(client, landed) -> None:
    # The data really varies: messages differ per event, and each site's line moved between releases.
    charge = landed[: PER_SITE[0]]
    assert len({p["exception"]["values"][-1]["value"] for p in charge}) == PER_SITE[0]
    assert len({crash_line(p) for p in charge}) == 2
    issues = client.query(
        "SELECT title, culprit, events, users_affected FROM issues FINAL WHERE project_id = {p:UInt64} ORDER BY events DESC",
        parameters={"p": PROJECT},
    ).result_rows
    assert len(issues) == len(SITES)
    assert sorted(r[2] for r in issues) == sorted(PER_SITE)
    by_culprit = {r[1]: r for r in issues}
    assert set(by_culprit) == {f"{s} in shop_errors" for s in SITES}
    # Same exception type, two functions: two issues with their own counts.
    assert by_culprit["charge in shop_errors"][2] == 7 and by_culprit["refund in shop_errors"][2] == 5
    assert by_culprit["charge in shop_errors"][0].startswith("PaymentDeclined")
    assert by_culprit["refund in shop_errors"][0].startswith("PaymentDeclined")
    assert all(r[3] == 2 for r in issues)  # two users per site
    daily = client.query(
        "SELECT sum(events) FROM issue_totals_daily WHERE project_id = {p:UInt64}",
        parameters={"p": PROJECT},
    )
    assert daily.result_rows[0][0] == sum(PER_SITE)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_related_strengths_are_exact(client, landed) -> None:
    rows = client.query(
        "SELECT issue_id, culprit, timestamp, in_app_frames FROM events WHERE project_id = {p:UInt64}",
        parameters={"p": PROJECT},
    )
    events = pl.DataFrame([dict(zip(rows.column_names, r, strict=True)) for r in rows.result_rows])
    site_of = {
        r["issue_id"]: r["culprit"].split(" in ")[0]
        for r in events.select("issue_id", "culprit").unique().to_dicts()
    }
    frames = {i: set().union(*g["in_app_frames"].to_list()) for (i,), g in events.group_by("issue_id")}
    windows = {
        i: {
            t.replace(minute=t.minute - t.minute % 5, second=0, microsecond=0)
            for t in g["timestamp"].to_list()
        }
        for (i,), g in events.group_by("issue_id")
    }
    related = client.query(
        "SELECT issue_id, related_issue_id, reason, strength FROM related_issues FINAL WHERE project_id = {p:UInt64}",
        parameters={"p": PROJECT},
    ).result_rows
    got = {(site_of[a], site_of[b], reason): s for a, b, reason, s in related}

    # Similar stack: every site is reached through view_a, view_b, middleware and recurse, so any two issues
    # share those 4 frames and differ in their crash site: 4 / 6.
    assert frames[next(i for i, s in site_of.items() if s == "charge")] == {
        f"shop_errors:{f}" for f in ("charge", "view_a", "view_b", "middleware", "recurse")
    }
    for a, b in itertools.permutations(site_of, 2):
        assert got[(site_of[a], site_of[b], "similar_stack")] == pytest.approx(jaccard(frames[a], frames[b]))
        assert got[(site_of[a], site_of[b], "similar_stack")] == pytest.approx(4 / 6)
    # Same time window: charge {W0, W1} and refund {W1, W2} share one of three; nobody else shares any.
    assert got[("charge", "refund", "same_time_window")] == pytest.approx(1 / 3)
    assert got[("refund", "charge", "same_time_window")] == pytest.approx(1 / 3)
    by_site = {s: i for i, s in site_of.items()}
    assert jaccard(windows[by_site["charge"]], windows[by_site["refund"]]) == pytest.approx(1 / 3)
    assert {k for k in got if k[2] == "same_time_window"} == {
        ("charge", "refund", "same_time_window"),
        ("refund", "charge", "same_time_window"),
    }
    # Same user: every site has its own users, so no pair.
    assert not [k for k in got if k[2] == "same_user"]
    assert all(0 < s <= 1 for s in got.values())
