"""`stacklens admin set-owner | set-role | break-glass`: who holds which role in an organization, and who may
still sign in with a password when single sign-on is enforced — from the command line, the way back when no
owner can act on the members page."""

from __future__ import annotations

import argparse

from stacklens.cli.admin import control_session, emit


def set_owner(args: argparse.Namespace) -> int:
    """Make an existing member an owner: the way back for an organization left without one. Logged like a role
    change on the members page, by "command line"."""
    from stacklens.control import accounts

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        user, previous = accounts.make_owner(session, org.id, args.email)
        payload = {
            "org_id": org.id,
            "email": user.email,
            "role": "owner",
            "previous_role": previous,
            "changed": previous != "owner",
        }
    emit(args, payload)
    return 0


def set_role(args: argparse.Namespace) -> int:
    """Give an existing member one of the four roles (owner, admin, member, viewer), with an owner's
    authority; logged like a role change on the members page, by "command line". The last owner stays one."""
    from stacklens.control import accounts

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        user, previous = accounts.set_role(session, org.id, args.email, args.role)
        payload = {
            "org_id": org.id,
            "email": user.email,
            "role": args.role,
            "previous_role": previous,
            "changed": previous != args.role,
        }
    emit(args, payload)
    return 0


def break_glass(args: argparse.Namespace) -> int:
    """Name a break-glass account (or, with --remove, no longer): from the command line only, so a stolen
    owner session cannot make itself one."""
    from stacklens.cli.main import CliError
    from stacklens.control import accounts
    from stacklens.errors import StackLensError
    from stacklens.sso.enforcement import break_glass_accounts, name_break_glass

    with control_session() as session:
        org = accounts.organization_by_name(session, args.org)
        try:
            user = name_break_glass(session, org, args.email, remove=args.remove)
        except StackLensError as exc:
            raise CliError(str(exc)) from exc
        payload = {
            "org": org.slug,
            "email": user.email,
            "break_glass": not args.remove,
            "break_glass_accounts": break_glass_accounts(session, org.id),
        }
    emit(args, payload)
    return 0
