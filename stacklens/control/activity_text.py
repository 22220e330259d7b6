"""The activity log in words: one sentence per entry, for the activity page and the API's ``summary``.

Entries keep their structured ``detail`` (the API returns it as stored); people read a sentence instead of
``next=False`` or ``expires_at=2026-11-24T23:10:46.123456+00:00``. Times are to the second, in UTC. An action
this module does not know yet still reads as words: its detail is listed as "name: value" pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from stacklens.control.activity import ActivityRow

_TRACKERS = {"github": "GitHub", "gitlab": "GitLab", "jira": "Jira", "linear": "Linear"}
_CHANNELS = {"email": "e-mail", "slack": "Slack", "webhook": "webhook"}


def when(value: Any) -> str:
    """An ISO 8601 text or a datetime as ``2026-11-24 23:10:46 UTC`` (to the second); other text unchanged."""
    if isinstance(value, str):
        text = value
        try:
            value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value)


def _count(n: Any, one: str, many: str | None = None) -> str:
    number = int(n or 0)
    return f"{number:,} {one if number == 1 else (many or one + 's')}"


def _key(detail: Mapping[str, Any]) -> str:
    last4 = detail.get("last4")
    return f" …{last4}" if last4 else ""


def _app_key(detail: Mapping[str, Any]) -> str:
    """ "the primary app key …abcd of project web" / "the frontend app key …abcd"."""
    service = detail.get("service")
    text = f"the {service or 'primary'} app key{_key(detail)}"
    project = detail.get("project")
    return f"{text} of project {project}" if project else text


def _quoted(value: Any) -> str:
    return f"“{value}”"


def _used(row: ActivityRow) -> str:
    d = row.detail
    kind = "API key" if row.target_kind == "api_key" else "app key"
    text = f"The {kind} made {_count(d.get('requests'), 'request')}"
    if d.get("events"):
        text += f" carrying {_count(d.get('events'), 'event')}"
    start = when(d["hour"]) if d.get("hour") else ""
    if start.endswith(" UTC"):  # "2026-11-24 23:00:00 UTC": the hour it counts
        text += f" in the hour from {start[11:16]} UTC on {start[:10]}"
    if d.get("last_ip"):
        text += f"; the last from {d['last_ip']}"
        if d.get("last_user_agent"):
            text += f" ({d['last_user_agent']})"
    return text + "."


def _regenerated_api_key(d: Mapping[str, Any]) -> str:
    if d.get("promoted_next"):
        return f"Regenerated the API key: the next key{_key(d)} became the current key; the previous key stopped working."
    return f"Regenerated the API key: the new key ends in …{d.get('last4', '')}; the previous key stopped working."


def _quota(d: Mapping[str, Any]) -> str:
    parts = []
    if "events_per_minute" in d:
        parts.append(_count(d["events_per_minute"], "event") + " per minute")
    if "requests_per_second" in d:
        parts.append(_count(d["requests_per_second"], "request") + " per second per API key")
    return "Set the rate limits to " + " and ".join(parts) + "." if parts else "Changed the rate limits."


def _project_quota(d: Mapping[str, Any]) -> str:
    per_minute = d.get("events_per_minute")
    total = _count(per_minute, "event") + " per minute" if per_minute else "no limit of its own"
    categories = d.get("categories") or {}
    each = ", ".join(f"{_count(v, k)} per minute" for k, v in sorted(categories.items()))
    text = f"Set the quota of project {d.get('project', '')} to {total}" + (f" ({each})" if each else "")
    kept = d.get("attachment_bytes")
    return text + (f"; attachments kept up to {int(kept):,} bytes." if kept is not None else ".")


def _rate_limited(row: ActivityRow) -> str:
    d = row.detail
    per = "events per minute" if row.target_kind == "events_per_minute" else "requests per second"
    text = f"Answered {_count(d.get('refusals', 1), 'request')} with Rate Limited (limit {int(d.get('limit', 0)):,} {per})"
    if d.get("last_retry_after_s") is not None:
        text += f"; the last was told to retry after {d['last_retry_after_s']} s"
    return text + "."


def _throttled(d: Mapping[str, Any]) -> str:
    scope = "this account" if d.get("scope") == "account" else "the address"
    ip = f" from {d['ip']}" if d.get("ip") else ""
    wait = f" for {_count(d.get('retry_after'), 'second')}" if d.get("retry_after") else ""
    return f"Too many failed sign-ins{ip}: sign-in locked for {scope}{wait}."


def _ticket_state(row: ActivityRow, state: str) -> str:
    d = row.detail
    text = f"Ticket {d.get('ticket', '')} of issue {d.get('issue_id', '')} is now {state}"
    if d.get("from"):
        text += f" (was {d['from']})"
    return text + "."


def _member_added(d: Mapping[str, Any]) -> str:
    if d.get("invitation_id"):
        return f"{d.get('email', 'Someone')} joined as {d.get('role', 'member')} by accepting an invitation."
    return f"Added {d.get('email', 'someone')} as {d.get('role', 'member')}."


_Describe = Callable[[ActivityRow], str]
SENTENCES: dict[str, _Describe] = {
    "organization.created": lambda r: f"Created the organization {_quoted(r.detail.get('name', ''))}.",
    "project.created": lambda r: f"Created the project {r.detail.get('slug', '')}.",
    "api_key.created": lambda r: f"Created the API key{_key(r.detail)}.",
    "api_key.next_created": lambda r: (
        f"Created the next API key{_key(r.detail)}; it works beside the current key until the next regeneration."
    ),
    "api_key.regenerated": lambda r: _regenerated_api_key(r.detail),
    "api_key.viewed": lambda r: (
        f"Revealed the {'next' if r.detail.get('next') else 'current'} API key{_key(r.detail)}."
    ),
    "api_key.used": _used,
    "app_key.used": _used,
    "app_key.created": lambda r: f"Created {_app_key(r.detail)}.",
    "app_key.regenerated": lambda r: (
        f"Regenerated {_app_key(r.detail)} (the new value); the previous value stopped working."
    ),
    "app_key.revoked": lambda r: f"Revoked {_app_key(r.detail)}; it no longer works.",
    "app_key.viewed": lambda r: f"Revealed {_app_key(r.detail)} and its DSN.",
    "member.added": lambda r: _member_added(r.detail),
    "member.removed": lambda r: f"Removed {r.detail.get('email') or 'a member'} from the organization.",
    "share_links.publishers_changed": lambda r: (
        "Let "
        + ("every member" if r.detail.get("to") == "members" else "only the owners")
        + " publish share links; a link stops working when its publisher no longer may."
    ),
    "member.role_changed": lambda r: (
        f"Changed the role of {r.detail.get('email', 'a member')} from {r.detail.get('from')} to {r.detail.get('to')}."
    ),
    "invitation.created": lambda r: (
        f"Invited {r.detail.get('email', '')} as {r.detail.get('role', 'member')}"
        + (f"; the link works until {when(r.detail['expires_at'])}." if r.detail.get("expires_at") else ".")
    ),
    "invitation.revoked": lambda r: f"Withdrew the invitation of {r.detail.get('email', '')}.",
    "user.password_changed": lambda r: "Changed their password; their other browsers were signed out.",
    "sign_in.throttled": lambda r: _throttled(r.detail),
    "quota.changed": lambda r: _quota(r.detail),
    "project_quota.changed": lambda r: _project_quota(r.detail),
    "quota.rate_limited": _rate_limited,
    "alert_rule.created": lambda r: (
        f"Created the alert rule {_quoted(r.detail.get('name', ''))}"
        + (f" ({str(r.detail['type']).replace('_', ' ')})." if r.detail.get("type") else ".")
    ),
    "alert_rule.updated": lambda r: f"Changed the alert rule {_quoted(r.detail.get('name', ''))}.",
    "alert_rule.deleted": lambda r: f"Deleted the alert rule {_quoted(r.detail.get('name', ''))}.",
    "alert_channel.created": lambda r: (
        f"Added the {_CHANNELS.get(str(r.detail.get('type')), r.detail.get('type', ''))} channel "
        f"{_quoted(r.detail.get('name', ''))}."
    ),
    "alert_channel.deleted": lambda r: f"Deleted the channel {_quoted(r.detail.get('name', ''))}.",
    "alert_channel.resumed": lambda r: "Resumed a paused channel: its waiting notifications are sent again.",
    "integration.created": lambda r: (
        f"Connected {_TRACKERS.get(str(r.detail.get('type')), r.detail.get('type', ''))} as "
        f"{r.detail.get('account', '')} ({_quoted(r.detail.get('name', ''))})."
    ),
    "integration.deleted": lambda r: f"Deleted the tracker connection {_quoted(r.detail.get('name', ''))}.",
    "external_link.created": lambda r: (
        f"Created ticket {r.detail.get('ticket', '')} for issue {r.detail.get('issue_id', '')}."
    ),
    "external_link.linked": lambda r: (
        f"Linked ticket {r.detail.get('ticket', '')} to issue {r.detail.get('issue_id', '')}."
    ),
    "external_link.removed": lambda r: (
        f"Unlinked ticket {r.detail.get('ticket', '')} from issue {r.detail.get('issue_id', '')}."
    ),
    "external_link.open": lambda r: _ticket_state(r, "open"),
    "external_link.closed": lambda r: _ticket_state(r, "closed"),
    "external_link.failed": lambda r: (
        f"Could not create or link a ticket with {r.detail.get('integration', 'the tracker')}"
        + (f" in {r.detail['target']}" if r.detail.get("target") else "")
        + (f" for {r.detail['reference']}" if r.detail.get("reference") else "")
        + f": {r.detail.get('error', 'no reason given')}"
    ),
    "external_link.sync_failed": lambda r: (
        f"Could not read the state of ticket {r.detail.get('ticket', '')}: {r.detail.get('error', '')}"
    ),
    "issue.assigned": lambda r: (
        f"Assigned issue {r.detail['issue_id']} to {r.detail.get('assignee', '')}"
        + (f" (matched {r.detail['rule']})." if r.detail.get("rule") else ".")
    ),
    "issue.unassigned": lambda r: (
        f"Unassigned issue {r.detail['issue_id']} (it was assigned to {r.detail.get('assignee', '')})."
    ),
    "issue.status_changed": lambda r: (
        f"Set issue {r.detail['issue_id']} to {str(r.detail.get('status', '')).replace('_', ' ')}."
    ),
    "issue.commented": lambda r: (
        f"Commented on issue {r.detail['issue_id']}"
        + (f", mentioning {', '.join(r.detail['mentions'])}." if r.detail.get("mentions") else ".")
    ),
    "issue.comment_edited": lambda r: f"Edited a comment on issue {r.detail['issue_id']}.",
    "issue.comment_deleted": lambda r: f"Deleted a comment on issue {r.detail['issue_id']}.",
    "issue.merged": lambda r: (
        f"Merged issue {', '.join(str(i) for i in r.detail.get('merged') or [])} into issue {r.detail['issue_id']}."
    ),
    "issue.merged_into": lambda r: (
        f"Issue {r.detail['issue_id']} was merged into issue {r.detail.get('into', '')}."
    ),
    "issue.split": lambda r: (
        f"Split issue {r.detail['issue_id']} back out of issue {r.detail['from']}."
        if r.detail.get("from")
        else f"Split issue {', '.join(str(i) for i in r.detail.get('issues') or [])} out of issue "
        f"{r.detail['issue_id']}."
    ),
    "team.created": lambda r: f"Created the team #{r.detail.get('slug', '')}.",
    "team.members_changed": lambda r: (
        f"Set the members of #{r.detail.get('slug', '')}: {', '.join(r.detail.get('members') or []) or 'nobody'}."
    ),
    "ownership.changed": lambda r: f"Changed the ownership rules of project {r.detail.get('project', '')}.",
}


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list | tuple):
        return ", ".join(_value(item) for item in value)
    return when(value)


def _fallback(row: ActivityRow) -> str:
    """Any other action: its name and its detail as words ("Alert rule muted: name: Slow LCP; until: …")."""
    subject, _, verb = row.action.partition(".")
    head = f"{subject.replace('_', ' ').capitalize()} {verb.replace('_', ' ')}".strip()
    pairs = [
        f"{key.replace('_', ' ')}: {_value(value)}"
        for key, value in row.detail.items()
        if value is not None and value != "" and value != {} and value != []
    ]
    return f"{head}: {'; '.join(pairs)}." if pairs else f"{head}."


def describe(row: ActivityRow) -> str:
    """The entry as one plain sentence."""
    sentence = SENTENCES.get(row.action)
    if sentence is None:
        return _fallback(row)
    try:
        return sentence(row)
    except (TypeError, ValueError, KeyError):  # a detail written by an older version: still say something
        return _fallback(row)
