"""The shipper's own memory figure, logged when it stops (bench/RESULTS.md compares it across runs)."""

from __future__ import annotations

import resource


def peak_rss_mib() -> float:
    """This program's own peak RSS.

    ``getrusage(RUSAGE_SELF).ru_maxrss`` is no good here: Linux carries it across fork and exec, so a
    shipper started by a large parent (a supervisor that imported the whole server) would report the
    parent's peak. ``VmHWM`` belongs to this process's own address space.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
