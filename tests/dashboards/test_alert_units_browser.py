"""The alert pages in a real browser (Debian's chromium through Playwright) against a real uvicorn server,
after a real evaluation and a real delivery to a local webhook receiver: the rules list writes each "Last
value" with its unit and each condition with the catalog's label (``LCP p75``, never ``lcp_ms``), the rule
page too, and the channels page's delivery log names the rule that sent each message (a channel test says
so). Screenshots at 1024 px (tests/_artifacts/performance, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.alerts import outbox, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.alerts.sending import send_test
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.warehouse.client import get_warehouse
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, SHOTS
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.alerts.test_evaluation import TX, tx
from tests.stacklens.performance.perf_seed import build_facts

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_last_value_units_condition_labels_and_the_sending_rule(
    chromium, server, org_factory, stores, receiver
) -> None:
    org = org_factory()
    allowed = stores.model_copy(update={"outbound_allow": "127.0.0.1"})
    with session_scope(allowed) as session:
        channel, secret = create_channel(
            session, org["org_id"], allowed, type="webhook", name="ops hook", url=receiver.url
        )
        channel_id = channel.id
        body = {"type": "performance_budget", "project": org["project"], "window": "1h", "min_samples": 2}
        slow = rules.create_rule(
            session,
            org["org_id"],
            {
                **body,
                "name": "Slow LCP",
                "metric": "lcp_ms",
                "statistic": "p75",
                "threshold": 1200,
                "channels": [channel_id],
            },
        )
        rules.create_rule(
            session,
            org["org_id"],
            {**body, "name": "Slow loads", "metric": "load_time_ms", "statistic": "p95", "threshold": 60_000},
        )
        slow_id = slow.id
    receiver.secret = secret
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    client = get_warehouse(stores)
    rows = [
        [org["org_id"], *tx(org["project_id"], 2500, now - timedelta(minutes=m))[1:]] for m in range(1, 5)
    ]
    client.insert("transactions", rows, column_names=TX)
    build_facts(client, now - timedelta(days=1), now + timedelta(hours=1))
    summary = evaluate(allowed, client, "http://sl.test")
    assert summary.notifications == 1
    outbox.drain(allowed)
    assert len(receiver.received) == 1 and receiver.received[0].signature_ok
    send_test(allowed, org["org_id"], channel_id)

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 800})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    alerts = f"{server}/orgs/{org['org_slug']}/alerts"
    page.goto(alerts)
    table = page.locator("#rules")
    firing = table.locator("tr", has_text="Slow LCP")
    last = firing.locator("td.last-value").inner_text().strip()
    assert re.fullmatch(r"[\d,]+\.\d ms", last), last  # "2,5xx.x ms": the value with its unit
    condition = firing.locator("td").nth(4).inner_text()
    assert condition == "LCP p75 on all pages > 1,200.0 ms over 1h", condition
    other = table.locator("tr", has_text="Slow loads")
    assert other.locator("td").nth(4).inner_text() == "Load time p95 on all pages > 60,000.0 ms over 1h"
    assert re.fullmatch(r"[\d,]+\.\d ms", other.locator("td.last-value").inner_text().strip())
    assert "lcp_ms" not in table.inner_text() and "load_time_ms" not in table.inner_text()
    page.screenshot(path=str(SHOTS / "alerts-list.png"), full_page=True)

    page.goto(f"{alerts}/{slow_id}")
    page.wait_for_selector("#preview .plot .main-svg")
    page.wait_for_load_state("networkidle")
    assert "LCP p75 on all pages > 1,200.0 ms over 1h" in page.locator("table.kv").inner_text()
    value = page.locator("#evaluations tbody tr").first.locator("td").nth(3).inner_text()
    assert value.endswith(" ms"), value
    assert any("1,200.0 ms" in t for t in page.locator("#preview .annotation-text").all_text_contents())
    page.screenshot(path=str(SHOTS / "alert-rule.png"), full_page=True)

    page.goto(f"{server}/orgs/{org['org_slug']}/settings/channels")
    log = page.locator("#deliveries tbody tr")
    senders = [log.nth(i).locator("td.sent-by") for i in range(log.count())]
    by_kind = {s.get_attribute("data-sent-by"): s for s in senders}
    assert set(by_kind) == {"rule", "test"}, list(by_kind)
    assert by_kind["rule"].inner_text().startswith("Slow LCP")
    link = by_kind["rule"].locator("a.rule-link")
    assert link.get_attribute("href") == f"/orgs/{org['org_slug']}/alerts/{slow_id}"
    assert by_kind["test"].inner_text() == "channel test"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=str(SHOTS / "channels-delivery-log.png"), full_page=True)
    assert page.evaluate("window.__csp") == []
    assert not errors, errors
