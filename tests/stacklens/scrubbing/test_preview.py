"""The fields a preview lists: leaves that differ, header pairs by name, a removed field as None."""

from __future__ import annotations

from stacklens.scrubbing.preview import Change, changes_between


def test_changes_name_each_leaf_that_differs() -> None:
    before = {
        "user": {"email": "a@b.co", "id": "7"},
        "request": {"headers": [["Authorization", "Bearer x"], ["Accept", "*/*"]]},
        "tags": [["plan", "pro"]],
        "extra": {"keep": 1},
    }
    after = {
        "user": {"id": "7"},
        "request": {"headers": [["Authorization", "******"], ["Accept", "*/*"]]},
        "tags": [["plan", "pro"]],
        "extra": before["extra"],
    }
    assert changes_between(before, after) == [
        Change("user.email", "a@b.co", None),
        Change("request.headers.Authorization", "Bearer x", "******"),
    ]
