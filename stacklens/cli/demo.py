"""`stacklens demo-org`: a demo organization, login and project, the same on every run.

The first run creates them; later runs print the same values (see :mod:`stacklens.cli.demo_org`). ``make up``
calls this and prints the login.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING

from stacklens.settings import Settings, get_settings

if TYPE_CHECKING:  # the control store's modules load when the command runs, not for every other command
    from stacklens.cli.demo_org import DemoOrg


def ensure_demo_org(settings: Settings) -> DemoOrg:
    """The demo organization's login and keys; control-store and account errors become one-line CLI errors."""
    from stacklens.cli import demo_org
    from stacklens.cli.main import CliError
    from stacklens.control.db import ControlStoreError
    from stacklens.control.errors import AccountError
    from stacklens.control.keys.values import KeyDecryptionError

    try:
        return demo_org.ensure_demo_org(settings)
    except (AccountError, ControlStoreError, KeyDecryptionError) as exc:
        raise CliError(str(exc)) from exc


def _run(args: argparse.Namespace) -> int:
    from stacklens.cli.admin import emit

    emit(args, asdict(ensure_demo_org(get_settings())))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo-org",
        help="create (or print) the demo organization, login, project and keys",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=_run)
