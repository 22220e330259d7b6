"""The agent pages in Debian's chromium against a real server: a member creates a token at
`/account/tokens` (shown once, listed with its scopes and expiry, revoked there), an agent's calls appear in
the owners' audit page ("Agent calls (MCP)") with tool, rows and bytes read, duration and outcome, and the
OAuth consent page names the client and the scopes. Screenshots at 1024 and 1440 px (tests/_artifacts/agents,
or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from stacklens.agents import consent
from stacklens.control.db import migrate_control_store
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.agents.test_door import new_org, run_calls
from tests.api.live import serve
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.conftest import make_settings

pytestmark = [pytest.mark.browser]
SHOTS = shots_dir("agents")
WIDTHS = (1024, 1440)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[tuple[str, Settings]]:
    data = tmp_path_factory.mktemp("agent-pages") / "data"
    data.mkdir()
    store = make_settings(data, warehouse_url)
    migrate_control_store(store)
    apply_migrations(store)
    with serve(store) as url:
        yield url, store


def _shots(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}_{width}.png"), full_page=True)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} overflows at {width} px by {overflow} px"


def test_tokens_audit_and_consent_pages(chromium: Any, server: tuple[str, Settings]) -> None:
    url, store = server
    org = new_org(url, store, "Acme")
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    errors: list[str] = []
    watch_errors(page, errors)
    sign_in_page(page, url, org["email"], "password-123")
    page.goto(f"{url}/account/tokens")
    assert "No tokens yet" in page.inner_text("#tokens")
    page.fill("input[name=name]", "Claude Code on my laptop")
    page.select_option("select[name=scopes]", "read")
    page.click("#create-token button[type=submit]")
    token = page.inner_text("#token-value").strip()
    assert token.startswith("stacklens_pat_")
    rows = page.locator("#tokens .token-row")
    assert rows.count() == 1
    row = rows.first.inner_text()
    assert "Claude Code on my laptop" in row and "read" in row and "personal" in row and "not yet" in row
    _shots(page, "tokens_created")

    calls_made = [
        ("list_issues", {"project": org["project"]}),
        ("update_issue", {"issue_id": org["issue_id"], "status": "resolved"}),
    ]
    # The agent runs beside the browser: Playwright's driver holds this thread's event loop.
    with ThreadPoolExecutor(1) as agent:
        agent.submit(run_calls, url, token, calls_made).result()
    page.goto(f"{url}/orgs/{org['org_slug']}/settings/audit?action=mcp")
    calls = page.locator("#audit-calls .audit-row")
    assert calls.count() == 2
    newest, oldest = calls.nth(0).inner_text(), calls.nth(1).inner_text()
    assert "update_issue" in newest and "refused" in newest and "scope" in newest
    assert "list_issues" in oldest and "ok" in oldest and " B" in oldest and "ms" in oldest
    _shots(page, "audit_agent_calls")

    page.goto(f"{url}/account/tokens")
    page.click("#tokens .token-row button[type=submit]")
    page.wait_for_url(f"{url}/account/tokens**")
    assert page.locator("#tokens .token-row").count() == 0
    refused = httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refused.status_code == 401 and "revoked" in refused.headers["www-authenticate"]

    registered = httpx.post(
        f"{url}/oauth/register",
        json={
            "client_name": "Cursor",
            "redirect_uris": ["http://127.0.0.1:9/cb"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert registered.status_code == 201, registered.text
    blob = consent.sign(
        store,
        consent.ConsentRequest(
            registered.json()["client_id"],
            "http://127.0.0.1:9/cb",
            True,
            "c" * 43,
            "s",
            ["read", "write"],
            None,
        ),
    )
    page.goto(f"{url}/oauth/consent?request={blob}")
    assert page.inner_text("#client-name") == "Cursor"
    assert page.locator("#scope-write").count() == 1 and not page.is_checked("#scope-write")
    _shots(page, "oauth_consent")
    assert errors == []
