"""An upgrade with data: an older StackLens from this repository's own history is filled through its real SDK
and shipper, stopped, and today's `stacklens migrate` and `stacklens serve` run on the same data directory.
Every event, issue, budget, alert rule and key is still there (the old keys keep working) and every page
answers.

The older versions (docs/operations.md, "The upgrade path"): ``first-day``, the first commit whose server,
SDK, shipper and issue API work together (``c7ebc34``, 2026-11-21, the day the history starts: events, issues
and keys cross the upgrade), and ``first-alerts``, the first commit of the main line with alert rules whose
`stacklens serve` starts (the merge before it left two control-store heads), so a budget and an alert rule
cross it too.

The older code runs from ``git archive <commit>`` with this venv's packages (its dependencies are a subset of
today's), so no install is needed. A shallow clone has no history to take it from: the test then fails and
says so (``git fetch --unshallow``; a CI checkout needs the full history, e.g. ``fetch-depth: 0``).
Measured: about 20 s each in a whole run of the suite on two workers."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.e2e_stack import (
    REPO,
    Stack,
    clean_env,
    free_port,
    page_text,
    sign_in,
    wait_for,
    wait_healthy,
    write_shipper_config,
)

pytestmark = [pytest.mark.slow]

OWNER = ("owner@upgrade.example", "upgrade-password-1")
# Error sites of the old application -> events each sends: one issue per site.
SITES = {"charge_card": 5, "parse_quantity": 4, "lookup_sku": 3}


@dataclass(frozen=True)
class Older:
    commit: str
    budgets_and_rules: bool


OLDER = {
    "first-day": Older("c7ebc343c6c6cc9a17b787a8baf14a8f6f01ee98", budgets_and_rules=False),
    "first-alerts": Older("b042047c2adc345adb0d2805e9146a59c6c9326e", budgets_and_rules=True),
}


def _full_commit(short: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{short}^{{commit}}"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def _checkout(commit: str, into: Path) -> None:
    """The older version's files (``git archive``), or a failure that says why there is no history."""
    if not (REPO / ".git").exists():
        pytest.fail(f"{REPO} is not a git clone: the upgrade test takes the older StackLens from its history")
    shallow = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    ).stdout.strip()
    if not _full_commit(commit):
        pytest.fail(
            f"commit {commit[:12]} is not in this clone"
            + (
                " (a shallow clone: run `git fetch --unshallow`, or check out with fetch-depth 0)"
                if shallow == "true"
                else ""
            )
            + "; the upgrade test installs that older StackLens from the repository's history"
        )
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


# `stacklens …`: today's from this venv, or the older one's when its tree is first on PYTHONPATH (a path entry
# is searched before this venv's editable install of today's code).
CLI = [sys.executable, "-c", "import sys; from stacklens.cli.main import main; sys.exit(main())"]


SDK_APP = textwrap.dedent(
    """
    import sys
    import stacklens_sdk

    app_key, storage = sys.argv[1], sys.argv[2]
    sites = {sites!r}
    stacklens_sdk.init(app_key, storage, environment="prod", release="shop@1.0.0")

    def charge_card(n):
        raise RuntimeError(f"card declined for order {{n}}")

    def parse_quantity(n):
        return int(f"{{n}} pieces")

    def lookup_sku(n):
        return {{}}[f"sku-{{n}}"]

    for name, count in sites.items():
        for n in range(count):
            try:
                globals()[name](n)
            except Exception as exc:
                stacklens_sdk.capture_exception(exc)
    stacklens_sdk.close(5)
    """
).format(sites=SITES)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    current = Stack(tmp_path, clean_env(tmp_path / "data", STACKLENS_RUN_SCHEDULES="false"))
    (tmp_path / "data").mkdir()
    try:
        with current.reporting():
            yield current
    finally:
        current.close()


