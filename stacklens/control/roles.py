"""The four roles of a membership and what each may do, in one place (docs/security.md, "Roles").

- ``owner``: everything.
- ``admin``: what an owner does for projects, teams, alerts, channels, integrations, settings and members,
  except what could take the organization away from its owners: making or removing an owner, the
  organization's API key (it speaks for the owners), single sign-on (it decides who signs in, with which
  role) and deleting it.
- ``member``: views, triages and builds (issues, dashboards, queries, comments); manages nothing.
- ``viewer``: reads everything, changes nothing but their own account and notification preferences (enforced
  for every write of the pages at once, ``dashboards.context.org_viewer``).

Roles are stored by name (``Membership.role``, ``Invitation.role``: ``String(16)``, no check constraint), so a
role is a value of :data:`ROLES`, never a number.
"""

from __future__ import annotations

from stacklens.errors import Forbidden

ROLES = ("owner", "admin", "member", "viewer")
RANK = {"viewer": 0, "member": 1, "admin": 2, "owner": 3}
ADMINS = ("owner", "admin")  # who manages the organization


class RoleRefused(Forbidden):
    """The actor's role may not make this change of a membership or an invitation (403, says why)."""


def is_role(value: object) -> bool:
    return isinstance(value, str) and value in RANK


def manages(role: str | None) -> bool:
    """Whether ``role`` manages the organization (projects, teams, alerts, members, settings)."""
    return role in ADMINS


def writes(role: str | None) -> bool:
    """Whether ``role`` may change anything in the organization (every role but viewer)."""
    return role in RANK and role != "viewer"


def grantable(actor_role: str | None) -> tuple[str, ...]:
    """The roles ``actor_role`` may give (to an invitation or a member), highest first: an owner any, an admin
    up to admin, anyone else none."""
    if actor_role == "owner":
        return ROLES
    if actor_role == "admin":
        return tuple(role for role in ROLES if role != "owner")
    return ()


def may_change(actor_role: str | None, target_role: str, new_role: str | None) -> str | None:
    """Why ``actor_role`` may not move a member from ``target_role`` to ``new_role`` (``None``: removing
    them); ``None`` when they may. An admin never touches an owner, nor makes one."""
    if actor_role == "owner":
        return None
    if actor_role != "admin":
        return "only owners and admins manage members"
    if target_role == "owner":
        return "only an owner can change or remove an owner"
    if new_role == "owner":
        return "only an owner can make someone an owner"
    return None


def check_change(actor_role: str, target_role: str, new_role: str | None) -> None:
    """Refuse (:class:`RoleRefused`) what :func:`may_change` refuses."""
    why = may_change(actor_role, target_role, new_role)
    if why is not None:
        raise RoleRefused(why)


def check_grant(actor_role: str, role: str) -> None:
    """Refuse (:class:`RoleRefused`) giving ``role`` (an invitation's) when ``actor_role`` may not."""
    if is_role(role) and role not in grantable(actor_role):
        raise RoleRefused(
            "only an owner can invite an owner" if actor_role == "admin" else "only owners and admins invite"
        )
