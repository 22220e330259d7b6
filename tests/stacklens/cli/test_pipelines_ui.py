"""`stacklens pipelines ui` as docs/pipelines.md describes it (issue #47, point 7): the real
dagster-webserver over a fresh installation, in a real browser; the command prints the asset graph's
address, which shows the marts' graph, and says how runs and backfills are launched (the UI is read-only).
Screenshot saved."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.browser import shots_dir

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_ui_prints_the_asset_graph_and_it_shows_the_marts(chromium, tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")},
        "STACKLENS_DATA_DIR": str(tmp_path / "data"),
        "STACKLENS_PORT": str(_free_port()),  # no server there: this is a new installation
    }
    out = (tmp_path / "ui.log").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "stacklens.cli.main", "pipelines", "ui", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 150
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, Path(out.name).read_text()[-2000:]
            time.sleep(0.5)
        printed = Path(out.name).read_text()
        graph = re.search(r"asset graph at (http://\S+)", printed)
        assert graph and graph.group(1) == f"http://127.0.0.1:{port}/asset-groups", printed
        assert "stacklens pipelines backfill --from" in printed
        shots = shots_dir("pipelines")
        shots.mkdir(parents=True, exist_ok=True)
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.goto(graph.group(1))
        page.get_by_text("Global asset lineage").first.wait_for(timeout=60_000)
        # The graph of the marts' groups, each a box of its assets.
        for group in ("raw", "issues", "performance", "budgets", "alerts"):
            page.get_by_text(group, exact=True).first.wait_for(timeout=30_000)
        page.screenshot(path=str(shots / "asset_graph_1400.png"))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        out.close()
