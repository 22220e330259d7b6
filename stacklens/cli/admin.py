"""`stacklens admin …`: organizations, projects, keys and quotas, straight on the control store.

These work while no server runs and never open the warehouse. ``--json`` prints one JSON object (scripts
and the benchmarks read it); without it the same facts are printed as plain lines.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy.orm import Session

from stacklens.settings import Settings, get_settings


@contextmanager
def control_session(settings: Settings | None = None) -> Iterator[Session]:
    """A migrated control store's session; control-store and account errors become one-line CLI errors."""
    from stacklens.cli.main import CliError
    from stacklens.control.db import ControlStoreError, migrate_control_store, session_scope
    from stacklens.control.errors import AccountError
    from stacklens.control.keys import KeyDecryptionError

    settings = settings or get_settings()
    try:
        migrate_control_store(settings)
        with session_scope(settings) as session:
            yield session
    except (AccountError, ControlStoreError, KeyDecryptionError) as exc:
        raise CliError(str(exc)) from exc


def emit(args: argparse.Namespace, payload: dict[str, Any]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload))
        return
    for name, value in payload.items():
        print(f"{name}: {value}")


def _create_org(args: argparse.Namespace) -> int:
    from stacklens.control import accounts

    with control_session() as session:
        org, api_key = accounts.create_organization(session, args.name, args.owner_email, args.password)
        payload = {"org_id": org.id, "api_key": api_key}
    emit(args, payload)
    return 0


def _create_project(args: argparse.Namespace) -> int:
    from stacklens.control import accounts

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        project, app_key = accounts.create_project(session, org.id, args.name, args.platform)
        payload = {"project_id": project.id, "slug": project.slug, "app_key": app_key}
    emit(args, payload)
    return 0


def _create_app_key(args: argparse.Namespace) -> int:
    from stacklens.control import accounts

    with control_session() as session:
        project = accounts.project_by_slug(session, args.project)
        app_key = accounts.create_app_key(session, project.id, args.service)
    emit(args, {"app_key": app_key, "service": args.service})
    return 0


def _regenerate_api_key(args: argparse.Namespace) -> int:
    from stacklens.control import accounts

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        api_key = accounts.regenerate_api_key(session, org.id)
    emit(args, {"api_key": api_key})
    return 0


def _regenerate_app_key(args: argparse.Namespace) -> int:
    from stacklens.control import accounts

    with control_session() as session:
        project = accounts.project_by_slug(session, args.project)
        app_key = accounts.regenerate_app_key(session, project.id, args.service)
    emit(args, {"app_key": app_key})
    return 0


def _set_quota(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError
    from stacklens.control import accounts

    if args.events_per_minute is None and args.requests_per_second is None:
        raise CliError("set-quota needs --events-per-minute and/or --requests-per-second")
    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        accounts.set_quota(
            session,
            org.id,
            events_per_minute=args.events_per_minute,
            requests_per_second=args.requests_per_second,
        )
        payload = {
            "org_id": org.id,
            "events_per_minute": org.events_per_minute,
            "requests_per_second": org.requests_per_second,
        }
    emit(args, payload)
    return 0


def _sub(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_, description=help_)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=func)
    return parser


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    admin = subparsers.add_parser(
        "admin", help="manage organizations, projects, keys and quotas", description=__doc__.splitlines()[0]
    )
    commands = admin.add_subparsers(dest="admin_command", metavar="ACTION", required=True)

    p = _sub(commands, "create-org", "create an organization, its owner and its API key", _create_org)
    p.add_argument("--name", required=True, help="organization name")
    p.add_argument("--owner-email", required=True, help="owner's e-mail (the user is created when missing)")
    p.add_argument("--password", required=True, help="owner's password (at least 8 characters) when new")

    p = _sub(commands, "create-project", "create a project and its primary app key", _create_project)
    p.add_argument("--org", required=True, help="organization name")
    p.add_argument("--name", required=True, help="project name (the slug is derived from it)")
    p.add_argument("--platform", default="python", help="python (default), javascript, node, …")

    p = _sub(commands, "create-app-key", "create a per-service app key", _create_app_key)
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--service", required=True, help="service name: [a-z][a-z0-9_]{0,30}")

    p = _sub(commands, "regenerate-api-key", "replace the organization's API key", _regenerate_api_key)
    p.add_argument("--org", required=True, help="organization name")

    p = _sub(
        commands,
        "regenerate-app-key",
        "replace a project's primary (or one service's) app key",
        _regenerate_app_key,
    )
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--service", default=None, help="the service whose key to replace; omit for the primary")

    p = _sub(commands, "set-quota", "change an organization's rate limits", _set_quota)
    p.add_argument("--org", required=True, help="organization name")
    p.add_argument("--events-per-minute", type=int, default=None, help="events accepted per minute")
    p.add_argument("--requests-per-second", type=int, default=None, help="requests per second per API key")
