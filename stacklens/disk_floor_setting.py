"""The value of ``STACKLENS_DISK_FLOOR``: bytes (``1073741824``, ``500MiB``, ``2GB``) or a share of the
volume (``5%``); unset, the smaller of 1 GiB and 5 %.

Apart from :mod:`stacklens.disk_floor` (which reads the volume and refuses) so that the settings can check the
value when they are loaded without importing what depends on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GIB = 1024**3
DEFAULT_FLOOR_BYTES = GIB
DEFAULT_FLOOR_PERCENT = 5.0

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([a-z]*)$")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")


@dataclass(frozen=True)
class DiskFloor:
    """A floor of ``fixed`` bytes, or ``percent`` of the volume; neither: the default (the smaller of
    both)."""

    fixed: int | None = None
    percent: float | None = None

    def bytes_for(self, total: int) -> int:
        """The floor in bytes on a volume of ``total`` bytes."""
        if self.fixed is not None:
            return self.fixed
        if self.percent is not None:
            return int(total * self.percent / 100)
        return min(DEFAULT_FLOOR_BYTES, int(total * DEFAULT_FLOOR_PERCENT / 100))

    def words(self) -> str:
        if self.fixed is not None:
            return format_bytes(self.fixed)
        if self.percent is not None:
            return f"{self.percent:g} % of the volume"
        return "the smaller of 1 GiB and 5 % of the volume"


def parse_floor(value: str | None) -> DiskFloor:
    """``STACKLENS_DISK_FLOOR`` read: bytes, a size with a unit, or a percentage; empty or unset: the default.
    Raises ``ValueError`` with the accepted forms named."""
    text = (value or "").strip().lower()
    if not text:
        return DiskFloor()
    percent = _PERCENT.match(text)
    if percent:
        share = float(percent.group(1))
        if not 0 <= share < 100:
            raise ValueError(
                f"STACKLENS_DISK_FLOOR {value!r}: a percentage of the volume is from 0% to under 100%"
            )
        return DiskFloor(percent=share)
    size = _SIZE.match(text)
    if size and size.group(2) in _UNITS:
        return DiskFloor(fixed=int(float(size.group(1)) * _UNITS[size.group(2)]))
    raise ValueError(
        f"STACKLENS_DISK_FLOOR {value!r} is not a size: give bytes (1073741824), a size with a unit (500MiB, "
        "2GB) or a percentage of the data directory's volume (5%)"
    )


def format_bytes(n: float) -> str:
    """Binary units, as the metric catalog writes bytes (KiB is not "KB")."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"  # pragma: no cover - the loop returns
