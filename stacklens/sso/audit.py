"""The audit trail of sign-ins (`GET /api/audit?action=signin`, the owners' audit page).

Entries are the activity log's (:mod:`stacklens.control.activity`), with actions ``signin.<what>``: ``sso``
and ``password`` (a sign-in), ``break_glass`` (a password sign-in allowed while SSO is enforced), ``refused``
(with the ``reason``: ``bad_signature``, ``wrong_issuer``, ``wrong_audience``, ``expired``,
``nonce_mismatch``, ``replayed``, ``domain_not_allowed``, ``sso_enforced`` …), ``member_created`` (just in
time), ``role_changed`` / ``role_kept`` (the role following the groups) and ``tested`` (a "Test sign-in"). One
log, so the activity page shows them too; this module filters them and says each in a sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from stacklens import pagination
from stacklens.control.activity import ActivityRow, record_activity
from stacklens.control.activity_text import describe
from stacklens.control.models import ActivityEntry, User
from stacklens.errors import InvalidInput

MAX_PAGE = 200
ACTIONS = ("signin", "sso")

REASONS = {
    "bad_signature": "the ID token's signature does not verify against the provider's keys",
    "wrong_issuer": "the ID token was issued by another issuer",
    "wrong_audience": "the ID token is for another client",
    "expired": "the ID token has expired",
    "issued_in_future": "the ID token is issued in the future (clocks apart)",
    "nonce_mismatch": "the ID token's nonce is not this sign-in's",
    "replayed": "the sign-in's callback was used twice (replay)",
    "domain_not_allowed": "the e-mail's domain is not allowed",
    "email_not_verified": "the provider has not verified the e-mail",
    "no_email": "the ID token has no e-mail",
    "unknown_state": "the callback's state was not issued here",
    "sign_in_expired": "the sign-in took longer than ten minutes",
    "provider_refused": "the provider refused the sign-in",
    "provider_unreachable": "the provider could not be reached",
    "code_exchange_failed": "the provider refused the authorization code",
    "sso_enforced": "password sign-in is refused: the organization enforces single sign-on",
    "account_disabled": "the account is disabled",
    "browser_mismatch": "the callback came to another browser than the one that started the sign-in",
    "missing_claim": "the ID token lacks a claim it must have",
    "max_age": "the session reached the organization's maximum age",
    "refresh_refused": "the provider refused to refresh the session (disabled or removed there)",
}


def record(
    session: Session,
    org_id: int,
    action: str,
    *,
    target_id: int | None = None,
    actor_user_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    record_activity(
        session, org_id, action, "user" if target_id else "", target_id, actor_user_id, detail or {}
    )


@dataclass(frozen=True)
class AuditRow:
    id: int
    created_at: datetime
    action: str
    email: str
    reason: str | None
    ip: str
    detail: dict[str, Any]
    summary: str


def summary(action: str, detail: dict[str, Any]) -> str:
    """One sentence per entry (the audit page, the API's ``summary``)."""
    if action.startswith("mcp."):
        from stacklens.agents.audit import summary as call_summary

        return call_summary(detail)
    who = detail.get("email") or "someone"
    reason = detail.get("reason")
    said = REASONS.get(str(reason), str(reason or ""))
    if action == "signin.sso":
        return f"{who} signed in through single sign-on as {detail.get('role', 'member')}."
    if action == "signin.password":
        return f"{who} signed in with a password."
    if action == "signin.break_glass":
        return f"{who} signed in with a password as a break-glass account while single sign-on is enforced."
    if action == "signin.refused":
        return f"Refused a sign-in{' of ' + who if who != 'someone' else ''}: {said}."
    if action == "signin.member_created":
        return f"{who} joined through single sign-on as {detail.get('role', 'member')}."
    if action == "signin.role_changed":
        return f"{who}'s role followed their groups: {detail.get('from')} → {detail.get('to')} ({detail.get('mapped')})."
    if action == "signin.role_kept":
        return f"{who} stays {detail.get('role')}: their groups map to {detail.get('mapped')}, but they are the last owner."
    if action == "signin.tested":
        if detail.get("ok"):
            return f"Test sign-in worked: {who} would sign in as {detail.get('role')}."
        return f"Test sign-in failed: {said}."
    if action == "signin.ended":
        why = "its maximum age" if detail.get("reason") == "max_age" else "the provider refused a refresh"
        return f"{who}'s single sign-on session ended: {why}."
    if action == "sso.configured":
        return f"Saved the single sign-on settings (issuer {detail.get('issuer')}, enforced: {'yes' if detail.get('enforce') else 'no'})."
    if action == "sso.removed":
        return "Turned single sign-on off."
    if action == "sso.break_glass_named":
        return f"Named {who} a break-glass account (password sign-in while single sign-on is enforced)."
    if action == "sso.break_glass_removed":
        return f"{who} is no longer a break-glass account."
    return describe(ActivityRow(str(0), datetime.now(), action, "", None, None, detail))


def list_audit(
    session: Session, org_id: int, action: str = "signin", cursor: str | None = None, limit: int = 50
) -> tuple[list[AuditRow], str | None]:
    """One page of the organization's entries whose action is ``action`` or starts with ``action.``, newest
    first, and the next page's cursor."""
    if not isinstance(action, str) or not action or len(action) > 64:
        raise InvalidInput("action: name an action or a family of them, like signin or signin.refused")
    limit = max(1, min(int(limit), MAX_PAGE))
    query = select(ActivityEntry).where(
        ActivityEntry.org_id == org_id,
        or_(ActivityEntry.action == action, ActivityEntry.action.startswith(action + ".", autoescape=True)),
    )
    if cursor:
        (before,) = pagination.decode_cursor(cursor, int)
        query = query.where(ActivityEntry.id < before)
    entries = list(session.scalars(query.order_by(ActivityEntry.id.desc()).limit(limit + 1)))
    page = entries[:limit]
    ids = {e.actor_user_id for e in page if e.actor_user_id is not None}
    emails = dict(session.execute(select(User.id, User.email).where(User.id.in_(ids))).all()) if ids else {}
    rows = []
    for entry in page:
        detail = dict(entry.detail or {})
        email = str(detail.get("email") or emails.get(entry.actor_user_id or -1, ""))
        rows.append(
            AuditRow(
                id=entry.id,
                created_at=entry.created_at,
                action=entry.action,
                email=email,
                reason=detail.get("reason"),
                ip=str(detail.get("ip") or ""),
                detail=detail,
                summary=summary(entry.action, detail),
            )
        )
    next_cursor = pagination.encode_cursor(page[-1].id) if len(entries) > limit else None
    return rows, next_cursor
