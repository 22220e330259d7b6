"""`stacklens admin …`: organizations, owners, projects, keys and quotas, straight on the control store.

These work while no server runs and never open the warehouse. ``--json`` prints one JSON object (scripts
and the benchmarks read it); without it the same facts are printed as plain lines.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from stacklens.control.roles import ROLES
from stacklens.settings import Settings, get_settings

if TYPE_CHECKING:  # the ORM loads when a command opens the control store, not to list the commands
    from sqlalchemy.orm import Session


@contextmanager
def control_session(settings: Settings | None = None) -> Iterator[Session]:
    """A migrated control store's session; control-store and account errors become one-line CLI errors."""
    from stacklens.cli.main import CliError
    from stacklens.control.db import ControlStoreError, migrate_control_store, session_scope
    from stacklens.control.errors import AccountError
    from stacklens.control.keys.values import KeyDecryptionError

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
    from stacklens.control.projects import create_project

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        project, app_key = create_project(session, org.id, args.name, args.platform)
        payload = {"project_id": project.id, "slug": project.slug, "app_key": app_key}
    emit(args, payload)
    return 0


def _create_app_key(args: argparse.Namespace) -> int:
    from stacklens.control.keys.lifecycle import create_app_key
    from stacklens.control.projects import project_by_slug

    with control_session() as session:
        project = project_by_slug(session, args.project)
        app_key = create_app_key(session, project.id, args.service)
    emit(args, {"app_key": app_key, "service": args.service})
    return 0


def _regenerate_api_key(args: argparse.Namespace) -> int:
    from stacklens.control import accounts
    from stacklens.control.keys.lifecycle import regenerate_api_key

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        api_key = regenerate_api_key(session, org.id)
    emit(args, {"api_key": api_key})
    return 0


def _regenerate_app_key(args: argparse.Namespace) -> int:
    from stacklens.control.keys.lifecycle import regenerate_app_key
    from stacklens.control.projects import project_by_slug

    with control_session() as session:
        project = project_by_slug(session, args.project)
        app_key = regenerate_app_key(session, project.id, args.service)
    emit(args, {"app_key": app_key})
    return 0


