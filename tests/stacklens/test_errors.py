"""The domain's error kinds: each adapter maps a kind once, so the kinds must stay apart."""

from __future__ import annotations

import pytest

from stacklens import errors


def test_every_kind_is_a_stacklens_error() -> None:
    kinds = [
        errors.InvalidInput,
        errors.NotFound,
        errors.Conflict,
        errors.Forbidden,
        errors.Gone,
        errors.Unavailable,
        errors.ApplicationNotFound,
        errors.TooLarge,
        errors.UnsupportedEncoding,
    ]
    assert all(issubclass(kind, errors.StackLensError) for kind in kinds)


@pytest.mark.parametrize(
    ("kind", "is_a", "is_not"),
    [
        (errors.ApplicationNotFound, errors.NotFound, errors.InvalidInput),
        (errors.TooLarge, errors.InvalidInput, errors.NotFound),
        (errors.UnsupportedEncoding, errors.InvalidInput, errors.Conflict),
        (errors.Conflict, errors.StackLensError, errors.InvalidInput),
        (errors.Gone, errors.StackLensError, errors.NotFound),
    ],
)
def test_kinds_that_share_an_answer_and_kinds_that_do_not(kind: type, is_a: type, is_not: type) -> None:
    assert issubclass(kind, is_a) and not issubclass(kind, is_not)


def test_builtin_bases_keep_plain_python_callers_working() -> None:
    # Code that catches ValueError / LookupError (argument parsing, dict-like lookups) still catches these.
    with pytest.raises(ValueError, match="range: 1y"):
        raise errors.InvalidInput("range: 1y is not one of 24h, 7d, 30d")
    with pytest.raises(LookupError):
        raise errors.NotFound("issue: no issue 7")
