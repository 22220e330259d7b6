"""`make test`'s last two gates at once: mypy beside the suite, the suite stopped as soon as mypy fails.

Run one after the other, mypy's ~22 s on a fresh clone (no cache yet) left the second core idle: the suite
is CPU-bound on both. Side by side, mypy takes that core while the suite's workers start, and a type error
still fails `make test` within mypy's time, with its report and nothing of the suite after it.

``python -m tests.typed_suite PYTEST_ARGS...`` — mypy with no arguments (the files and options in
pyproject's ``[tool.mypy]``) and ``python -m pytest PYTEST_ARGS...``; exits with mypy's status when it
fails, else with the suite's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

# How long the suite has to stop after mypy failed (or Ctrl-C), before its processes are killed.
STOP_SECONDS = 30.0


TYPE_CHECK = [sys.executable, "-m", "mypy"]
SUITE = [sys.executable, "-m", "pytest"]


def main(pytest_args: list[str], type_check: list[str] = TYPE_CHECK, suite_command: list[str] = SUITE) -> int:
    with tempfile.TemporaryFile() as typed_out:
        typed = subprocess.Popen(type_check, stdout=typed_out, stderr=subprocess.STDOUT)
        # A session of its own: Ctrl-C in the terminal reaches this process, which passes it on once; and
        # should the suite not stop, its whole session (workers, the servers they started) is killed.
        suite = subprocess.Popen(
            [*suite_command, *pytest_args], start_new_session=True, preexec_fn=_interruptible
        )
        try:
            typed_status = typed.wait()
            typed_out.seek(0)
            sys.stdout.write(typed_out.read().decode(errors="replace"))
            sys.stdout.flush()
            if typed_status != 0:
                print(f"mypy failed (exit {typed_status}): the suite is stopped", flush=True)
                _stop(suite)
                return typed_status
            return suite.wait()
        except KeyboardInterrupt:
            # Ctrl-C reaches this process's group only: the suite runs in a session of its own.
            _stop(suite)
            typed.kill()
            return 130


def _interruptible() -> None:
    """In the suite's process before it starts: Ctrl-C's signal handled as Python's default (a process that
    runs this one, such as a test worker, may ignore it, and the suite would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop(suite: subprocess.Popen[bytes]) -> None:
    """Interrupt the suite as Ctrl-C does (pytest stops its workers, which end their fixtures), and kill its
    session's processes if it has not ended within :data:`STOP_SECONDS`."""
    try:
        os.kill(suite.pid, signal.SIGINT)
        suite.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(suite.pid, signal.SIGKILL)
        suite.wait()
    except ProcessLookupError:
        pass  # it had ended


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
