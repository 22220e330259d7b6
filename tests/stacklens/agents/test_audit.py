"""Agent calls in the audit trail: the digest of the arguments (stable, never the values), one sentence per
call, and the entries listed by `source=mcp` for their organization only."""

from __future__ import annotations

from stacklens.agents.audit import CallRecord, arguments_digest, record_call, summary
from stacklens.agents.tokens import AgentIdentity
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from stacklens.sso.audit import list_audit


def test_digest_is_stable_and_hides_the_values() -> None:
    first = arguments_digest({"project": "shop", "query": "card 4111111111111111"})
    assert first == arguments_digest({"query": "card 4111111111111111", "project": "shop"})
    assert (
        first.startswith("sha256:") and "4111" not in first and first != arguments_digest({"project": "shop"})
    )


def test_recorded_calls_are_listed_with_a_sentence(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    who = AgentIdentity(
        acme["org_id"], None, "dev@example.test", "member", frozenset({"read"}), "personal", 7, "cli"
    )
    with session_scope(settings) as session:
        record_call(session, who, "Claude Code", CallRecord("get_issue", "sha256:ab", 120, 4096, 12.34, "ok"))
        record_call(
            session,
            who,
            "Claude Code",
            CallRecord("update_issue", "sha256:cd", 0, 0, 1.0, "refused", "scope: read only"),
        )
    with session_scope(settings) as session:
        rows, _ = list_audit(session, acme["org_id"], "mcp")
        assert [r.detail["tool"] for r in rows] == ["update_issue", "get_issue"]
        assert rows[0].reason == "scope: read only" and rows[0].detail["outcome"] == "refused"
        assert (
            rows[1].summary
            == "dev@example.test via Claude Code called get_issue (120 rows, 4,096 bytes read, 12.3 ms)."
        )
        assert list_audit(session, other["org_id"], "mcp")[0] == []
    assert "refused" in summary({"tool": "x", "outcome": "refused", "reason": "scope"})
