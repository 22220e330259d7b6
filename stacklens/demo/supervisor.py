"""Run several child processes as one: start in order, log each to its own file, stop all on Ctrl-C.

Children get SIGTERM first (the shipper flushes and commits its tracker on it), then SIGKILL after a grace
period. If one child dies, the supervisor says so, with the tail of its log, and stops the rest, so a
newcomer never sits in front of a half-running demo.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

GRACE_SECONDS = 15.0


@dataclass
class Child:
    name: str
    argv: Sequence[str]
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it for its lifetime
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        # A new session, so Ctrl-C in the terminal reaches only the supervisor, which stops children in order.
        self.process = subprocess.Popen(
            list(self.argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )
        log.close()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Supervisor:
    def __init__(self, say: Callable[[str], None] = print) -> None:
        self.children: list[Child] = []
        self.say = say
        self._stopping = False

    def start(self, child: Child) -> Child:
        child.start()
        self.children.append(child)
        self.say(f"  started {child.name:<9} log: {child.log_path}")
        return child

    def stop(self) -> None:
        """SIGTERM every child (last started first), wait for the grace period, then SIGKILL stragglers."""
        if self._stopping:
            return
        self._stopping = True
        for child in reversed(self.children):
            if child.running():
                assert child.process is not None
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        for child in reversed(self.children):
            if child.process is None:
                continue
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
                self.say(f"  {child.name} did not stop within {GRACE_SECONDS:.0f}s and was killed")

    def wait(self) -> int:
        """Block until Ctrl-C / SIGTERM (exit 0) or a child dies (exit 1); stop everything either way."""
        stop_requested = False

        def _request_stop(_signum: int, _frame: object) -> None:
            nonlocal stop_requested
            stop_requested = True

        previous = signal.signal(signal.SIGTERM, _request_stop)
        try:
            while not stop_requested:
                for child in self.children:
                    if not child.running():
                        code = child.process.returncode if child.process else None
                        self.say(f"\n{child.name} exited with status {code}; last lines of {child.log_path}:")
                        self.say(child.tail())
                        self.say("stopping the others...")
                        self.stop()
                        return 1
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        self.say("\nstopping...")
        self.stop()
        self.say("all stopped.")
        return 0


def python_module(module: str, *args: str) -> list[str]:
    """argv running ``module`` with this interpreter (the project's virtual environment)."""
    return [sys.executable, "-m", module, *args]
