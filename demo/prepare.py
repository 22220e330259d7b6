"""``python -m demo.prepare``: the demo's alerts, budgets, team, ownership rule, dashboard (and its daily
summary to the shop's inbox), event cap, scrubbing rules and monitors in the control store, before the server
starts.

`stacklens up` runs it once per start with the demo project it made; safe to run again (each part is made by
name and left as the user changed it). Settings come from the environment, as the server's do.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from demo.alerts import ensure_demo_alerts
from demo.budgets import ensure_demo_budgets
from demo.dashboard_workspace import ensure_workspace_dashboard
from demo.dashboards import ensure_demo_dashboard, ensure_demo_subscription
from demo.monitors import ensure_demo_monitors
from demo.retention import ensure_demo_event_caps
from demo.scrubbing import ensure_demo_scrubbing
from demo.team import ensure_demo_team
from stacklens.settings import get_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.prepare", description=__doc__.splitlines()[0])
    parser.add_argument("--organization", required=True, help="the demo organization's name")
    parser.add_argument("--project", required=True, help="the demo project's slug")
    parser.add_argument("--shop-url", required=True, help="the demo shop, where the alert channel posts")
    parser.add_argument(
        "--webhook-secret-file", required=True, type=Path, help="where the channel's signing secret is kept"
    )
    args = parser.parse_args(argv)
    settings = get_settings()
    ensure_demo_alerts(settings, args.organization, args.project, args.shop_url, args.webhook_secret_file)
    ensure_demo_budgets(settings, args.project)
    ensure_demo_team(settings, args.project)
    ensure_demo_dashboard(settings, args.project)
    ensure_demo_subscription(settings, args.project)
    ensure_workspace_dashboard(settings, args.project)  # variables, drill-down, the kinds beyond the four
    ensure_demo_event_caps(settings, args.project)
    ensure_demo_scrubbing(settings, args.project)
    ensure_demo_monitors(settings, args.project, args.shop_url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
