"""A project's scrubbing rules in the control store (``projects.scrubbing``: ``{"rules": [...], "salt": …}``)
and their compiled form for ingest.

Compiling is done once per distinct set of rules and remembered (:func:`compiled`): the ingest paths read a
project's stored rules with its app key (remembered a second, re-read after any write of this process,
:mod:`stacklens.control.remembered`), so a saved change reaches ingest at the next request of this process and
within a second in the others, and the compiled form follows the stored text. The salt that keys the ``hash``
method is made once per project and never leaves the store."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import Project
from stacklens.errors import InvalidInput, NotFound
from stacklens.scrubbing.apply import NO_RULES, ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules, spec_of

_MAX_COMPILED = 1024
_compiled: dict[str, ScrubRules] = {}
_lock = threading.Lock()


def specs_of(stored: object) -> list[RuleSpec]:
    """The rules of a stored ``scrubbing`` value (none for ``{}`` or anything unreadable)."""
    rules = stored.get("rules") if isinstance(stored, dict) else None
    if not isinstance(rules, list):
        return []
    try:
        return [spec_of(rule, index) for index, rule in enumerate(rules)]
    except InvalidInput:
        return []


def compiled(stored: object) -> ScrubRules:
    """The compiled rules of a stored ``scrubbing`` value, compiled once per distinct value."""
    if not isinstance(stored, dict) or not stored.get("rules"):
        return NO_RULES
    text = json.dumps(stored, sort_keys=True)
    found = _compiled.get(text)
    if found is not None:
        return found
    salt = stored.get("salt")
    try:
        rules = ScrubRules(
            tuple(check_rules(specs_of(stored))), bytes.fromhex(salt if isinstance(salt, str) else "")
        )
    except (InvalidInput, ValueError):
        # Stored rules were checked when saved; a rule a later version refuses is skipped rather than
        # refusing the project's events.
        rules = NO_RULES
    with _lock:
        if len(_compiled) >= _MAX_COMPILED:
            _compiled.clear()
        _compiled[text] = rules
    return rules


def project_rules(session: Session, project_id: int) -> ScrubRules:
    """The compiled rules of a project (none for a project that is gone)."""
    return compiled(session.scalar(select(Project.scrubbing).where(Project.id == project_id)))


def get_rules(project: Project) -> list[RuleSpec]:
    return specs_of(project.scrubbing)


def set_rules(
    session: Session,
    org_id: int,
    project: Project,
    specs: Sequence[RuleSpec],
    *,
    actor_user_id: int | None = None,
) -> list[RuleSpec]:
    """Check and store a project's rules: :class:`InvalidInput` names the first wrong rule's index and field,
    and nothing is stored then. Recorded in the activity log."""
    if project.org_id != org_id:
        raise NotFound("no such project in this organization")
    check_rules(specs)
    current = project.scrubbing if isinstance(project.scrubbing, dict) else {}
    salt = current.get("salt") if isinstance(current.get("salt"), str) else secrets.token_hex(16)
    project.scrubbing = {"rules": [spec.as_json() for spec in specs], "salt": salt}
    record_activity(
        session,
        org_id,
        "scrubbing.changed",
        "project",
        project.id,
        actor_user_id,
        {"project": project.slug, "rules": len(specs)},
    )
    session.flush()
    return list(specs)


def rules_for_preview(project: Project, specs: Sequence[RuleSpec] | None) -> ScrubRules:
    """The project's saved rules, or ``specs`` (checked) run with the project's salt for a preview."""
    if specs is None:
        return compiled(project.scrubbing)
    salt = project.scrubbing.get("salt") if isinstance(project.scrubbing, dict) else None
    return ScrubRules(tuple(check_rules(specs)), bytes.fromhex(salt) if isinstance(salt, str) else b"")
