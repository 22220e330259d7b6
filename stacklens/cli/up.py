"""`stacklens up`: what `make up` runs — the service with its demo organization, shop, traffic and shipper.

Under one supervisor: `stacklens serve` (API, dashboards, pipeline schedules), the demo shop instrumented
with stacklens_sdk, the traffic driver (customers, browsers, the mail worker) and `stacklens-shipper --record`
delivering the shop's log files. Ctrl-C stops them all. ``--no-demo`` serves the demo organization alone.
On a first run it prints, once the history is sent, what landed per kind and a WARNING line for every day that
lost traffic (:mod:`demo.backfill_report`).
"""

from __future__ import annotations

import argparse

from stacklens.settings import Settings, get_settings


def _run(args: argparse.Namespace) -> int:
    settings = get_settings()
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    if args.no_demo:
        return _serve_only(settings, host, port)
    from stacklens.cli import launch

    return launch.run(settings, host, port, args.shop_port, backfill_days=args.backfill_days)


def _serve_only(settings: Settings, host: str, port: int) -> int:
    from stacklens.cli.demo import ensure_demo_org
    from stacklens.cli.serve import migrate_all, run_server
    from stacklens.listen import base_url, check_port_free

    check_port_free(host, port)
    migrate_all(settings)
    demo = ensure_demo_org(settings)
    url = base_url(settings, host, port)
    print(
        "\n".join(
            [
                "",
                f"  StackLens dashboard: {url}/",
                f"  Log in as:           {demo.email}",
                f"  Password:            {demo.password}",
                f"  API key:             {demo.api_key}",
                f"  App key ({demo.project}): {demo.app_key}",
                f"  Agent token (MCP):   {demo.agent_token} (read; {url}/mcp, see docs/agents.md)",
                f"  API docs:            {url}/docs",
                "",
            ]
        ),
        flush=True,
    )
    return run_server(settings, host, port)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from stacklens.cli.serve import add_listen_arguments

    parser = subparsers.add_parser(
        "up", help="run StackLens with the demo organization, shop, traffic and shipper", description=__doc__
    )
    add_listen_arguments(parser)
    parser.add_argument("--shop-port", type=int, default=8001, help="the demo shop's port (default 8001)")
    parser.add_argument(
        "--backfill-days",
        type=int,
        default=35,
        help="days of demo history replayed on the first run (default 35)",
    )
    parser.add_argument(
        "--no-demo", action="store_true", help="serve the demo organization without shop and traffic"
    )
    parser.set_defaults(func=_run)
