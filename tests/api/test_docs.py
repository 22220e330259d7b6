"""`/docs` in chromium: "Authorize" takes the API key (the document's Bearer scheme) and "Try it out" sends
it: GET /api/auth/verify answers 200 with the organization's name, under the strict CSP, without console
errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stacklens.settings import Settings
from tests.api.live import serve
from tests.browser import watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "docs"


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


def test_authorize_then_try_it_out(chromium, server: str, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory("Docs Org")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    watch_errors(page, errors)
    page.goto(f"{server}/docs")
    # Tags open collapsed (api/static/docs.js): open the auth tag to see its operation.
    expect(page.locator("#operations-tag-auth")).to_be_visible(timeout=30_000)
    page.locator("#operations-tag-auth").click()
    operation = page.locator("#operations-auth-verify_api_auth_verify_get")
    # The protected operation carries the padlock, open until a key is given.
    # Swagger UI renders after its bundle has loaded and parsed, which a loaded machine takes a while to
    # do.
    expect(operation.get_by_label("authorization button unlocked")).to_have_count(1, timeout=30_000)
    page.locator(".auth-wrapper button.authorize").click()
    dialog = page.locator(".modal-ux")
    expect(dialog).to_contain_text("ApiKey")
    expect(dialog).to_contain_text("http, Bearer")
    dialog.locator("input").fill(str(org["api_key"]))
    dialog.locator(".auth-btn-wrapper button.authorize").click()
    expect(dialog.locator(".auth-btn-wrapper button", has_text="Logout")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "authorized.png"))
    dialog.locator(".auth-btn-wrapper button.btn-done").click()

    operation.locator(".opblock-summary").click()
    # A protected operation shows the padlock as locked once authorized.
    expect(operation.get_by_label("authorization button locked")).to_have_count(1)
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    response = operation.locator(".live-responses-table .response").first
    expect(response.locator(".response-col_status")).to_contain_text("200", timeout=15_000)
    expect(response).to_contain_text("Docs Org")
    expect(operation.locator(".curl-command")).to_contain_text(f"Authorization: Bearer {org['api_key']}")
    page.screenshot(path=str(ARTIFACTS / "try_it_out.png"), full_page=False)
    assert errors == [], errors
