"""`dagster dev -w workspace.yaml` without the scaled-mode variables: every schedule skips with words that say
what to set (and that the embedded installation runs its pipelines in `stacklens serve`), instead of an
environment-variable error every minute; with the variables set, the schedules plan runs again.

The ticks are evaluated in a child interpreter, as the Dagster daemon evaluates them in its own process: a
Dagster instance made for one evaluation registers itself process-wide, and once gone it would break the
definitions later tests of this process load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipelines.definitions import defs
from pipelines.resources import SCALED_SETTINGS_MISSING

ROOT = Path(__file__).resolve().parents[2]
TICKS = """
import json, sys
import dagster as dg
from pipelines.definitions import defs

out = {}
with dg.instance_for_test() as instance:
    for name in sys.argv[1:]:
        schedule = defs.resolve_schedule_def(name)
        # A context manager, as the daemon uses it: the scaled warehouse resource gives the embedded
        # engine's directory back when the evaluation ends.
        with dg.build_schedule_context(instance=instance, resources={"warehouse": defs.resources["warehouse"]}) as context:
            result = schedule.evaluate_tick(context)
        out[name] = {"skip": result.skip_message, "runs": len(result.run_requests or [])}
print(json.dumps(out))
"""


def _ticks(env: dict[str, str], names: list[str]) -> dict[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", TICKS, *names],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _without_scaled_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}


def test_every_schedule_skips_with_what_to_set() -> None:
    ticks = _ticks(_without_scaled_settings(), [schedule.name for schedule in defs.schedules])
    expected = SCALED_SETTINGS_MISSING.format(names="STACKLENS_WAREHOUSE_URL, STACKLENS_WAREHOUSE_DATABASE")
    for name, tick in ticks.items():
        assert tick == {"skip": expected, "runs": 0}, name
    assert "stacklens serve" in expected and "stacklens pipelines ui" in expected


def test_with_the_variables_the_budgets_schedule_runs(tmp_path: Path) -> None:
    env = {
        **_without_scaled_settings(),
        "STACKLENS_WAREHOUSE_URL": f"chdb://{tmp_path / 'warehouse'}",
        "STACKLENS_WAREHOUSE_DATABASE": "unconfigured_test",
    }
    assert _ticks(env, ["budgets_every_5_minutes"]) == {"budgets_every_5_minutes": {"skip": None, "runs": 1}}
