"""What preparing yields (stacklens/ingest/prepared_rows.py): a later part of a batch appended to the first, a
row encoded with its table's columns, and the line a `sessions` row came from."""

from __future__ import annotations

import orjson

from stacklens.ingest.prepared_rows import Attribution, Prepared, encode_row, line_of


def test_a_later_part_of_a_batch_is_appended_to_the_first() -> None:
    first, later = Prepared(lines=2, stored=1, body_hash="abc"), Prepared(lines=3, skipped=1)
    later.tables["events"].append((1, 2, "e1", b"{}", [], "2026-11", []))
    later.columns["events"] = ["project_id"]
    later.rejected.append({"line": 4, "error": "bad"})
    first.merge(later)
    assert (first.lines, first.stored, first.skipped, first.body_hash) == (5, 1, 1, "abc")
    assert [row[2] for row in first.tables["events"]] == ["e1"] and first.columns == {
        "events": ["project_id"]
    }
    assert first.rejected == [{"line": 4, "error": "bad"}]


def test_a_row_is_encoded_with_its_tables_columns_and_partitions() -> None:
    prepared = Prepared()
    who = Attribution(project_id=2, service=None, app_key_id=1)
    row = {"project_id": 2, "event_id": "e1", "timestamp": "2026-11-02 10:00:00"}
    child = {"span_id": "s1", "timestamp": "2026-10-31 23:59:59"}
    ready = encode_row(who, "transactions", row, [child], prepared)
    assert ready == (1, 2, "e1", orjson.dumps(row), [orjson.dumps(child)], "2026-11", ["2026-10"])
    assert prepared.columns == {"transactions": list(row), "spans": list(child)}
    assert encode_row(who, "replays", row, [], prepared, key="r1:0")[2] == "r1:0"


def test_a_session_rows_line_is_its_key_up_to_the_bucket_and_status() -> None:
    assert line_of("7f3a:2026-11-02T10:00:00Z:exited") == "7f3a" and line_of("7f3a") == "7f3a"
