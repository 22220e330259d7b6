"""`status --storage` lines: binary units, the largest tables first with the rest counted, days until full."""

from __future__ import annotations

from stacklens.operations.storage_lines import MAX_TABLES, days_until_full_text, storage_lines


def test_lines_use_binary_units_and_say_what_is_left_out() -> None:
    report = {
        "tables": [
            {"table": f"t{n}", "rows": 1000 * n, "bytes_on_disk": 2048 * n, "parts": 1}
            for n in range(20, 0, -1)
        ],
        "projects": [{"name": "acme/shop", "rows": 1234, "bytes_estimated": 5 * 1024**2, "oldest": None}],
        "oldest_event": "2026-10-01T00:00:00+00:00",
        "warehouse_bytes": 3 * 1024**3,
        "disk_path": "/var/lib/stacklens/warehouse/",
        "free_bytes": 10 * 1024**3,
        "total_bytes": 100 * 1024**3,
        "bytes_per_day": 512 * 1024**2,
        "days_until_full": 20.0,
    }
    text = "\n".join(storage_lines(report))
    assert "warehouse: 3.0 GiB on disk in table parts (the tables below)" in text
    assert "its directory" not in text  # a ClickHouse server's directory is not measured
    assert "10.0 GiB free of 100.0 GiB" in text
    assert "growth: 512.0 MiB per day; full in 20.0 days at the last 7 days' rate" in text
    assert "acme/shop" in text and "5.0 MiB" in text and "1,234" in text
    assert f"… and {20 - MAX_TABLES} smaller tables" in text and "t1 " not in text
    assert days_until_full_text(None) == "no growth measured in the last 7 days"
    assert days_until_full_text(9999) == "more than 10 years at the last 7 days' rate"


def test_an_embedded_warehouse_names_its_directory_beside_its_parts() -> None:
    report = {
        "tables": [],
        "projects": [],
        "oldest_event": None,
        "warehouse_bytes": 26 * 1024**2,
        "directory_bytes": 40 * 1024**2,
        "disk_path": "/data/warehouse/",
        "free_bytes": 1024**3,
        "total_bytes": 2 * 1024**3,
        "bytes_per_day": 0,
        "days_until_full": None,
    }
    first = storage_lines(report)[0]
    assert first.startswith(
        "warehouse: 26.0 MiB on disk in table parts (the tables below); its directory holds"
    )
    assert "40.0 MiB" in first and "system logs" in first
