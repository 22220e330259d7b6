"""What each rule type finds: checked cards, IBANs and IPs (not any digit run), e-mails, bearer tokens, values
under secret-like keys, and a tenant's RE2 pattern, which runs in linear time or is refused."""

from __future__ import annotations

import time

import pytest

from stacklens.scrubbing.patterns import BadPattern, compile_pattern, finder


def _found(kind: str, text: str, key: str | None = None, pattern: str | None = None) -> list[str]:
    return [text[a:b] for a, b in finder(kind, pattern)(text, key)]


def test_built_in_types_find_what_they_name_and_only_that() -> None:
    assert _found("credit_card", "paid with 4111 1111 1111 1111 today") == ["4111 1111 1111 1111"]
    assert _found("credit_card", "order 4111111111111112 (not Luhn)") == []
    assert _found("email", "from jane.doe+shop@example.co.uk, cc x@y") == ["jane.doe+shop@example.co.uk"]
    assert _found("ip", "client 10.0.0.7 via ::1 and 2001:db8::2, version 1.2.3") == [
        "10.0.0.7",
        "::1",
        "2001:db8::2",
    ]
    assert _found("ip", "999.1.1.1") == []
    assert _found("iban", "pay DE89 3704 0044 0532 0130 00 now") == ["DE89 3704 0044 0532 0130 00"]
    assert _found("iban", "DE00370400440532013000") == []  # wrong check digits
    assert _found("bearer", "Authorization: Bearer eyJhbGci.abc-123_x=") == ["Bearer eyJhbGci.abc-123_x="]
    assert _found("password", "hunter2", key="user_password") == ["hunter2"]
    assert _found("password", "hunter2", key="username") == []


def test_a_pattern_with_groups_replaces_only_the_groups() -> None:
    assert _found("pattern", "id cust_123 and cust_45", pattern=r"cust_(\d+)") == ["123", "45"]
    assert _found("pattern", "id cust_123", pattern=r"cust_\d+") == ["cust_123"]


def test_a_pattern_cannot_stall_ingest_and_a_bad_one_is_refused() -> None:
    evil = finder("pattern", r"(a+)+$")  # catastrophic for a backtracking engine
    started = time.perf_counter()
    assert evil("a" * 100_000 + "b", None) == []
    assert time.perf_counter() - started < 0.5
    with pytest.raises(BadPattern, match="RE2"):
        compile_pattern(r"(?<=x)y")
    with pytest.raises(BadPattern, match="missing"):
        compile_pattern("(a")
    with pytest.raises(BadPattern, match="needs a pattern"):
        compile_pattern("")
