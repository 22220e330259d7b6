"""`stacklens pipelines run [--select KEY …]` and `stacklens pipelines ui`."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from stacklens.cli.main import CliError
from stacklens.settings import get_settings

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace.yaml"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("pipelines", help="Materialize the marts now, or open the Dagster UI.")
    commands = parser.add_subparsers(dest="pipelines_command", metavar="COMMAND")
    run = commands.add_parser("run", help="Materialize the marts that have new data now.")
    run.add_argument(
        "--select", nargs="+", metavar="KEY", help="Only jobs holding these assets (e.g. issues)."
    )
    run.set_defaults(func=_run)
    ui = commands.add_parser("ui", help="Open the Dagster UI (read-only) over the pipelines' instance.")
    ui.add_argument("--port", type=int, default=3070)
    ui.set_defaults(func=_ui)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)


def _run(args: argparse.Namespace) -> int:
    from pipelines.definitions import defs
    from pipelines.embedded import dagster_instance, materialize_now
    from pipelines.resources import export_settings_env

    settings = get_settings()
    export_settings_env(settings)
    known = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    unknown = sorted(set(args.select or []) - known)
    if unknown:
        raise CliError(f"unknown asset {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    # Opening the warehouse raises WarehouseUnavailable, with what to do, when a running server owns it.
    from stacklens.warehouse.client import get_warehouse

    get_warehouse(settings)
    outcomes = materialize_now(defs, dagster_instance(settings), args.select)
    if not outcomes:
        print("nothing to do: no new data since the last run")
    for outcome in outcomes:
        state = "ok" if outcome.success else f"FAILED: {outcome.error}"
        print(f"{outcome.job}: run {outcome.run_id} {state}")
    return 0 if all(o.success for o in outcomes) else 1


def _ui(args: argparse.Namespace) -> int:
    from pipelines.embedded import dagster_instance
    from pipelines.resources import export_settings_env

    settings = get_settings()
    dagster_instance(settings).dispose()  # creates <data_dir>/dagster and its dagster.yaml when missing
    export_settings_env(settings)
    binary = shutil.which("dagster-webserver") or str(Path(sys.executable).with_name("dagster-webserver"))
    env = {**os.environ, "DAGSTER_HOME": str(settings.dagster_home)}
    command = [binary, "-w", str(WORKSPACE), "--read-only", "-h", "127.0.0.1", "-p", str(args.port)]
    print(f"Dagster UI (read-only) on http://127.0.0.1:{args.port}")
    return subprocess.call(command, env=env)
