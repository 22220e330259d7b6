"""The budgets page in a real browser (Debian's chromium through Playwright) against a real uvicorn server, on
demo traffic with the demo's three budgets: one passes, one fails, one has too few samples; each chart holds
data, the edit form previews 30 days and names a bad field, no console error or CSP violation occurs, and a
screenshot of each state is saved (tests/_artifacts/performance, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import pytest

from demo.budgets import ensure_demo_budgets
from stacklens.warehouse.client import get_warehouse
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import (
    CSP_PROBE,
    FIGURES_HOLD_DATA,
    SHOTS,
    land_demo_traffic,
)
from tests.stacklens.performance.budget_seed import fold

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_budgets_page_in_a_real_browser(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    fold(get_warehouse(stores))
    assert ensure_demo_budgets(stores, org["project"]) == 3
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1360, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    page.goto(f"{base}?range=30d")
    page.click("nav.perf-tabs a[href*='/performance/budgets']")
    page.wait_for_selector("#budget-charts .plot .main-svg")
    page.wait_for_load_state("networkidle")
    statuses = {
        page.locator(f"#budgets-table tr[data-status={s}] td:nth-child(2)").inner_text().split("\n")[0]: s
        for s in ("pass", "fail", "insufficient_data")
    }
    assert set(statuses.values()) == {"pass", "fail", "insufficient_data"}, statuses
    assert statuses["JavaScript size per page view avg"] == "fail"
    texts = page.locator("#budgets-table tbody tr").all_inner_texts()
    assert any("insufficient data" in t and "/cart" in t for t in texts), texts
    failing = page.locator("#budgets-table tr[data-status=fail]")
    assert failing.locator(".failing-since").inner_text().strip()
    assert failing.locator(".margin").inner_text().startswith("−")
    figures = page.evaluate(FIGURES_HOLD_DATA)
    assert len(figures) == 3 and all(f["traces"] and f["points"] >= 15 for f in figures), figures
    page.screenshot(path=str(SHOTS / "budgets.png"), full_page=True)

    # Editing: the preview counts the failing days; a bad window is named on the form, nothing saved.
    failing.locator("a.edit-budget").click()
    page.wait_for_selector("#budget-preview .plot .main-svg")
    page.wait_for_load_state("networkidle")
    assert "Would have failed on" in page.locator("#budget-preview").inner_text()
    (preview,) = page.evaluate(FIGURES_HOLD_DATA)
    assert preview["traces"] and preview["points"] >= 15, preview
    page.screenshot(path=str(SHOTS / "budget_edit.png"), full_page=True)
    page.fill("input[name=value]", "2000000")  # bytes
    page.click("#preview-budget")
    page.wait_for_selector("#budget-preview .plot .main-svg")
    assert "Would have failed on 0 of" in page.locator("#budget-preview").inner_text()
    page.fill("input[name=window]", "0")
    page.click("#save-budget")
    page.wait_for_selector("#form-error")
    assert page.locator("#form-error").inner_text().startswith("window:")
    assert page.locator("input[name=window].invalid").count() == 1
    page.screenshot(path=str(SHOTS / "budget_error.png"), full_page=True)
    refused = [e for e in errors if "status of 400" in e]
    assert len(refused) == 1  # the refused save answers 400, which chromium logs; nothing else
    errors.remove(refused[0])
    page.fill("input[name=window]", "7")
    page.click("#save-budget")
    page.wait_for_selector("#budgets-table")
    assert page.locator("#budgets-table tr[data-status=fail]").count() == 0

    # "Alert me when this fails" opens New Rule with the budget's fields.
    page.locator("#budgets-table tr[data-status=pass]").filter(has_text="(LCP)").locator("a.alert-me").click()
    page.wait_for_selector("#rule-form")
    assert page.input_value("input[name=threshold]") == "2500"
    assert page.input_value("select[name=metric]") == "lcp_ms"
    page.screenshot(path=str(SHOTS / "budget_alert_prefill.png"), full_page=True)
    assert not errors, errors
