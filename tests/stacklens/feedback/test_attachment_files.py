"""Attachments as files: written whole (0600), kept once per event, within the project's quota, read back only
for their organization, and deleted with their rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.db import session_scope
from stacklens.feedback.attachment_files import (
    AttachmentIn,
    attachment,
    attachments_of_event,
    delete_attachments_before,
    file_of,
    fitting,
    read_attachment,
    store_attachments,
)

EVENT = "e" * 32


def test_store_read_quota_and_delete(org: dict[str, Any]) -> None:
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    log = AttachmentIn("../../etc/app.log", "text/plain", "event.attachment", b"line\n" * 4)
    dump = AttachmentIn("crash.dmp", "application/octet-stream", "event.minidump", b"MDMP")
    with session_scope(settings) as session:
        new = store_attachments(settings, session, org_id, project_id, EVENT, [log, dump])
        assert [(r.filename, r.size) for r in new] == [("app.log", 20), ("crash.dmp", 4)]
        assert store_attachments(settings, session, org_id, project_id, EVENT, [log]) == []  # kept once
        path = file_of(settings, org_id, project_id, new[0].id)
        assert path.read_bytes() == b"line\n" * 4 and path.stat().st_mode & 0o777 == 0o600
        listed = attachments_of_event(session, org_id, project_id, EVENT)
        assert {r.filename for r in listed} == {"app.log", "crash.dmp"}
        found = attachment(session, org_id, [project_id], EVENT, new[1].id)
        assert found is not None and read_attachment(settings, org_id, found) == b"MDMP"
        assert attachment(session, org_id + 1, [project_id], EVENT, new[1].id) is None  # another organization
        assert attachment(session, org_id, [project_id], "f" * 32, new[1].id) is None  # another event
        assert attachment(session, org_id, [project_id], EVENT, "../x") is None
        # 24 bytes are kept: a quota of 30 has room for one more of 6 bytes, not for a second.
        six = AttachmentIn("six", "", "", b"123456")
        kept, over = fitting(session, project_id, [six, six], 30)
        assert (len(kept), over) == (1, 1)
        later = datetime.now(UTC) + timedelta(days=1)
        assert delete_attachments_before(settings, session, project_id, later) == 2
        assert not path.exists() and attachments_of_event(session, org_id, project_id, EVENT) == []
