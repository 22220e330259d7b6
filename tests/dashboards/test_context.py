"""The dashboards' per-request control-store session commits before the answer leaves the server: a browser
that follows the sign-in's redirect at once is signed in, however slow the commit."""

from __future__ import annotations

import httpx

from stacklens.settings import Settings
from tests.api.live import serve
from tests.dashboards.conftest import PASSWORD, csrf_of
from tests.slow_commits import slow_server_commits


def test_a_sign_in_is_committed_before_its_redirect_is_answered(stores: Settings, org_factory) -> None:
    org = org_factory()
    # A generous timeout: the test is about order, not speed, and the first answer of a fresh server can
    # take seconds on a machine busy with other tests.
    with serve(stores) as base, httpx.Client(base_url=base, follow_redirects=False, timeout=30) as browser:
        csrf = csrf_of(browser.get("/login").text)
        with slow_server_commits(0.5):
            signed_in = browser.post(
                "/login",
                data={"email": org["email"], "password": PASSWORD, "csrf_token": csrf, "next": "/"},
            )
            assert signed_in.status_code == 303 and signed_in.headers["location"] == "/"
            home = browser.get("/")  # at once, as a browser follows a redirect
        assert home.status_code == 303 and home.headers["location"] == f"/orgs/{org['org_slug']}", (
            home.headers
        )
