"""The control store's errors are kinds of the domain's: an adapter maps them without knowing the topic."""

from __future__ import annotations

from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.errors import InvalidInput, NotFound


def test_an_account_error_is_bad_input_and_a_missing_record_is_also_not_found() -> None:
    assert isinstance(AccountError("email: already a member"), InvalidInput)
    missing = AccountNotFound("project: no project 'shop'")
    assert isinstance(missing, NotFound) and isinstance(missing, AccountError)
    assert str(missing) == "project: no project 'shop'"
    assert not isinstance(AccountError("x"), NotFound)
