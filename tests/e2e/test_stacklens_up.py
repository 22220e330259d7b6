"""`stacklens up` (what `make up` runs), as a newcomer meets it, on a fresh data directory.

It must print the dashboard URL, the login and the shipper config; the demo project must show issues within
150 s; Ctrl-C (SIGINT to the whole process group, as a terminal sends it) must stop every process it started
and exit 0; and a second run on the same data directory must reuse the same login and keys.

Both tests watch one run, started once for the module in a fresh clone (as `make up` there keeps its data in
./data, inside the clone's git work tree): the first test checks the clone's demo traffic is delivered, the
second goes on with the same run. Each test started its own before: a start costs a run of the whole demo
(measured under a load of ~9: 97 s from the launch to the shipper's first batch).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml

from tests.e2e.e2e_stack import BIN, Proc, Stack, clean_env, free_port, sign_in, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

ISSUES_WITHIN_SECONDS = 150.0


def launch(stack: Stack, port: int, shop_port: int) -> Proc:
    argv = [
        str(BIN / "stacklens"),
        "up",
        "--port",
        str(port),
        "--shop-port",
        str(shop_port),
        "--backfill-days",
        "3",
    ]
    log_path = stack.root / f"up-{len(stack.procs) + 1}.log"
    with open(log_path, "wb") as out:
        # A session of its own, so SIGINT can go to the whole group, as Ctrl-C in a terminal does.
        popen = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=stack.env, cwd=stack.root, start_new_session=True
        )
    proc = Proc("up", popen, log_path)
    stack.procs.append(proc)
    return proc


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:  # ended meanwhile, or not ours to read
        return b""


def kill_groups(stack: Stack) -> None:
    """Whatever a failed run left behind: every process of each launcher's group, even after it exited."""
    for proc in stack.procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.popen.pid, signal.SIGKILL)
    stack.close()


def banner(proc: Proc) -> dict[str, str]:
    """The lines `stacklens up` prints once the server answers (empty until then)."""
    text = proc.output()
    if not proc.running():
        raise AssertionError(f"stacklens up exited with {proc.popen.returncode}:\n{text[-3000:]}")
    fields = {
        "url": r"StackLens dashboard:\s+(\S+)",
        "email": r"Log in as:\s+(\S+)",
        "password": r"Password:\s+(\S+)",
        "config": r"Shipper config:\s+(\S+)",
    }
    found = {name: m.group(1) for name, rx in fields.items() if (m := re.search(rx, text))}
    api_key = re.search(r"API key:\s+(stacklens_api_\S+)", text)
    if api_key:
        found["api_key"] = api_key.group(1)
    return found if len(found) >= len(fields) else {}


def shipper_keys(config: Path) -> dict[str, Any]:
    assert stat.S_IMODE(config.stat().st_mode) == 0o600, oct(config.stat().st_mode)
    document = yaml.safe_load(config.read_text())["stacklens"]
    return {"apiKey": document["apiKey"], "appKey": document["appKey"]}


def demo_issues(base: str, api_key: str) -> list[dict[str, Any]]:
    api = httpx.Client(base_url=base, timeout=15.0, headers={"Authorization": f"Bearer {api_key}"})
    with api:
        projects = api.get("/api/projects")
        assert projects.status_code == 200, projects.text
        issues: list[dict[str, Any]] = []
        for project in projects.json()["projects"]:
            # The DSNs name the server where `up --port` put it, not the default port.
            assert all(
                k["dsn"].endswith(f"@{base.split('//', 1)[1]}/{project['id']}") for k in project["app_keys"]
            )
            page = api.get(f"/api/projects/{project['slug']}/issues", params={"status": "all", "limit": 100})
            assert page.status_code == 200, page.text
            issues.extend(page.json()["issues"])
        return issues


def _probed_monitors(base: str, api_key: str) -> dict[str, Any] | None:
    """The demo project's monitors by slug, once the shop's uptime check has found it answering (a probe
    made while the shop still starts, or on a machine busy past the check's 5 s timeout, is down; the check
    probes again each minute)."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {api_key}"}, timeout=30) as api:
        for project in api.get("/api/projects").json()["projects"]:
            answer = api.get(f"/api/projects/{project['slug']}/monitors")
            rows = {m["slug"]: m for m in answer.json().get("rows", [])} if answer.status_code == 200 else {}
            if (
                "shop" in rows
                and rows["shop"]["last_checkin"]
                and rows["shop"]["last_checkin_status"] == "ok"
            ):
                return rows
    return None


def family(proc: Proc) -> list[psutil.Process]:
    root = psutil.Process(proc.popen.pid)
    return [root, *root.children(recursive=True)]


def strays(data_dir: Path) -> list[str]:
    """Processes still running for this installation (started with its data dir or naming it)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            if process.info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
                continue
            cmdline = " ".join(process.info["cmdline"] or [])
            if str(data_dir) in cmdline or process.environ().get("STACKLENS_DATA_DIR") == str(data_dir):
                found.append(f"{process.pid} {cmdline[:160]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def interrupt(proc: Proc, data_dir: Path) -> None:
    """Ctrl-C: SIGINT to the process group; `stacklens up` must exit 0 and leave nothing running."""
    started = family(proc)
    assert len(started) >= 5, f"expected the launcher and its four children, found {len(started)}"
    os.killpg(proc.popen.pid, signal.SIGINT)
    code = proc.wait(90)
    assert code == 0, f"stacklens up exited {code} after Ctrl-C:\n{proc.output()[-2000:]}"
    wait_for(
        "every process of the installation to end",
        lambda: (
            not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in started)
            and not strays(data_dir)
        ),
        15,
        0.5,
    )


