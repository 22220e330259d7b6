"""`make up` takes the ports (issue #47): `PORT=` for the dashboard (and the other commands' STACKLENS_PORT),
`SHOP_PORT=` for the demo shop; without them `stacklens up` keeps its defaults."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _up_line(*assignments: str) -> str:
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "up", *assignments], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if "stacklens.cli.main up" in line)


def test_make_up_passes_the_ports_on() -> None:
    line = _up_line("PORT=9100", "SHOP_PORT=9101")
    assert line.startswith("STACKLENS_PORT=9100 ") and line.endswith("up --port 9100 --shop-port 9101")
    assert _up_line("SHOP_PORT=9101").endswith("up  --shop-port 9101")
    assert _up_line().rstrip().endswith("stacklens.cli.main up")