def _set_quota(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError
    from stacklens.control import accounts

    if (args.org is None) == (args.project is None):
        raise CliError("set-quota needs --org NAME or --project SLUG")
    if args.project is not None:
        return _set_project_quota(args)
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


def _set_project_quota(args: argparse.Namespace) -> int:
    """A project's own events per minute (``--events-per-minute 0`` removes it) and category limits."""
    from stacklens.cli.main import CliError
    from stacklens.control.project_quotas import project_quotas, set_project_quota
    from stacklens.control.projects import project_by_slug
    from stacklens.errors import StackLensError

    if args.requests_per_second is not None:
        raise CliError("requests per second are per API key: set them with --org")
    if args.events_per_minute is None and not args.category:
        raise CliError("set-quota --project needs --events-per-minute and/or --category CATEGORY=N")
    categories: dict[str, int | None] | None = None
    with control_session() as session:
        project = project_by_slug(session, args.project)
        current = project_quotas(session, [project.id]).get(project.id)
        per_minute = current.events_per_minute if current else None
        if args.events_per_minute is not None:
            per_minute = args.events_per_minute or None
        if args.category:
            categories = dict(current.categories) if current else {}
            for given in args.category:
                name, _, value = given.partition("=")
                if not value.strip().isdigit():
                    raise CliError(f"--category takes CATEGORY=N (N per minute, 0 removes it), not {given!r}")
                categories[name.strip()] = int(value) or None
        try:
            quota = set_project_quota(session, project.org_id, project.id, per_minute, categories)
        except StackLensError as exc:
            raise CliError(str(exc)) from exc
        payload = {"project": project.slug, **quota.as_dict()}
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
    from stacklens.cli import admin_people  # imports this module's control_session and emit

    admin = subparsers.add_parser(
        "admin",
        help="manage organizations, owners, projects, keys and quotas",
        description=__doc__.splitlines()[0],
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

    p = _sub(
        commands,
        "set-owner",
        "make an existing member an owner (an organization left without one)",
        admin_people.set_owner,
    )
    p.add_argument("--org", required=True, help="organization name or slug")
    p.add_argument("--email", required=True, help="the member's e-mail (they must have joined already)")

    p = _sub(
        commands,
        "set-role",
        "give an existing member a role: owner, admin (manages all but owners, the API key and single "
        "sign-on), member, or viewer (read-only)",
        admin_people.set_role,
    )
    p.add_argument("--org", required=True, help="organization name or slug")
    p.add_argument("--email", required=True, help="the member's e-mail (they must have joined already)")
    p.add_argument("--role", required=True, choices=ROLES, help="the new role")

    p = _sub(
        commands,
        "break-glass",
        "let a member sign in with a password while the organization enforces single sign-on (each such "
        "sign-in is audited and shown to the owners)",
        admin_people.break_glass,
    )
    p.add_argument("--org", required=True, help="organization name or slug")
    p.add_argument("--email", required=True, help="the member's e-mail")
    p.add_argument("--remove", action="store_true", help="no longer a break-glass account")

    p = _sub(commands, "set-quota", "change an organization's or a project's rate limits", _set_quota)
    p.add_argument("--org", default=None, help="organization name")
    p.add_argument("--project", default=None, help="project slug: its own quota inside its organization's")
    p.add_argument(
        "--events-per-minute",
        type=int,
        default=None,
        help="events accepted per minute (with --project, 0 removes the project's own quota)",
    )
    p.add_argument(
        "--category",
        action="append",
        default=[],
        metavar="CATEGORY=N",
        help="with --project: a category's own limit per minute (error, transaction, span, session, log, "
        "replay); 0 removes it; repeatable",
    )
    p.add_argument("--requests-per-second", type=int, default=None, help="requests per second per API key")

    p = _sub(
        commands,
        "set-retention",
        "change the days of raw data a project keeps and its event caps (applied by the daily retention run "
        "or `stacklens retention run`)",
        _set_retention,
    )
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument(
        "--days",
        type=int,
        default=None,
        help="days kept, up to STACKLENS_RETENTION_DAYS; 0: the installation's; left out: unchanged",
    )
    p.add_argument(
        "--max-events-per-issue",
        type=int,
        default=None,
        metavar="N",
        help="most error events kept per issue, oldest removed first; 0: no cap; left out: unchanged",
    )
    p.add_argument(
        "--max-events-per-project",
        type=int,
        default=None,
        metavar="N",
        help="most error events kept in the project, oldest removed first; 0: no cap; left out: unchanged",
    )

    p = _sub(
        commands,
        "grant-operator",
        "let a person see the operators' page (/admin/operations): storage, backups, migrations, retention",
        _grant_operator,
    )
    p.add_argument("--email", required=True, help="the person's e-mail (an existing account)")
    p.add_argument("--revoke", action="store_true", help="take the operator's page away instead")


def _set_retention(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError
    from stacklens.control.project_retention import retention_of, set_event_caps, set_project_retention
    from stacklens.control.projects import project_by_slug
    from stacklens.errors import StackLensError

    caps = (args.max_events_per_issue, args.max_events_per_project)
    if args.days is None and caps == (None, None):
        raise CliError("give --days, --max-events-per-issue or --max-events-per-project")
    settings = get_settings()
    with control_session() as session:
        project = project_by_slug(session, args.project)
        try:
            kept = retention_of(session, project.id)
            if args.days is not None:
                kept = set_project_retention(
                    session, project.org_id, project.id, args.days or None, settings.retention_days
                )
            if caps != (None, None):
                # 0 lifts a cap; a cap left out keeps its value.
                per_issue = kept.max_events_per_issue if caps[0] is None else (caps[0] or None)
                per_project = kept.max_events_per_project if caps[1] is None else (caps[1] or None)
                kept = set_event_caps(session, project.org_id, project.id, per_issue, per_project)
        except StackLensError as exc:
            raise CliError(str(exc)) from exc
        payload = {
            "project": project.slug,
            "days": kept.days,
            "installation_days": settings.retention_days,
            "max_events_per_issue": kept.max_events_per_issue,
            "max_events_per_project": kept.max_events_per_project,
        }
    emit(args, payload)
    return 0


def _grant_operator(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from stacklens.cli.main import CliError
    from stacklens.control import accounts
    from stacklens.control.models import User

    with control_session() as session:
        user = session.scalar(select(User).where(User.email == accounts.normalise_email(args.email)))
        if user is None:
            raise CliError(f"no account with the e-mail {args.email!r}")
        user.is_operator = not args.revoke
        payload = {"email": user.email, "operator": user.is_operator}
    emit(args, payload)
    return 0
