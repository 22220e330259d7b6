"""`stacklens up`: what `make up` runs. Migrate, make sure the demo organization exists, print where to
log in, then serve in the foreground."""

from __future__ import annotations

import argparse

from stacklens.settings import get_settings


def _run(args: argparse.Namespace) -> int:
    from stacklens.cli.demo import ensure_demo_org
    from stacklens.cli.serve import base_url, check_port_free, migrate_all, run_server

    settings = get_settings()
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
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
                f"  API docs:            {url}/docs",
                f"  Data directory:      {settings.data_dir}",
                "",
            ]
        ),
        flush=True,
    )
    return run_server(settings, host, port)


def register(subparsers: argparse._SubParsersAction) -> None:
    from stacklens.cli.serve import add_listen_arguments

    parser = subparsers.add_parser(
        "up", help="migrate, create the demo organization, print the login and serve", description=__doc__
    )
    add_listen_arguments(parser)
    parser.set_defaults(func=_run)
