"""`stacklens up`: the whole product on one machine with demo traffic, under one supervisor.

Order matters: the control store is migrated and the demo organization made here (neither opens the
warehouse), then the demo's alerts and budgets; then `stacklens serve` starts as a child and becomes the one
process that owns the embedded warehouse; once it answers, the demo's source maps are uploaded and the demo
shop, the shipper and the traffic start. Ctrl-C stops all of them.

The demo itself (the top-level ``demo`` and ``demo_shop`` packages) is never imported here: each of its steps
runs as ``python -m demo.…`` with this interpreter, so the core stays free of it (docs/architecture.md §4).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

from stacklens.cli.supervisor import (
    Child,
    StopRequested,
    Supervisor,
    end_console_process,
    python_module,
    run_on_console,
    start_on_console,
)
from stacklens.errors import Unavailable
from stacklens.listen import base_url, check_port_free
from stacklens.settings import Settings

WORKER_SERVICE = "worker"
# Where the demo's shop and driver read their app keys (demo_shop/server.py, demo/driver.py); the core does
# not import the demo, so the names are repeated here.
DEMO_APP_KEY_ENV = "STACKLENS_DEMO_APP_KEY"
DEMO_ENVELOPE_URL_ENV = "STACKLENS_DEMO_ENVELOPE_URL"  # docs/feedback.md: feedback and attachments
DEMO_WORKER_KEY_ENV = "STACKLENS_DEMO_WORKER_KEY"
DEMO_CHECKIN_BASE_ENV = "STACKLENS_DEMO_CHECKIN_BASE"
SERVER_START_SECONDS = 180.0
LOOPBACK = "127.0.0.1"


class ServerDidNotStart(Unavailable):
    """`stacklens serve` ended or stayed silent before answering its health check."""


class DemoStepFailed(Unavailable):
    """A step of the demo's preparation (``python -m demo.prepare``) ended with an error."""


def demo_allow(settings: Settings) -> str:
    """The demo server's ``STACKLENS_OUTBOUND_ALLOW``: the operator's value plus loopback, where the demo's
    alert channel posts to the shop."""
    current = [p.strip() for p in (settings.outbound_allow or "").split(",") if p.strip()]
    return ",".join(current if LOOPBACK in current else [*current, LOOPBACK])


DEMO_TEAMMATE = "teammate@example.com"


@dataclass(frozen=True)
class DemoKeys:
    organization: str
    email: str
    password: str
    api_key: str
    project: str
    app_key: str
    worker_key: str


def ensure_demo(settings: Settings) -> DemoKeys:
    """Control-store side of the demo: migrate, the organization and login, the worker's per-service key."""
    from stacklens.cli.demo_org import ensure_demo_org
    from stacklens.control import invitations
    from stacklens.control.db import session_scope
    from stacklens.control.keys.lifecycle import create_app_key, list_app_keys, reveal_app_key
    from stacklens.control.projects import project_by_slug

    demo = ensure_demo_org(settings)  # migrates the control store first
    with session_scope(settings) as session:
        project = project_by_slug(session, demo.project)
        services = {info.service for info in list_app_keys(session, project.id)}
        if WORKER_SERVICE in services:
            worker_key = reveal_app_key(session, project.id, WORKER_SERVICE)
        else:
            worker_key = create_app_key(session, project.id, WORKER_SERVICE)
        # The members page shows a pending invitation (its link is shown only when created; make a new one
        # there).
        if not invitations.pending_invitations(session, project.org_id):
            signer = invitations.signer_for(settings.secret())
            invitations.create_invitation(
                session, signer, project.org_id, DEMO_TEAMMATE, days=settings.invitation_days
            )
    return DemoKeys(
        demo.organization, demo.email, demo.password, demo.api_key, demo.project, demo.app_key, worker_key
    )


