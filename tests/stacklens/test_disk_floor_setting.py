"""How STACKLENS_DISK_FLOOR reads: bytes, sizes with units, percentages, the default, and refusals that name
the accepted forms."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stacklens.disk_floor_setting import GIB, DiskFloor, format_bytes, parse_floor
from stacklens.settings import Settings

MIB = 1024**2


@pytest.mark.parametrize(
    ("value", "floor"),
    [
        (None, DiskFloor()),
        ("", DiskFloor()),
        ("1073741824", DiskFloor(fixed=GIB)),
        ("500MiB", DiskFloor(fixed=500 * MIB)),
        ("2 GB", DiskFloor(fixed=2_000_000_000)),
        ("5%", DiskFloor(percent=5.0)),
        ("0.5 %", DiskFloor(percent=0.5)),
    ],
)
def test_the_floor_reads_bytes_units_and_percentages(value: str | None, floor: DiskFloor) -> None:
    assert parse_floor(value) == floor


def test_the_default_is_the_smaller_of_1_gib_and_5_percent() -> None:
    assert DiskFloor().bytes_for(1000 * GIB) == GIB
    assert DiskFloor().bytes_for(10 * GIB) == GIB // 2
    assert DiskFloor(percent=10).bytes_for(8 * MIB) == int(0.8 * MIB)


@pytest.mark.parametrize("value", ["lots", "5 potatoes", "150%", "-1", "1.5.2G"])
def test_a_bad_floor_is_refused_with_the_forms_named(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValidationError, match="STACKLENS_DISK_FLOOR") as caught:
        Settings(data_dir=tmp_path, disk_floor=value)
    assert "500MiB" in str(caught.value) or "percentage" in str(caught.value)


def test_bytes_are_written_in_binary_units() -> None:
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(GIB) == "1.0 GiB"
    assert DiskFloor(fixed=500 * MIB).words() == "500.0 MiB"
    assert DiskFloor(percent=5).words() == "5 % of the volume"
