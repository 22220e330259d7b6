"""A project's own script hosts: host names (optionally with a port) whose scripts count as first party in the
INP view beside the page's own host (``projects.first_party_hosts``, docs/performance.md "INP causes").

The ``inp_interactions`` asset classifies each script when it writes an hour: a change applies to the hours
written from then on (a new interaction, or an hour that receives more)."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project
from stacklens.errors import InvalidInput

MAX_HOSTS = 50
# A DNS name or an IPv4 address, lower case, with an optional port: what a script URL's host is compared to.
_HOST = re.compile(
    r"^(?=.{1,253}(:\d{1,5})?$)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*(:\d{1,5})?$"
)


def normalise_hosts(values: object) -> list[str]:
    """The hosts of ``values`` (a list of strings), lower case, without duplicates, in the given order;
    :class:`InvalidInput` naming the field ``hosts`` for anything else."""
    if not isinstance(values, list) or len(values) > MAX_HOSTS:
        raise InvalidInput(f"hosts must be a list of at most {MAX_HOSTS} host names")
    out: list[str] = []
    for value in values:
        host = value.strip().lower() if isinstance(value, str) else ""
        if not _HOST.match(host):
            raise InvalidInput(
                f"hosts: {str(value)[:80]!r} is not a host name (like cdn.example.com or localhost:8001)"
            )
        if host not in out:
            out.append(host)
    return out


def first_party_hosts(session: Session, org_id: int, project_id: int) -> list[str] | None:
    """The project's own hosts; ``None`` when ``org_id`` has no such project."""
    row = session.execute(
        select(Project.first_party_hosts).where(Project.id == project_id, Project.org_id == org_id)
    ).first()
    if row is None:
        return None
    return [str(h) for h in row[0]] if isinstance(row[0], list) else []


def set_first_party_hosts(session: Session, org_id: int, project_id: int, hosts: list[str]) -> bool:
    """Replace the project's own hosts (already normalised); ``False`` when ``org_id`` has no such project."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        return False
    project.first_party_hosts = list(hosts)
    return True


def all_first_party_hosts(session: Session) -> dict[int, list[str]]:
    """Every project's own hosts that has some, by project id (what the asset passes to its query)."""
    rows = session.execute(select(Project.id, Project.first_party_hosts)).all()
    return {int(pid): [str(h) for h in hosts] for pid, hosts in rows if isinstance(hosts, list) and hosts}
