"""The delivery loop's wake-up is set from signal handlers (SIGTERM, SIGINT, SIGHUP) while the loop waits on
it and clears it: a signal landing at any point of a wait or a clear must not hang the shipper."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from shipper.wake import Wake
from tests.shipper.harness import ROOT

# A process of its own: SIGALRM every 3 ms sets the wake-up while the main thread waits and clears it as
# the loop does. A watchdog thread ends the process with status 3 when the loop stops moving for two
# seconds (how a threading.Event hangs here, after a few hundred rounds; a busy host never stalls the loop
# that long).
SIGNALLED_LOOP = textwrap.dedent(
    """
    import os, signal, threading, time
    from shipper.wake import Wake

    wake = Wake()
    rounds = woken = 0

    def on_alarm(_signum, _frame):
        wake.set()

    def watchdog():
        last = -1
        while True:
            time.sleep(2.0)
            if rounds == last:
                print(f"hung after {rounds} rounds", flush=True)
                os._exit(3)
            last = rounds

    threading.Thread(target=watchdog, daemon=True).start()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.003, 0.003)
    end = time.monotonic() + 3.0
    while time.monotonic() < end:
        woken += wake.wait(0.0005)
        wake.clear()
        rounds += 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"{rounds} {woken}", flush=True)
    """
)


def test_signals_landing_during_waits_and_clears_never_hang_the_loop() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SIGNALLED_LOOP], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    rounds, woken = map(int, ran.stdout.split())
    # ~1,000 signals in 3 s: the loop woke for them, and went round between them too.
    assert woken >= 100 and rounds > woken, ran.stdout


def test_a_set_before_the_wait_wakes_it_at_once_until_cleared() -> None:
    wake = Wake()
    assert wake.wait(0.05) is False
    wake.set()
    wake.set()
    started = time.monotonic()
    assert wake.wait(10.0) is True and wake.wait(10.0) is True  # still set: nothing cleared it
    assert time.monotonic() - started < 1.0
    wake.clear()
    assert wake.wait(0.05) is False


def test_many_sets_without_a_wait_neither_block_nor_fail() -> None:
    wake = Wake()
    for _ in range(200_000):  # more than a pipe holds: the sets past it are already waiting
        wake.set()
    assert wake.wait(0) is True
    wake.clear()
    assert wake.wait(0) is False


def test_a_wake_whose_pipe_is_numbered_past_1023_still_waits_and_wakes() -> None:
    """A process with many open files (a test worker, an agent beside a busy application) gets pipes numbered
    past select()'s 1,023 limit; the wait must not refuse them."""
    import os

    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        wake = Wake()
        assert wake.wait(0.01) is False
        wake.set()
        assert wake.wait(1.0) is True
    finally:
        for fd in held:
            os.close(fd)
