"""Comments removed from SQL text, quotes respected."""

from __future__ import annotations

from stacklens.warehouse.sql_text import without_comments


def test_line_and_block_comments_and_blank_lines_go() -> None:
    sql = "-- the issues; newest first\nSELECT id, -- the issue\n  /* a; b */ title\n\nFROM issues   \n"
    assert without_comments(sql) == "SELECT id,\n    title\nFROM issues"


def test_comment_markers_inside_quotes_are_text() -> None:
    sql = "SELECT '--not', \"a/*b\", `c--d`, 'it''s -- x', 'back\\'slash -- y' -- gone"
    assert without_comments(sql) == "SELECT '--not', \"a/*b\", `c--d`, 'it''s -- x', 'back\\'slash -- y'"


def test_an_unclosed_comment_or_quote_ends_the_text() -> None:
    assert without_comments("SELECT 1 /* open") == "SELECT 1"
    assert without_comments("SELECT 'open -- x") == "SELECT 'open -- x"