def _api(base: str, api_key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {api_key}"}, timeout=30.0)


def _issues(api: httpx.Client, slug: str) -> dict[str, dict[str, Any]]:
    answer = api.get(f"/api/projects/{slug}/issues", params={"status": "all", "limit": 100, "range": "14d"})
    assert answer.status_code == 200, answer.text
    return {i["id"]: i for i in answer.json()["issues"]}


def _event_ids(api: httpx.Client, issue_id: str) -> set[str]:
    answer = api.get(f"/api/issues/{issue_id}/events", params={"limit": 100})
    assert answer.status_code == 200, answer.text
    return {e["event_id"] for e in answer.json()["events"]}


def _fill_older(stack: Stack, old: Path, older: Older) -> dict[str, Any]:
    """Organization, project and a service key by the older CLI; events by its SDK and shipper; a budget and a
    rule by its API. What it answered, to compare with today's answers."""
    env = {**stack.env, "PYTHONPATH": str(old)}
    run = lambda argv: json.loads(  # noqa: E731 - one-line helper over the older CLI
        subprocess.run(CLI + argv, env=env, cwd=old, capture_output=True, text=True, check=True).stdout
    )
    org = run(["admin", "create-org", "--json", "--name", "Upgrade Co", "--owner-email", OWNER[0],
               "--password", OWNER[1]])  # fmt: skip
    project = run(["admin", "create-project", "--json", "--org", "Upgrade Co", "--name", "Shop"])
    service = run(
        ["admin", "create-app-key", "--json", "--project", project["slug"], "--service", "checkout"]
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = stack.start("older-server", [*CLI, "serve", "--port", str(port)], cwd=old, PYTHONPATH=str(old))
    wait_healthy(base, server)

    storage = stack.root / "sdk"
    storage.mkdir()
    sdk = subprocess.run(
        [sys.executable, "-c", SDK_APP, project["app_key"], str(storage)],
        env=env, cwd=old, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert sdk.returncode == 0, sdk.stderr
    config = stack.root / "stacklens.yaml"
    write_shipper_config(config, org["api_key"], project["app_key"], port, storage)
    shipper_argv = [sys.executable, "-c", "import sys; from shipper.cli import main; sys.exit(main())"]
    shipper = stack.start("older-shipper", [*shipper_argv, "--config", str(config), "--record"], cwd=old,
                          PYTHONPATH=str(old))  # fmt: skip
    api = _api(base, org["api_key"])
    wanted = sorted(SITES.values())

    def all_shipped() -> dict[str, dict[str, Any]] | None:
        found = _issues(api, project["slug"])
        return found if sorted(i["events"] for i in found.values()) == wanted else None

    issues = wait_for("the older server to count every shipped event", all_shipped, timeout=60, interval=0.5)
    assert shipper.stop() == 0
    before: dict[str, Any] = {
        "org": org,
        "project": project,
        "service": service,
        "issues": {i: (v["title"], v["events"]) for i, v in issues.items()},
        "events": {i: _event_ids(api, i) for i in issues},
    }
    if older.budgets_and_rules:
        budget = api.post(
            f"/api/projects/{project['slug']}/budgets", json={"metric": "lcp_ms", "value": 2500}
        )
        assert budget.status_code == 201, budget.text
        rule = api.post("/api/alerts/rules", json={"budget_id": budget.json()["id"], "channels": []})
        assert rule.status_code == 201, rule.text
        before["budgets"] = {
            (b["id"], b["metric"], b["scope"], b["value"]) for b in _budgets(api, project["slug"])
        }
        before["rules"] = {(r["id"], r["name"]) for r in api.get("/api/alerts/rules").json()["rules"]}
    api.close()
    # The oldest version ends on SIGTERM by the signal (uvicorn re-raised it before `serve` turned it into an
    # exit); every row it answered is in the warehouse by then (chdb writes each insert's parts at once).
    assert server.stop() in (0, -signal.SIGTERM), server.output()[-2000:]
    return before


def _budgets(api: httpx.Client, slug: str) -> list[dict[str, Any]]:
    answer = api.get(f"/api/projects/{slug}/budgets")
    assert answer.status_code == 200, answer.text
    return list(answer.json()["budgets"])


def _pages_answer(base: str, project_slug: str, issue_ids: list[str], titles: list[str]) -> int:
    """Signed in as the older owner: the issue list shows every issue, each issue page answers, and every page
    the list links to in the organization answers (no 500). The pages visited."""
    browser = sign_in(base, *OWNER)
    try:
        return _visit(browser, project_slug, issue_ids, titles)
    finally:
        browser.close()


def _visit(browser: httpx.Client, project_slug: str, issue_ids: list[str], titles: list[str]) -> int:
    home = browser.get("/", follow_redirects=True)  # the owner's organization
    assert home.status_code == 200
    org_slug = home.url.path.split("/")[2]
    listing = browser.get(f"/orgs/{org_slug}/projects/{project_slug}/issues?status=all")
    assert listing.status_code == 200
    shown = page_text(listing.text)
    for title in titles:
        assert title in shown, title
    visited = 1
    for issue_id in issue_ids:
        page = browser.get(f"/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}")
        assert page.status_code == 200, issue_id
        visited += 1
    links = set(re.findall(r'href="(/orgs/' + re.escape(org_slug) + r'[^"#?]*)', listing.text))
    links |= set(re.findall(r'href="(/(?:account|admin)[^"#?]*)', listing.text))
    for link in sorted(links):
        if link.endswith((".pdf", ".csv", ".json", ".parquet")):
            continue  # downloads, not pages
        answer = browser.get(link)
        assert answer.status_code in (200, 303), f"{link} answered {answer.status_code}"
        visited += 1
    return visited


@pytest.mark.parametrize("name", list(OLDER))
def test_an_older_installation_upgrades_with_its_data(stack: Stack, name: str) -> None:
    older = OLDER[name]
    started = time.monotonic()
    old = stack.root / "older"
    _checkout(_full_commit(older.commit[:7]) or older.commit, old)
    before = _fill_older(stack, old, older)
    filled = time.monotonic()

    # Today's code on the same data directory: migrate, then serve.
    migrate = stack.run([*CLI, "migrate"], timeout=120)
    migrated = time.monotonic()
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = stack.start("server", [*CLI, "serve", "--port", str(port)], cwd=REPO)
    wait_healthy(base, server)
    serving = time.monotonic()
    project = before["project"]
    api = _api(base, before["org"]["api_key"])

    assert api.get("/api/auth/verify").status_code == 200  # the older API key
    issues = _issues(api, project["slug"])
    assert set(issues) == set(before["issues"])
    for issue_id, (title, events) in before["issues"].items():
        now = api.get(f"/api/issues/{issue_id}").json()
        # The title follows the issue's latest event since migration 0150 (the older one kept the first's):
        # the same exception, its message may differ.
        assert (now["title"].split(":")[0], now["events"]) == (title.split(":")[0], events)
        assert _event_ids(api, issue_id) == before["events"][issue_id]
    if older.budgets_and_rules:
        after = {(b["id"], b["metric"], b["scope"], b["value"]) for b in _budgets(api, project["slug"])}
        assert after == before["budgets"]
        rules = {(r["id"], r["name"]) for r in api.get("/api/alerts/rules").json()["rules"]}
        assert rules == before["rules"]

    # The older app keys (the project's and the service's) still ingest.
    for key in (project["app_key"], before["service"]["app_key"]):
        line = {"v": 1, "type": "event", "app_key": key, "payload": {
            "event_id": uuid.uuid4().hex, "timestamp": time.time(), "platform": "python", "level": "error",
            "exception": {"values": [{"type": "RuntimeError", "value": f"after the upgrade {key[-4:]}"}]}}}  # fmt: skip
        sent = api.post(
            "/api/ingest", content=json.dumps(line), headers={"Content-Type": "application/x-ndjson"}
        )
        assert sent.status_code == 200 and sent.json()["accepted"] == 1, sent.text

    def new_events() -> int:
        fresh = [i for i in _issues(api, project["slug"]).values() if i["id"] not in before["issues"]]
        return sum(i["events"] for i in fresh) == 2 and all("after the upgrade" in i["title"] for i in fresh)

    assert wait_for("the two new events in the issue list", new_events, timeout=30)

    titles = [title.split(":")[0] for title, _ in before["issues"].values()]
    visited = _pages_answer(base, project["slug"], list(before["issues"]), titles)
    assert visited >= 5
    api.close()
    assert server.stop() == 0
    print(
        f"upgrade from {name} ({older.commit[:7]}): filled in {filled - started:.1f} s, migrated in "
        f"{migrated - filled:.1f} s, served in {serving - migrated:.1f} s, checked {visited} pages in "
        f"{time.monotonic() - serving:.1f} s"
    )
