"""The shipper's own peak memory: this process's high-water mark, which grows with what it touches."""

from __future__ import annotations

import subprocess
import sys

from shipper.memory import peak_rss_mib

# A fresh interpreter (small), which then writes 64 MiB: every page of it is resident at once.
GROW = """
from shipper.memory import peak_rss_mib
before = peak_rss_mib()
block = b"x" * (64 * 1024 * 1024)
print(before, peak_rss_mib())
"""


def test_the_peak_is_this_process_and_grows_with_what_it_touches() -> None:
    assert peak_rss_mib() > 1
    result = subprocess.run(
        [sys.executable, "-c", GROW], capture_output=True, text=True, check=True, timeout=60
    )
    before, after = (float(v) for v in result.stdout.split())
    # Not the parent's peak (this test process is far larger than a fresh interpreter)...
    assert before < 60, before
    # ...and the block shows in it.
    assert after - before > 60, (before, after)