@dataclass(frozen=True)
class DemoUp:
    """The module's `stacklens up`, started on a fresh data directory inside a fresh clone."""

    stack: Stack
    up: Proc
    data: Path
    port: int
    shop_port: int
    started: float  # time.monotonic() at its launch


@pytest.fixture(scope="module")
def demo_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoUp]:
    root = tmp_path_factory.mktemp("up")
    clone = root / "clone"
    clone.mkdir()
    subprocess.run(["git", "init", "-q", str(clone)], check=True, timeout=30)
    # A clone carries the project's .gitignore, which keeps ./data (and the demo's shipper config) out of git.
    shutil.copy(Path(__file__).resolve().parents[2] / ".gitignore", clone / ".gitignore")
    data = clone / "data"
    stack = Stack(root, clean_env(data))
    try:
        port, shop_port = free_port(), free_port()
        started = time.monotonic()
        yield DemoUp(stack, launch(stack, port, shop_port), data, port, shop_port, started)
    finally:
        kill_groups(stack)


def test_up_in_a_fresh_clone_delivers_the_demo_traffic(demo_up: DemoUp) -> None:
    """`make up` on a fresh clone keeps its data in ./data, inside the clone's git work tree (its Ctrl-C is
    the next test's)."""
    up, data = demo_up.up, demo_up.data
    with demo_up.stack.reporting():
        wait_for("the dashboard URL and login", lambda: banner(up), 180, 0.5)
        shipper_log = data / "logs" / "shipper.log"
        wait_for(
            "the demo shipper's first delivered batch",
            lambda: banner(up) and shipper_log.exists() and "Batch sent:" in shipper_log.read_text(),
            90,
            1.0,
        )


def test_up_serves_the_demo_stops_on_ctrl_c_and_reuses_its_data(demo_up: DemoUp) -> None:
    stack, up, data = demo_up.stack, demo_up.up, demo_up.data
    port, shop_port, started = demo_up.port, demo_up.shop_port, demo_up.started
    with stack.reporting():
        first = wait_for("the dashboard URL and login", lambda: banner(up), 180, 0.5)
        assert first["url"].rstrip("/") == f"http://127.0.0.1:{port}"
        keys = shipper_keys(Path(first["config"]))
        if "api_key" in first:
            assert first["api_key"] == keys["apiKey"]
        base = first["url"].rstrip("/")
        browser = sign_in(base, first["email"], first["password"])
        browser.close()
        issues = wait_for(
            "issues in the demo project",
            lambda: [i for i in demo_issues(base, keys["apiKey"]) if i["events"] > 0],
            max(1.0, ISSUES_WITHIN_SECONDS - (time.monotonic() - started)),
            2.0,
        )
        assert all(i["title"] and i["culprit"] for i in issues)
        # The demo's monitors (demo/monitors.py): the worker's cron job with its history, and the shop's
        # uptime check, probed by the server's own schedule runner.
        monitors = wait_for(
            "the demo's monitors, the shop probed and up",
            lambda: _probed_monitors(base, keys["apiKey"]),
            150,
            2.0,
        )
        assert monitors["order-mail"]["kind"] == "cron" and monitors["order-mail"]["last_checkin"]
        assert monitors["shop"]["last_checkin_status"] == "ok"
        # No process shows an app key on its command line, where `ps` shows it to every user (issue #47).
        shown = [
            p.name
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and keys["appKey"].encode() in _cmdline(p)
        ]
        assert not shown, shown
        interrupt(up, data)

        # The same data directory again: same login, same keys, nothing recreated.
        again = launch(stack, port, shop_port)
        second = wait_for("the dashboard URL and login of the second run", lambda: banner(again), 180, 0.5)
        assert (second["email"], second["password"]) == (first["email"], first["password"])
        assert second["config"] == first["config"] and shipper_keys(Path(second["config"])) == keys
        assert second.get("api_key") == first.get("api_key")
        sign_in(base, second["email"], second["password"]).close()
        interrupt(again, data)
