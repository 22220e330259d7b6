"""The logs view in Debian's chromium, against a real server: records sent over OTLP/HTTP (a trace with a
server span and an exception, and its log records) show newest first with their severity, the volume chart
draws under the strict CSP, the filters stay in the URL, a record's trace opens the trace's records with its
error, and its waterfall (screenshots in tests/_artifacts/logs, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("logs")
CSP_PROBE = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)
TRACE = "7d3f1c2a9b8e4d5f6a7b8c9d0e1f2a3b"
RESOURCE = {
    "attributes": [
        {"key": "service.name", "value": {"stringValue": "checkout-api"}},
        {"key": "service.version", "value": {"stringValue": "3.4.0"}},
    ]
}


def _attr(key: str, value: Any) -> dict[str, Any]:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def _send(base_url: str, org: dict[str, Any]) -> None:
    now = time.time_ns()
    headers = {"Content-Type": "application/json", "X-Stacklens-App-Key": str(org["app_key"])}
    span = {
        "traceId": TRACE,
        "spanId": "1a2b3c4d5e6f7a8b",
        "name": "POST /checkout",
        "kind": 2,
        "startTimeUnixNano": str(now - 60_000_000),
        "endTimeUnixNano": str(now - 20_000_000),
        "attributes": [
            _attr("http.request.method", "POST"),
            _attr("http.route", "/checkout"),
            _attr("http.response.status_code", 500),
        ],
        "events": [
            {
                "name": "exception",
                "timeUnixNano": str(now - 30_000_000),
                "attributes": [
                    _attr("exception.type", "PaymentDeclined"),
                    _attr("exception.message", "card declined for cart 981"),
                ],
            }
        ],
    }
    traces = {"resourceSpans": [{"resource": RESOURCE, "scopeSpans": [{"spans": [span]}]}]}
    answer = httpx.post(
        f"{base_url}/api/{org['project_id']}/otlp/v1/traces", content=json.dumps(traces), headers=headers
    )
    assert answer.status_code == 200 and "partialSuccess" not in answer.json(), answer.text

    def record(
        offset_ms: int, number: int, text: str, body: str, trace: bool, **attrs: Any
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "timeUnixNano": str(now - offset_ms * 1_000_000),
            "severityNumber": number,
            "severityText": text,
            "body": {"stringValue": body},
            "attributes": [_attr(k, v) for k, v in attrs.items()],
        }
        if trace:
            out.update(traceId=TRACE, spanId="1a2b3c4d5e6f7a8b")
        return out

    records = [
        record(55, 9, "INFO", "checkout started for cart 981", True, **{"cart.id": "981"}),
        record(35, 17, "ERROR", "payment provider declined cart 981 <script>alert(1)</script>", True),
        record(5_000, 13, "WARN", "inventory cache is stale", False, **{"cache.age_s": 920}),
    ]
    records += [record(60_000 + i * 90_000, 5, "DEBUG", f"heartbeat {i}", False) for i in range(60)]
    logs = {"resourceLogs": [{"resource": RESOURCE, "scopeLogs": [{"logRecords": records}]}]}
    answer = httpx.post(
        f"{base_url}/api/{org['project_id']}/otlp/v1/logs", content=json.dumps(logs), headers=headers
    )
    assert answer.status_code == 200 and "partialSuccess" not in answer.json(), answer.text


def base_url_of(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def test_the_logs_view_shows_records_their_severity_and_links_the_trace(
    chromium,
    server,
    org_factory,
) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    _send(server, org)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    errors: list[str] = []
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"

    page.goto(f"{base}/issues")
    page.click("nav >> text=Logs")
    page.wait_for_url(f"{base}/logs")
    rows = page.locator("tr.log-row")
    expect(rows).to_have_count(50)  # one page; the rest behind "Older records"
    first = rows.nth(0)
    expect(first).to_contain_text("payment provider declined cart 981 <script>alert(1)</script>")
    expect(first.locator(".sev")).to_have_text("error")
    expect(rows.nth(1).locator(".sev")).to_have_text("info")
    expect(rows.nth(2).locator(".sev")).to_have_text("warn")
    expect(page.locator("#plot-log-volume .main-svg").first).to_be_visible()
    page.screenshot(path=str(SHOTS / "logs-1024.png"), full_page=True)
    expect(page.locator("#plot-log-volume .legendtext")).to_have_count(4)
    legend = page.locator("#plot-log-volume .legendtext").all_text_contents()
    assert set(legend) == {"debug", "info", "warn", "error"}, legend
    page.screenshot(path=str(SHOTS / "logs-1024.png"), full_page=True)

    page.click("#older-logs")
    expect(page.locator("tr.log-row")).to_have_count(13)
    expect(page.locator("tr.log-row").last).to_contain_text("heartbeat 59")

    # Filters travel in the URL: search + severity.
    page.goto(f"{base}/logs")
    page.fill("input[name=query]", "CART 981")
    page.check("input[name=severity][value=error]")
    page.click("#log-filters button[type=submit]")
    expect(page.locator("tr.log-row")).to_have_count(1)
    assert "query=CART+981" in page.url and "severity=error" in page.url, page.url

    # The record's trace: its records and its error, then its waterfall.
    page.locator("tr.log-row .trace-link").first.click()
    expect(page.locator("#trace-card")).to_contain_text(TRACE)
    expect(page.locator(".trace-errors")).to_contain_text("PaymentDeclined")
    expect(page.locator("tr.log-row")).to_have_count(1)  # still the error filter
    page.screenshot(path=str(SHOTS / "logs-trace-1024.png"), full_page=True)
    waterfall = page.locator("#trace-card .waterfall-link").get_attribute("href")
    # The error's issue page lists the logs of its trace, with a link back to them.
    page.locator(".trace-errors a").first.click()
    expect(page.locator("#trace-logs tr.log-row")).to_have_count(2)
    expect(page.locator("#trace-logs tr.log-row").first.locator(".sev")).to_have_text("info")
    page.locator("#trace-logs").screenshot(path=str(SHOTS / "issue-trace-logs-1024.png"))
    page.click("#trace-logs-link")
    expect(page.locator("tr.log-row")).to_have_count(2)
    page.goto(f"{base_url_of(page.url)}{waterfall}")
    expect(page.locator("#plot-waterfall")).to_be_visible()

    bad = page.goto(f"{base}/logs?severity=loud")
    assert bad is not None and bad.status == 400
    expect(page.locator("p.error")).to_contain_text("severity")
    assert page.evaluate("window.__csp") == [], page.evaluate("window.__csp")
    assert not [e for e in errors if "status of 400" not in e], errors
