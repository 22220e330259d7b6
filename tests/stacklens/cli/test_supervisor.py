"""The demo supervisor stops everything it started on SIGINT, SIGTERM and SIGHUP (whatever it inherited),
its children die with it even on `kill -9`, and a rerun stops (or names) what an earlier run left behind.

Each test runs a real launcher process with real children and signals it as a terminal, a process manager
or an operator would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stacklens.cli.supervisor import _cmdline

LAUNCHER = """
import sys
from pathlib import Path
from stacklens.cli.supervisor import AlreadyRunning, Child, StopRequested, Supervisor

run_file, logs = Path(sys.argv[1]), Path(sys.argv[2])
sup = Supervisor(run_file=run_file)
sup.install_signal_handlers()
try:
    try:
        sup.reclaim()
    except AlreadyRunning as exc:
        print(f"refused: {exc}", flush=True)
        sys.exit(2)
    for name in ("alpha", "beta"):
        sup.start(Child(name, [sys.executable, "-c", "import time; time.sleep(300)", name], logs / f"{name}.log"))
    print("ready", flush=True)
    sys.exit(sup.wait())
except StopRequested:
    sup.stop()
    sys.exit(0)
"""


def _ignore_interactive_signals() -> None:
    # As `nohup` or a process manager would start it: SIGINT and SIGHUP ignored before exec.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _alive(pid: int) -> bool:
    return _cmdline(pid) is not None  # a zombie or a reaped process has no command line


def _wait_until(predicate, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


class Launcher:
    def __init__(self, root: Path, ignore_signals: bool = False) -> None:
        self.run_file = root / "run" / "up.json"
        self.out = root / f"launcher-{time.monotonic_ns()}.out"
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, str(self.run_file), str(root / "logs")],
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_ignore_interactive_signals if ignore_signals else None,
            )

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_ready(self) -> list[int]:
        assert _wait_until(lambda: "ready" in self.output() or self.proc.poll() is not None), self.output()
        assert "ready" in self.output(), self.output()
        return [child["pid"] for child in json.loads(self.run_file.read_text())["children"]]


@pytest.fixture
def launchers(tmp_path: Path) -> Iterator[list[Launcher]]:
    started: list[Launcher] = []
    yield started
    for launcher in started:  # whatever a failing test left: the launcher and every recorded child
        if launcher.proc.poll() is None:
            launcher.proc.kill()
            launcher.proc.wait()
    if (tmp_path / "run" / "up.json").exists():
        for child in json.loads((tmp_path / "run" / "up.json").read_text())["children"]:
            if _alive(child["pid"]):
                os.kill(child["pid"], signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_every_stop_signal_stops_all_even_when_inherited_as_ignored(
    tmp_path: Path, launchers: list[Launcher], signum: int
) -> None:
    launcher = Launcher(tmp_path, ignore_signals=True)
    launchers.append(launcher)
    children = launcher.wait_ready()
    assert all(_alive(pid) for pid in children)

    launcher.proc.send_signal(signum)

    assert launcher.proc.wait(timeout=30) == 0, launcher.output()
    assert _wait_until(lambda: not any(_alive(pid) for pid in children)), "children outlived the supervisor"
    assert not launcher.run_file.exists(), "a clean stop leaves no run file"


def test_children_end_when_the_launcher_is_killed(tmp_path: Path, launchers: list[Launcher]) -> None:
    launcher = Launcher(tmp_path)
    launchers.append(launcher)
    children = launcher.wait_ready()

    launcher.proc.kill()  # SIGKILL: no handler runs
    launcher.proc.wait()

    assert _wait_until(lambda: not any(_alive(pid) for pid in children), seconds=10), (
        "children outlived a SIGKILLed supervisor"
    )
    # The next run starts normally over the stale run file.
    rerun = Launcher(tmp_path)
    launchers.append(rerun)
    assert len(rerun.wait_ready()) == 2


def test_a_rerun_stops_what_an_earlier_run_left_behind(tmp_path: Path, launchers: list[Launcher]) -> None:
    # A child that survived its supervisor (e.g. it ignored the kernel's signal): recorded in the run file
    # with a supervisor that is gone.
    # The orphan takes SIGTERM's default action whatever it inherited from this test process: a signal mask
    # and dispositions are inherited across exec, and after the suite's earlier tests (engines, servers and
    # daemons in this process) a blocked SIGTERM once left it running until the grace period's SIGKILL.
    argv = [
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_DFL); "
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM]); print('ready', flush=True); "
        "time.sleep(300)",
        "server",
    ]
    orphan = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        # Only once its SIGTERM is restored: on a loaded machine the launcher's SIGTERM came while the orphan
        # was still starting, with the blocked SIGTERM it inherited, and the grace period's SIGKILL ended it.
        assert orphan.stdout is not None and orphan.stdout.readline().strip() == "ready"
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        run_file = tmp_path / "run" / "up.json"
        run_file.parent.mkdir(parents=True)
        run_file.write_text(
            json.dumps(
                {
                    "supervisor": {"pid": gone.pid, "argv": ["python", "up"]},
                    "children": [{"name": "server", "pid": orphan.pid, "argv": argv}],
                }
            )
        )

        launcher = Launcher(tmp_path)
        launchers.append(launcher)
        launcher.wait_ready()

        assert orphan.wait(timeout=20) == -signal.SIGTERM
        assert f"stopping server (pid {orphan.pid}) left running by an earlier run" in launcher.output()
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()
        if orphan.stdout is not None:
            orphan.stdout.close()


def test_a_rerun_names_a_supervisor_that_still_runs(tmp_path: Path, launchers: list[Launcher]) -> None:
    first = Launcher(tmp_path)
    launchers.append(first)
    children = first.wait_ready()

    second = Launcher(tmp_path)
    launchers.append(second)

    assert second.proc.wait(timeout=20) == 2
    assert f"StackLens is already running from this data directory (pid {first.proc.pid}" in second.output()
    assert all(_alive(pid) for pid in children), "the refused run must not touch the running one"


def test_a_reused_pid_is_never_signalled(tmp_path: Path, launchers: list[Launcher]) -> None:
    # The recorded pid now belongs to an unrelated process (this test's own pytest): it must survive.
    run_file = tmp_path / "run" / "up.json"
    run_file.parent.mkdir(parents=True)
    run_file.write_text(
        json.dumps(
            {
                "supervisor": {"pid": 0, "argv": []},
                "children": [
                    {"name": "server", "pid": os.getpid(), "argv": ["/nonexistent/stacklens", "serve"]}
                ],
            }
        )
    )
    launcher = Launcher(tmp_path)
    launchers.append(launcher)
    launcher.wait_ready()
    assert "left running by an earlier run" not in launcher.output()


def test_a_console_step_runs_to_its_end_and_a_console_helper_is_ended(tmp_path: Path) -> None:
    """The demo's steps (`python -m demo.…`) write to the launcher's console: a step's status is returned, a
    helper still running when `stacklens up` stops is ended, in a session of its own either way."""
    from stacklens.cli.supervisor import end_console_process, run_on_console, start_on_console

    said = tmp_path / "said"
    step = [
        sys.executable,
        "-c",
        f"import os, sys; open({str(said)!r}, 'w').write(os.environ['STEP']); sys.exit(3)",
    ]
    assert run_on_console(step, {"STEP": "made"}) == 3
    assert said.read_text() == "made"
    # Started from a thread with SIGTERM blocked and ignored (as libraries loaded in a process can leave it):
    # the helper still takes the stop, as a mask and an ignored action are inherited across exec and the
    # supervisor's hook resets both.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    action = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        helper = start_on_console([sys.executable, "-c", "import time; time.sleep(300)"], {})
    finally:
        signal.signal(signal.SIGTERM, action)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert os.getsid(helper.pid) == helper.pid  # Ctrl-C in the terminal reaches only the supervisor
    end_console_process(helper)
    assert helper.returncode == -signal.SIGTERM


def test_a_console_helper_that_finishes_leaves_no_zombie() -> None:
    """Issue #47: `demo.catch_up` ends its work while the demo runs; it stayed `<defunct>` in `ps` until
    `stacklens up` stopped. The supervisor reaps it when it ends."""
    from stacklens.cli.supervisor import start_on_console

    helper = start_on_console([sys.executable, "-c", "pass"], {})
    deadline = time.monotonic() + 20
    while Path(f"/proc/{helper.pid}").exists() and time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{helper.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except FileNotFoundError:
            break  # reaped between the two looks
        if state == "Z" and time.monotonic() > deadline - 15:
            break  # a zombie for five seconds: nobody reaps it
        time.sleep(0.1)
    assert not Path(f"/proc/{helper.pid}").exists(), "the finished helper is still a zombie"
    # The reaping thread's waitpid has returned; it records the status once it runs again (on a loaded
    # machine, some time after the process left /proc).
    deadline = time.monotonic() + 10
    while helper.returncode is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert helper.returncode == 0
