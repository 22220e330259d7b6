"""Run several child processes as one (`stacklens up`): start in order, log each to its own file, stop all
together.

Children get SIGTERM first (the shipper flushes and commits its tracker on it), then SIGKILL after a grace
period. If one child dies, the supervisor says so, with the tail of its log, and stops the rest, so a
newcomer never sits in front of a half-running demo.

The supervisor owns its stop signals: SIGINT, SIGTERM and SIGHUP all stop everything, whatever disposition
the launcher inherited (a shell script or process manager may start it with SIGINT ignored, and closing a
terminal sends SIGHUP). Each child runs in a session of its own (Ctrl-C in the terminal reaches only the
supervisor, which stops the children in order) and, on Linux, asks the kernel to send it SIGTERM when the
supervisor dies, so even `kill -9` of the launcher leaves nothing behind. Where that is not available (or a
child ignored it), the run file names every process, and the next run stops what an earlier one left.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from stacklens.errors import Conflict

GRACE_SECONDS = 15.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class StopRequested(Exception):
    """A stop signal arrived; raised in the supervisor's main thread wherever it was waiting."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class AlreadyRunning(Conflict):
    """Another live supervisor serves the same data directory."""


def _die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """A pre-exec hook making the kernel SIGTERM the child when the supervisor dies (Linux only), with SIGTERM
    unblocked and at its default action: a signal mask and an ignored disposition are inherited across
    exec, so a child started from a process that blocks or ignores SIGTERM (libraries loaded in it may)
    would outlive a stop until the grace period's SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
        set_action = libc.signal
    except (OSError, AttributeError):
        return None
    set_action.argtypes = [ctypes.c_int, ctypes.c_void_p]
    set_action.restype = ctypes.c_void_p

    def hook() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        # SIG_DFL (a null handler) through the C library: an ignored action survives exec, a handled one does
        # not.
        set_action(int(signal.SIGTERM), None)
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        # The supervisor may have died between fork and prctl: then no signal will ever come.
        if os.getppid() != parent_pid:
            os._exit(1)

    return hook


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
        self.process = subprocess.Popen(
            list(self.argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent(os.getpid()),
        )
        log.close()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _cmdline(pid: int) -> list[str] | None:
    """The process's argv as the kernel holds it, or None when no such process is alive (Linux /proc)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part] or None


def _alive_as(pid: int, argv: Sequence[str]) -> bool:
    """The pid is alive and still runs the recorded command (so a reused pid is never signalled).

    A console script starts through its shebang, so the kernel shows ``python /path/stacklens serve …`` for
    the recorded ``/path/stacklens serve …``: the arguments must end the command line and the program must
    appear in it.
    """
    if pid <= 0 or not argv:
        return False
    cmd = _cmdline(pid)
    if cmd is None or len(cmd) < len(argv):
        return False
    program, args = argv[0], list(argv[1:])
    return (not args or cmd[-len(args) :] == args) and program in cmd[: len(cmd) - len(args)]


class Supervisor:
    def __init__(self, say: Callable[[str], None] = print, run_file: Path | None = None) -> None:
        self.children: list[Child] = []
        self.say = say
        self.run_file = run_file
        self._stopping = False
        self._previous: dict[int, object] = {}

    # -- signals
    # ----------------------------------------------------------------------------------------------
    def install_signal_handlers(self) -> None:
        """SIGINT, SIGTERM and SIGHUP raise StopRequested in the main thread, whatever was inherited."""

        def _on_signal(signum: int, _frame: FrameType | None) -> None:
            if not self._stopping:
                raise StopRequested(signum)

        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, _on_signal)

    def restore_signal_handlers(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]  # None (set outside Python) is typed, not met
        self._previous.clear()

    # -- what an earlier run left
    # -------------------------------------------------------------------------------
    def reclaim(self) -> None:
        """Stop the children an earlier, dead supervisor left running; refuse when that supervisor still
        lives."""
        if self.run_file is None:
            return
        try:
            record = json.loads(self.run_file.read_text())
        except (OSError, ValueError):
            return
        owner = record.get("supervisor", {})
        if owner.get("pid") != os.getpid() and _alive_as(int(owner.get("pid", 0)), owner.get("argv", [])):
            raise AlreadyRunning(
                f"StackLens is already running from this data directory (pid {owner['pid']}: "
                f"{' '.join(owner.get('argv', []))}); stop it with Ctrl-C in its terminal or `kill {owner['pid']}`"
            )
        leftovers = [
            c for c in record.get("children", []) if _alive_as(int(c.get("pid", 0)), c.get("argv", []))
        ]
        for child in leftovers:
            self.say(f"  stopping {child['name']} (pid {child['pid']}) left running by an earlier run")
            os.kill(int(child["pid"]), signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        for child in leftovers:
            while _alive_as(int(child["pid"]), child["argv"]) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive_as(int(child["pid"]), child["argv"]):
                os.kill(int(child["pid"]), signal.SIGKILL)
        self.run_file.unlink(missing_ok=True)

    def _record(self) -> None:
        if self.run_file is None:
            return
        record = {
            "supervisor": {"pid": os.getpid(), "argv": _cmdline(os.getpid()) or []},
            "children": [
                {"name": c.name, "pid": c.process.pid, "argv": list(c.argv)}
                for c in self.children
                if c.process is not None
            ],
        }
        self.run_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.run_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=2))
        os.replace(tmp, self.run_file)

    # -- life cycle
    # -------------------------------------------------------------------------------------------
    def start(self, child: Child) -> Child:
        child.start()
        self.children.append(child)
        self._record()
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
        if self.run_file is not None:
            self.run_file.unlink(missing_ok=True)

    def wait(self) -> int:
        """Block until a stop signal (exit 0) or a child dies (exit 1); stop everything either way."""
        try:
            while True:
                for child in self.children:
                    if not child.running():
                        code = child.process.returncode if child.process else None
                        self.say(f"\n{child.name} exited with status {code}; last lines of {child.log_path}:")
                        self.say(child.tail())
                        self.say("stopping the others...")
                        self.stop()
                        return 1
                time.sleep(0.5)
        except (StopRequested, KeyboardInterrupt):
            pass
        self.say("\nstopping...")
        self.stop()
        self.say("all stopped.")
        return 0


def python_module(module: str, *args: str) -> list[str]:
    """argv running ``module`` with this interpreter (the project's virtual environment)."""
    return [sys.executable, "-m", module, *args]


def start_on_console(argv: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A helper process that writes to the launcher's console and ends when its work is done, so it is not
    supervised (a supervised child that exits stops everything). Like a child, it runs in a session of its own
    (Ctrl-C reaches only the supervisor) and dies with the supervisor. A thread waits for it, so a helper
    that finishes its work while the demo runs is reaped at once instead of staying a zombie (`<defunct>` in
    `ps`) until the supervisor exits."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
        preexec_fn=_die_with_parent(os.getpid()),
    )
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()
    return process


def end_console_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM a console helper that still runs (its work is not needed any more), SIGKILL after the grace."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_on_console(argv: Sequence[str], env: dict[str, str]) -> int:
    """Run a step on the launcher's console to its end; its exit status. A stop signal meanwhile ends it
    too."""
    process = start_on_console(argv, env)
    try:
        return process.wait()
    finally:
        end_console_process(process)