def _project_id(settings: Settings, slug: str) -> int:
    """The demo project's numeric id (a DSN's and the HTTP check-in's path carry it)."""
    from sqlalchemy import select

    from stacklens.control.db import session_scope
    from stacklens.control.models import Project

    with session_scope(settings) as session:
        found = session.scalar(select(Project.id).where(Project.slug == slug))
    if found is None:
        raise DemoStepFailed(f"the demo project {slug!r} is missing")
    return int(found)


def write_shipper_config(path: Path, keys: DemoKeys, base_url: str, storage_path: Path) -> None:
    """The shipper's `stacklens.yaml`, mode 0600 (it holds the API key)."""
    document = {
        "stacklens": {
            "apiKey": keys.api_key,
            "appKey": keys.app_key,
            "baseUrl": base_url,
            "storagePath": str(storage_path),
            "allowInsecureHttp": True,  # loopback only: the demo server speaks plain http on 127.0.0.1
            "flushInterval": "2s",
            "batchSize": 200,
            "compress": True,
            "logLevel": "info",
        }
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(document, handle, sort_keys=False)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _console_script(name: str) -> str:
    """The project's own console script next to this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def _wait_healthy(url: str, server: Child) -> bool:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if not server.running():
            return False
        try:
            if httpx.get(f"{url}/api/health", timeout=2.0).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


def run(settings: Settings, host: str, port: int, shop_port: int, backfill_days: int = 35) -> int:
    """Start everything under one supervisor; a stop signal at any point (even during start-up) stops all."""
    sup = Supervisor(run_file=settings.data_dir / "run" / "up.json")
    sup.install_signal_handlers()
    try:
        sup.reclaim()  # AlreadyRunning (a Conflict) when an earlier run still lives: the CLI says so
        return _start_all(sup, settings, host, port, shop_port, backfill_days)
    except StopRequested:
        print("\nstopping...", flush=True)
        sup.stop()
        print("all stopped.", flush=True)
        return 0
    finally:
        sup.restore_signal_handlers()


def _upload_demo_maps(url: str, keys: DemoKeys, env: dict[str, str]) -> None:
    """The shop front end's source maps for every demo release; the step says itself what it uploaded (and
    why not, when it could not: the demo runs on without them)."""
    key_env = {**env, "STACKLENS_URL": url, "STACKLENS_API_KEY": keys.api_key}
    run_on_console(python_module("demo.sourcemaps", "--project", keys.project), key_env)


def _start_all(
    sup: Supervisor, settings: Settings, host: str, port: int, shop_port: int, backfill_days: int
) -> int:
    check_port_free(host, port)
    check_port_free("127.0.0.1", shop_port)
    keys = ensure_demo(settings)
    url = base_url(settings, host, port)
    demo_dir = settings.data_dir / "demo"
    storage = demo_dir / "logs"
    storage.mkdir(parents=True, exist_ok=True, mode=0o750)
    logs = settings.data_dir / "logs"
    config_path = demo_dir / "stacklens.yaml"
    write_shipper_config(config_path, keys, f"http://127.0.0.1:{port}", storage)
    shop_url = f"http://127.0.0.1:{shop_port}"
    envelope_url = f"http://127.0.0.1:{port}/api/{_project_id(settings, keys.project)}/envelope/"
    secret_file = demo_dir / "webhook_secret"
    # The demo's alert channel posts to the shop on loopback, which the SSRF guard refuses unless allowed.
    env = {"STACKLENS_DATA_DIR": str(settings.data_dir), "STACKLENS_OUTBOUND_ALLOW": demo_allow(settings)}
    prepare = python_module(
        "demo.prepare",
        "--organization",
        keys.organization,
        "--project",
        keys.project,
        "--shop-url",
        shop_url,
        "--webhook-secret-file",
        str(secret_file),
    )
    status = run_on_console(prepare, env)
    if status != 0:
        raise DemoStepFailed(
            f"the demo's alerts and budgets were not made ({' '.join(prepare[1:])}: status {status})"
        )

    from stacklens.cli.demo_org import demo_agent_token

    print("Starting StackLens and the demo:", flush=True)
    server = sup.start(
        Child(
            "server",
            [_console_script("stacklens"), "serve", "--host", host, "--port", str(port)],
            logs / "server.log",
            env,
        )
    )
    if not _wait_healthy(f"http://127.0.0.1:{port}", server):
        tail = server.tail()
        sup.stop()
        raise ServerDidNotStart(f"the server did not come up; last lines of {server.log_path}:\n{tail}")
    _upload_demo_maps(f"http://127.0.0.1:{port}", keys, env)
    sup.start(
        Child(
            "shop",
            python_module(
                "demo_shop.server",
                "--storage-path",
                str(storage),
                "--port",
                str(shop_port),
                "--webhook-secret-file",
                str(secret_file),
            ),
            logs / "shop.log",
            # The keys in the environment, not on the command line: `ps` shows every user the arguments. The
            # envelope URL: where the shop sends its errors' attachments (demo_shop/attachments.py).
            {**env, DEMO_APP_KEY_ENV: keys.app_key, DEMO_ENVELOPE_URL_ENV: envelope_url},
        )
    )
    sup.start(
        Child(
            "shipper",
            [_console_script("stacklens-shipper"), "--config", str(config_path), "--record"],
            logs / "shipper.log",
            env,
        )
    )
    # Before the driver starts: a marker left by an earlier start means the history is in the marts already.
    marker = demo_dir / "backfill.done"
    catch_up = (
        None
        if marker.exists()
        else start_on_console(
            python_module("demo.catch_up", "--marker", str(marker)),
            # The organization key in the environment (not on the command line): it merges the demo's issues.
            {
                **env,
                "STACKLENS_URL": f"http://127.0.0.1:{port}",
                "STACKLENS_API_KEY": keys.api_key,
                "STACKLENS_PROJECT": keys.project,
            },
        )
    )
    sup.start(
        Child(
            "traffic",
            python_module(
                "demo.driver",
                "--shop",
                shop_url,
                "--storage-path",
                str(storage),
                "--backfill-days",
                str(backfill_days),
                "--backfill-marker",
                str(marker),
            ),
            logs / "traffic.log",
            {
                **env,
                DEMO_APP_KEY_ENV: keys.app_key,
                DEMO_WORKER_KEY_ENV: keys.worker_key,
                # The worker checks in as a cron job through Sentry's HTTP check-in (demo/monitors.py).
                DEMO_CHECKIN_BASE_ENV: f"http://127.0.0.1:{port}/api/{_project_id(settings, keys.project)}/cron",
                # The shop page's feedback widget posts there (demo/feedback.py).
                DEMO_ENVELOPE_URL_ENV: envelope_url,
            },
        )
    )
    print(
        "\n".join(
            [
                "",
                f"  StackLens dashboard:  {url}/",
                f"  Log in as:            {keys.email}",
                f"  Password:             {keys.password}",
                f"  API docs:             {url}/docs",
                f"  Agent token (MCP):    {demo_agent_token(settings)} (read; {url}/mcp, docs/agents.md)",
                f"  Shipper config:       {config_path}",
                f"  Demo shop:            {shop_url} (writes {storage})",
                f"  Alert inbox:          {shop_url}/webhooks/stacklens (the demo's webhook channel)",
                f"  Logs:                 {logs}/{{server,shop,shipper,traffic}}.log",
                "",
                "  The demo's history was sent by an earlier start; live traffic goes on. Ctrl-C stops everything."
                if catch_up is None
                else "  The demo's history is sent first (what landed is printed below), then built into the"
                " performance pages. Ctrl-C stops everything.",
                "",
            ]
        ),
        flush=True,
    )
    try:
        return sup.wait()
    finally:
        if catch_up is not None:
            end_console_process(catch_up)
