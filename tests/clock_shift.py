"""Run a program's module under a wall clock moved by a given number of seconds: the test's injectable clock
for a process it starts, such as a real `stacklens serve`.

``python -m tests.clock_shift MODULE ARGS…`` with :data:`SHIFT_ENV` set runs ``python -m MODULE ARGS…``
after moving ``time.time``, ``datetime.now`` and their kin (time-machine) by those seconds; the clock then
ticks on at its normal pace. ``time.monotonic`` is left alone: timeouts and intervals keep their length.
Every thread of the process sees the moved clock; a child process it starts does not (the variable is taken
out of the environment, so no child believes it is moved).

A test that would wait for the wall clock's next minute (a cron monitor's deadline, a schedule's tick)
moves the program's clock to a few seconds before one instead (:func:`shift_to_second`), and reads the
program's time through :func:`shifted_now` with the same shift.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
from datetime import UTC, datetime, timedelta

SHIFT_ENV = "STACKLENS_TEST_CLOCK_SHIFT"


def shift_to_second(second: int, now: datetime | None = None) -> float:
    """The seconds (0 to 60) to add to the wall clock so that it reads ``second`` of a minute at ``now``."""
    now = now or datetime.now(UTC)
    target = now.replace(second=second, microsecond=0)
    if target < now:
        target += timedelta(minutes=1)
    return (target - now).total_seconds()


def shifted_now(shift: float) -> datetime:
    """The wall clock of a process started with ``shift``, read from this one."""
    return datetime.now(UTC) + timedelta(seconds=shift)


def main() -> None:
    import time_machine

    shift = float(os.environ.pop(SHIFT_ENV))
    time_machine.travel(time.time() + shift, tick=True).start()
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
