"""`stacklens backup`, `status --storage`, `retention run` through a real running `stacklens serve` (which
owns the warehouse) while ingest keeps answering; `stacklens restore` into an empty data directory and a
second server on it answering the same; the scaled mode's statements and commands (dry run: no ClickHouse
server here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.stacklens.cli.test_pipelines_server import ROOT, free_port
from tests.stacklens.operations.installation import event_payload

pytestmark = pytest.mark.slow
PASSPHRASE = "a long enough passphrase"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stacklens.cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def environment(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        {
            "STACKLENS_DATA_DIR": str(data_dir),
            "STACKLENS_RUN_SCHEDULES": "false",
            "PYTHONPATH": str(ROOT),
            "BACKUP_PASSPHRASE": PASSPHRASE,
        }
    )
    return env


class Serving:
    def __init__(self, env: dict[str, str], data_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"serve-{self.port}.log"
        self.output = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stacklens.cli.main", "serve", "--port", str(self.port)],
            env=env,
            cwd=ROOT,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(self.url + "/api/health/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        pytest.fail("server did not start: " + self.log.read_text())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.output.close()


@pytest.fixture
def installation(tmp_path: Path) -> tuple[dict[str, str], Path, dict[str, Any]]:
    data_dir = tmp_path / "a" / "data"
    env = environment(data_dir)
    org = json.loads(
        ok(
            cli(
                env,
                *("admin", "create-org", "--name", "Acme", "--owner-email", "o@acme.test"),
                *("--password", "long-password-1", "--json"),
            )
        )
    )
    project = json.loads(ok(cli(env, "admin", "create-project", "--org", "Acme", "--name", "Shop", "--json")))
    return env, data_dir, {**org, **project, "project": "shop"}


def send(url: str, keys: dict[str, Any], count: int, start: int = 0) -> None:
    lines = [
        json.dumps({"v": 1, "type": "event", "app_key": keys["app_key"], "payload": event_payload(start + n)})
        for n in range(count)
    ]
    answer = httpx.post(
        url + "/api/ingest",
        content="\n".join(lines).encode(),
        headers={"Authorization": f"Bearer {keys['api_key']}", "Content-Type": "application/x-ndjson"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text


def issues(url: str, keys: dict[str, Any]) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{url}/api/projects/{keys['project']}/issues",
        headers={"Authorization": f"Bearer {keys['api_key']}"},
        params={"limit": 100},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["issues"]


def test_backup_through_the_server_and_restore_elsewhere(installation, tmp_path: Path) -> None:
    env, data_dir, keys = installation
    ok(cli(env, "admin", "set-retention", "--project", "shop", "--days", "30"))
    server = Serving(env, data_dir)
    try:
        send(server.url, keys, 6)
        answered = [0]
        stop = threading.Event()

        def keep_sending() -> None:
            # A steady writer, paced under the key's 50 requests a second (a 429 would fail the send).
            while not stop.wait(0.04):
                send(server.url, keys, 1, 100 + answered[0])
                answered[0] += 1

        sender = threading.Thread(target=keep_sending)
        sender.start()
        try:
            out = ok(cli(env, "backup", "--to", str(tmp_path / "b"), "--passphrase-env", "BACKUP_PASSPHRASE"))
        finally:
            stop.set()
            sender.join(60)
        assert "made by the running server" in out and "cut-off" in out, out
        assert answered[0] > 0
        # The probe's --to: a folder of earlier backups, and the data directory itself. Both refused through
        # the server, nothing in them changed, and the installation serves on.
        listed = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "b").rglob("*"))
        for given, message in ((tmp_path / "b", "is not empty"), (data_dir, "is the data directory")):
            refused = cli(env, "backup", "--to", str(given))
            assert refused.returncode == 2 and message in refused.stderr, refused.stderr
        assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "b").rglob("*")) == listed
        assert (data_dir / "control.db").is_file() and (data_dir / "secret_key").is_file()
        send(server.url, keys, 1, 900)
        storage = json.loads(ok(cli(env, "status", "--storage", "--json")))
        events = next(t for t in storage["tables"] if t["table"] == "events")
        assert events["rows"] == 6 + answered[0] + 1 and storage["free_bytes"] > 0
        assert storage["projects"][0]["name"] == "acme/shop" and storage["oldest_event"]
        text = ok(cli(env, "status", "--storage"))
        assert "events" in text and "acme/shop" in text and "KiB" in text, text
        run = json.loads(ok(cli(env, "retention", "run", "--json")))["run"]
        assert run["outcome"] == "succeeded" and run["kind"] == "retention"
        before = issues(server.url, keys)
        backed_up = json.loads((tmp_path / "b" / "manifest.json").read_text())
    finally:
        server.stop()
    assert backed_up["sealed"] and 6 <= backed_up["tables"]["events"]["rows"] <= 6 + answered[0]

    other = tmp_path / "c" / "data"
    other_env = environment(other)
    refused = cli(other_env, "restore", "--from", str(tmp_path / "b"))
    assert refused.returncode == 2 and "sealed: give its passphrase" in refused.stderr
    out = ok(
        cli(other_env, "restore", "--from", str(tmp_path / "b"), "--passphrase-env", "BACKUP_PASSPHRASE")
    )
    assert "rows match the backup" in out, out
    tampered = json.loads((tmp_path / "b" / "manifest.json").read_text())
    tampered["dagster_files"] = ["../../../../escaped.db"]
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(tampered))
    third = environment(tmp_path / "d" / "data")
    refused = cli(third, "restore", "--from", str(tmp_path / "b"), "--passphrase-env", "BACKUP_PASSPHRASE")
    assert refused.returncode == 2 and "signature does not match" in refused.stderr, refused.stderr
    restored = Serving(other_env, other)
    try:
        after = issues(restored.url, keys)  # the API key opens: the secret came back with the backup
    finally:
        restored.stop()
    # The events answered after the cut-off are not in the backup; everything before it is, issue by issue.
    assert {i["id"] for i in after} == {i["id"] for i in before}
    assert sum(i["events"] for i in after) == backed_up["tables"]["events"]["rows"]


def test_scaled_mode_prints_the_servers_backup_and_the_dumps(tmp_path: Path) -> None:
    env = environment(tmp_path / "data")
    env.update(
        {
            "STACKLENS_WAREHOUSE_URL": "http://127.0.0.1:9/",
            "STACKLENS_WAREHOUSE_CLUSTER": "main",
            "STACKLENS_DATABASE_URL": "postgresql+psycopg://lens:s3cret-pw@db.internal:5432/stacklens",
            "STACKLENS_DAGSTER_DATABASE_URL": "postgresql+psycopg2://dag:other-pw@db.internal:5432/dagster",
            "STACKLENS_SECRET_KEY": "a-secret-key-long-enough-0123",
        }
    )
    out = ok(
        cli(
            env,
            *("backup", "--to", str(tmp_path / "b"), "--dry-run"),
            *("--warehouse-to", "s3:https://bucket.s3.amazonaws.com/lens"),
        )
    )
    lines = out.splitlines()
    assert lines[1].startswith(
        "BACKUP DATABASE stacklens ON CLUSTER 'main' TO S3('https://bucket.s3.amazonaws.com/lens/stacklens-"
    ), out
    assert (
        f"PGPASSWORD=*** pg_dump --format=custom --no-owner --file {tmp_path / 'b' / 'control.dump'}" in out
    )
    assert "--dbname postgresql://lens@db.internal:5432/stacklens" in out
    assert "--dbname postgresql://dag@db.internal:5432/dagster" in out
    assert "s3cret-pw" not in out and "other-pw" not in out and not (tmp_path / "b").exists()
    bad = cli(env, "backup", "--to", str(tmp_path / "b"), "--dry-run", "--warehouse-to", "ftp:x")
    assert bad.returncode == 2 and "--warehouse-to 'ftp:x': use disk:NAME" in bad.stderr

    (tmp_path / "made").mkdir()
    (tmp_path / "made" / "manifest.json").write_text(
        json.dumps(
            {
                "format": 1,
                "mode": "scaled",
                "database": "stacklens",
                "warehouse": {"engine": "Disk", "args": ["backups", "stacklens-20261126T010000Z"]},
            }
        )
    )
    out = ok(cli(env, "restore", "--from", str(tmp_path / "made"), "--dry-run"))
    assert (
        "RESTORE DATABASE stacklens ON CLUSTER 'main' FROM Disk('backups', 'stacklens-20261126T010000Z');"
        in out
    ), out
    assert (
        f"pg_restore --no-owner --exit-on-error --dbname postgresql://lens@db.internal:5432/stacklens {tmp_path / 'made' / 'control.dump'}"
        in out
    )
