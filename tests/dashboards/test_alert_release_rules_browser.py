"""The New Rule form creates the two release-health rule types in a real browser (Debian's chromium through
Playwright, a real uvicorn server, sessions in the embedded warehouse): a crash-free rate (its metric chosen
among the crash-free shares, a bad choice refused naming the field) and a release regression; each rule page
writes its condition and thresholds with units ("Warning below", "Resolves at or above"), its 30-day preview
(the crash-free line with its firing while shop@1.1.0 was the newest release; the regression's notification
naming the release), and the rules list their state and last value after a real evaluation. Screenshots at
1024 px (tests/_artifacts/performance, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.alerts.evaluation import evaluate
from stacklens.warehouse.client import get_warehouse
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, SHOTS
from tests.stacklens.alerts.release_seed import land, spread

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_form_creates_both_release_rule_types(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    first_b, first_c = now - timedelta(days=12), now - timedelta(days=6)
    ids = (org["org_id"], org["project_id"])
    land(
        get_warehouse(stores),
        spread(*ids, "shop@1.0.0", now - timedelta(days=20), first_b, 1920, 100)  # 99 % crash-free
        + spread(*ids, "shop@1.1.0", first_b, first_c, 1440, 20)  # 95 %
        + spread(*ids, "shop@1.2.0", first_c, now - timedelta(minutes=2), 1440, 100),  # 99 %
    )
    alerts = f"{server}/orgs/{org['org_slug']}/alerts"
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": 1024, "height": 800})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    # A crash-free rate whose metric is left on a performance metric: refused, the field named.
    page.goto(f"{alerts}/new")
    page.fill("input[name=name]", "Crash-free below 97 %")
    page.select_option("#rule-type", "crash_free_rate")
    page.select_option("select[name=metric]", "lcp_ms")
    page.fill("input[name=threshold]", "97")
    page.click("#create-rule")
    error = page.locator("#form-error").inner_text()
    assert error.startswith("metric: a crash-free rate rule watches crash_free_sessions or crash_free_users")
    assert page.locator("select[name=metric].invalid").count() == 1
    # Chosen among the crash-free shares (their own group of the metric list): created.
    assert page.locator("optgroup[label='Crash-free rate (newest release)'] option").count() == 2
    page.select_option("#rule-type", "crash_free_rate")
    page.select_option("select[name=metric]", "crash_free_sessions")
    page.fill("input[name=threshold]", "97")
    page.fill("input[name=warning_threshold]", "98")
    page.fill("input[name=resolve_threshold]", "97.5")
    page.fill("input[name=window]", "24h")
    page.fill("input[name=min_samples]", "50")
    page.fill("input[name=environment]", "production")
    page.screenshot(path=str(SHOTS / "alert-new-crash-free.png"), full_page=True)
    page.click("#create-rule")
    page.wait_for_url(f"{alerts}/*")
    crash_url = page.url
    facts = page.locator("table.kv").inner_text()
    assert "Crash-free rate" in facts
    assert "Crash-free sessions of the newest release < 97.00 % over 1d (at least 50 sessions)" in facts
    assert "Warning below\t98.00 %" in facts and "Resolves at or above\t97.50 %" in facts
    page.wait_for_selector("#preview .plot .main-svg")
    assert (
        page.locator("#preview-scope")
        .inner_text()
        .startswith("Evaluated on the newest release in production")
    )
    assert "Would have fired 1 time(s)" in page.locator("#preview").inner_text()
    assert any("97.00 %" in t for t in page.locator("#preview .annotation-text").all_text_contents())
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=str(SHOTS / "alert-rule-crash-free.png"), full_page=True)

    # A release regression: no threshold.
    page.goto(f"{alerts}/new")
    page.fill("input[name=name]", "Release regressions")
    page.select_option("#rule-type", "release_regression")
    page.fill("input[name=window]", "7d")
    page.click("#create-rule")
    page.wait_for_url(f"{alerts}/*")
    facts = page.locator("table.kv").inner_text()
    assert "Release regression" in facts
    assert "the newest release's verdict against the one before it is a regression (over 7d)" in facts
    preview = page.locator("#preview").inner_text()
    assert "1 notification(s) in 30 days." in preview and "Would have notified for shop@1.1.0" in preview
    page.screenshot(path=str(SHOTS / "alert-rule-release-regression.png"), full_page=True)

    # After a real evaluation: the list's state and last value, with units.
    summary = evaluate(stores, get_warehouse(stores), server)
    assert summary.failed == 0, summary.errors
    page.goto(alerts)
    crash = page.locator("#rules tr", has_text="Crash-free below 97 %")
    assert crash.locator("td").nth(2).inner_text() == "Crash-free rate"
    last = crash.locator("td.last-value").inner_text().strip()
    assert re.fullmatch(r"99\.\d\d %", last), last  # shop@1.2.0 over a day: 1 crash in 100, two decimals
    assert "ok" in crash.locator("td").first.inner_text()
    regression = page.locator("#rules tr", has_text="Release regressions")
    assert regression.locator("td").nth(2).inner_text() == "Release regression"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=str(SHOTS / "alerts-list-release-rules.png"), full_page=True)
    page.goto(crash_url)
    evaluation = page.locator("#evaluations tbody tr").first.locator("td")
    assert (
        evaluation.nth(3).inner_text() == last and evaluation.nth(6).inner_text() == f"ok: {last} >= 97.00 %"
    )
    assert page.evaluate("window.__csp") == []
    refused = (
        f"{alerts}/new: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    )
    assert errors == [refused], errors  # the refused form answers 400 (the only console error)
