"""Comments on an issue: written in markdown, shown rendered safely (stacklens.issues.comment_markdown),
edited and deleted only by their author; ``@handle`` mentions name members of the organization.

Every query is scoped by ``org_id`` and ``project_id``; the caller has checked that the issue exists in that
project. Adding, editing and deleting a comment each write a line to the organization's activity log.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import IssueComment, Membership, User, utcnow
from stacklens.errors import Forbidden, InvalidInput, NotFound
from stacklens.issues.comment_markdown import mention_handles, mentioned, render
from stacklens.issues.notifications import Notifier, notify, people_of_issue

MAX_BODY = 10_000


@dataclass(frozen=True)
class CommentRow:
    id: int
    issue_id: int
    author: str  # e-mail or api:<key id>
    body: str  # the markdown as written
    html: str  # rendered, safe as it is
    created_at: datetime
    edited_at: datetime | None
    mentions: tuple[str, ...]  # e-mails of the members it mentions


def member_handles(session: Session, org_id: int) -> tuple[dict[str, int], dict[int, str]]:
    """(handle → user id, user id → e-mail) of the organization's members."""
    rows = session.execute(
        select(User.id, User.email, User.name)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id)
    ).all()
    return mention_handles([(int(i), str(e), str(n or "")) for i, e, n in rows]), {
        int(i): str(e) for i, e, _ in rows
    }


def _check_body(body: str) -> str:
    text = (body or "").strip()
    if not text:
        raise InvalidInput("body: write something (markdown)")
    if len(text) > MAX_BODY:
        raise InvalidInput(f"body: at most {MAX_BODY:,} characters")
    return text


def _row(comment: IssueComment, handles: dict[str, int], emails: dict[int, str]) -> CommentRow:
    return CommentRow(
        id=comment.id,
        issue_id=int(comment.issue_id),
        author=comment.author,
        body=comment.body,
        html=render(comment.body, handles),
        created_at=comment.created_at,
        edited_at=comment.edited_at,
        mentions=tuple(emails[i] for i in mentioned(comment.body, handles)),
    )


def list_comments(session: Session, org_id: int, project_id: int, issue_id: int) -> list[CommentRow]:
    """The issue's comments, oldest first."""
    comments = session.scalars(
        select(IssueComment)
        .where(
            IssueComment.org_id == org_id,
            IssueComment.project_id == project_id,
            IssueComment.issue_id == issue_id,
        )
        .order_by(IssueComment.created_at, IssueComment.id)
    ).all()
    handles, emails = member_handles(session, org_id)
    return [_row(c, handles, emails) for c in comments]


def add_comment(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    body: str,
    *,
    author: str,
    author_user_id: int | None,
    notifier: Notifier | None = None,
) -> CommentRow:
    """Store a comment by ``author`` (e-mail or ``api:<key id>``). With a ``notifier``, the members it
    mentions are told (``mentions``), then the issue's assignee and watchers (``comments``), each once."""
    text = _check_body(body)
    comment = IssueComment(
        org_id=org_id,
        project_id=project_id,
        issue_id=issue_id,
        author_user_id=author_user_id,
        author=author,
        body=text,
        created_at=utcnow(),
    )
    session.add(comment)
    session.flush()
    handles, emails = member_handles(session, org_id)
    row = _row(comment, handles, emails)
    record_activity(
        session,
        org_id,
        "issue.commented",
        "issue_comment",
        comment.id,
        author_user_id,
        {
            "issue_id": str(issue_id),
            "project_id": project_id,
            "actor": author,
            "mentions": list(row.mentions),
        },
    )
    mentioned_ids = set(mentioned(text, handles))
    excerpt = text if len(text) <= 2000 else text[:2000] + "…"
    notify(
        session,
        notifier,
        org_id,
        project_id,
        issue_id,
        "mentions",
        mentioned_ids,
        headline=f"{author} mentioned you",
        text=f"{author} mentioned you in a comment:\n\n{excerpt}",
        actor_user_id=author_user_id,
    )
    notify(
        session,
        notifier,
        org_id,
        project_id,
        issue_id,
        "comments",
        people_of_issue(session, org_id, project_id, issue_id) - mentioned_ids,
        headline=f"New comment by {author}",
        text=f"{author} commented:\n\n{excerpt}",
        actor_user_id=author_user_id,
    )
    return row


def _own(
    session: Session, org_id: int, project_id: int, issue_id: int, comment_id: int, author: str
) -> IssueComment:
    comment = session.scalar(
        select(IssueComment).where(
            IssueComment.id == comment_id,
            IssueComment.org_id == org_id,
            IssueComment.project_id == project_id,
            IssueComment.issue_id == issue_id,
        )
    )
    if comment is None:
        raise NotFound("no such comment on this issue")
    if comment.author != author:
        raise Forbidden("only its author can change or delete a comment")
    return comment


def edit_comment(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    comment_id: int,
    body: str,
    *,
    author: str,
    notifier: Notifier | None = None,
) -> CommentRow:
    """Change the text of the author's own comment. With a ``notifier``, members the edit mentions for the
    first time are told (``mentions``); those the comment mentioned before were told already."""
    comment = _own(session, org_id, project_id, issue_id, comment_id, author)
    handles, emails = member_handles(session, org_id)
    before = set(mentioned(comment.body, handles))
    comment.body = _check_body(body)
    comment.edited_at = utcnow()
    session.flush()
    record_activity(
        session,
        org_id,
        "issue.comment_edited",
        "issue_comment",
        comment.id,
        comment.author_user_id,
        {"issue_id": str(issue_id), "project_id": project_id, "actor": author},
    )
    text = comment.body
    excerpt = text if len(text) <= 2000 else text[:2000] + "…"
    notify(
        session,
        notifier,
        org_id,
        project_id,
        issue_id,
        "mentions",
        set(mentioned(text, handles)) - before,
        headline=f"{author} mentioned you",
        text=f"{author} mentioned you in a comment:\n\n{excerpt}",
        actor_user_id=comment.author_user_id,
    )
    return _row(comment, handles, emails)


def delete_comment(
    session: Session, org_id: int, project_id: int, issue_id: int, comment_id: int, *, author: str
) -> None:
    comment = _own(session, org_id, project_id, issue_id, comment_id, author)
    user_id = comment.author_user_id
    session.delete(comment)
    record_activity(
        session,
        org_id,
        "issue.comment_deleted",
        "issue_comment",
        comment_id,
        user_id,
        {"issue_id": str(issue_id), "project_id": project_id, "actor": author},
    )
    session.flush()
