"""The ingest workers' processes: child interpreters that take one task at a time over a pipe.

multiprocessing's ``spawn`` start, which ``ProcessPoolExecutor`` uses, also starts its resource tracker: a
third interpreter, kept for the rest of the server's life, that would unlink its queues' named semaphores
should the server die (12 MiB resident, in the server's tree at every peak of the demo's history). These share
nothing that needs unlinking: each is a child interpreter that reads a task (a pickled function and its
arguments, length-prefixed) from its stdin and writes the answer to its stdout, one at a time. A worker ends
when its stdin closes: the pool stops it, or the server is gone (killed outright, its end of the pipe closes
with it; no watchdog polls for the parent).

:class:`WorkerProcesses` is the part of ``concurrent.futures``' executors the ingest pool uses: ``submit``
returns a future and ``shutdown`` stops the workers. A worker that ends while it holds a task breaks the
whole pool, as a process pool breaks: that task, every task waiting and every later ``submit`` fail with
``BrokenProcessPool``, and the other workers are stopped.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from queue import Empty, SimpleQueue
from typing import IO, Any

_LENGTH = struct.Struct("!Q")
# The command a worker runs: the loop below, in a fresh interpreter of the server's own Python.
_WORKER_COMMAND = "from stacklens.ingest.worker_processes import serve_tasks; serve_tasks()"

_Task = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


def _send(stream: IO[bytes], data: bytes) -> None:
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes:
    """One message; EOFError when the stream ends first (the other side is gone)."""
    header = _read_exactly(stream, _LENGTH.size)
    return _read_exactly(stream, _LENGTH.unpack(header)[0])


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the stream ended")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class WorkerProcesses:
    """``workers`` child interpreters, each set up by ``initializer(*initargs)`` before its first task."""

    def __init__(self, workers: int, initializer: Callable[..., object], initargs: tuple[Any, ...]) -> None:
        self._tasks: SimpleQueue[_Task | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._broken: str | None = None
        self._stopped = False
        setup = pickle.dumps((initializer, initargs), pickle.HIGHEST_PROTOCOL)
        self._processes = [_start_worker_process(setup) for _ in range(workers)]
        self._threads = [
            threading.Thread(target=self._serve, args=(process,), name="ingest-worker-pipe", daemon=True)
            for process in self._processes
        ]
        for thread in self._threads:
            thread.start()

    @property
    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [process.pid for process in self._processes]

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        """``fn(*args)`` in the next free worker; its answer (or what it raised) in the future."""
        with self._lock:
            if self._broken is not None:
                raise BrokenProcessPool(self._broken)
            if self._stopped:
                raise RuntimeError("cannot schedule new futures after shutdown")
            future: Future[Any] = Future()
            self._tasks.put((future, fn, args))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the workers once the tasks taken are answered (``cancel_futures``: and drop those waiting)."""
        with self._lock:
            self._stopped = True
        if cancel_futures:
            self._fail_waiting(None)
        for _ in self._threads:
            self._tasks.put(None)
        if wait:
            for thread in self._threads:
                thread.join()

    def _serve(self, process: subprocess.Popen[bytes]) -> None:
        """One worker's thread: hand it the next task, wait for its answer, until the pool stops or breaks."""
        try:
            while (task := self._tasks.get()) is not None:
                if not self._run(process, task):
                    return
                del task  # a batch's body and rows are not held until the next one comes
        finally:
            _stop_worker_process(process)

    def _run(self, process: subprocess.Popen[bytes], task: _Task) -> bool:
        """One task in ``process``; False when the process ended while it held it (the pool is broken)."""
        assert process.stdin is not None
        assert process.stdout is not None
        future, fn, args = task
        if not future.set_running_or_notify_cancel():
            return True
        try:
            message = pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - a task that cannot be sent fails alone
            future.set_exception(exc)
            return True
        try:
            _send(process.stdin, message)
            del message
            done, value = pickle.loads(_receive(process.stdout))
        except (OSError, EOFError, pickle.UnpicklingError):
            reason = f"an ingest worker process (pid {process.pid}) ended while it held a task"
            future.set_exception(BrokenProcessPool(reason))
            self._break(reason)
            return False
        if done:
            future.set_result(value)
        else:
            future.set_exception(value)
        return True

    def _break(self, reason: str) -> None:
        with self._lock:
            if self._broken is not None:
                return
            self._broken = reason
        self._fail_waiting(BrokenProcessPool(reason))
        for process in self._processes:
            process.kill()  # its thread sees the pipe end and leaves
        for _ in self._threads:
            self._tasks.put(None)

    def _fail_waiting(self, error: BaseException | None) -> None:
        """Every task not yet taken: cancelled (``error`` None) or failed with ``error``."""
        sentinels = 0
        while True:
            try:  # the workers' threads take tasks meanwhile: never wait for one here
                task = self._tasks.get_nowait()
            except Empty:
                break
            if task is None:
                sentinels += 1
                continue
            future = task[0]
            if error is None:
                future.cancel()
            elif future.set_running_or_notify_cancel():
                future.set_exception(error)
        for _ in range(sentinels):
            self._tasks.put(None)


def _start_worker_process(setup: bytes) -> subprocess.Popen[bytes]:
    # The server's import path, as multiprocessing's spawn passes it: a worker imports what the server does.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen(
        [sys.executable, "-c", _WORKER_COMMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert process.stdin is not None
    with contextlib.suppress(OSError):  # ended at once: its thread finds the pipe closed and breaks the pool
        _send(process.stdin, setup)
    return process


def _stop_worker_process(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# Called in a worker process after each answer is written, when nothing of its task is held any more
# (stacklens.ingest.workers gives the batch's memory back then).
_after_answer: list[Callable[[], object]] = []


def after_each_answer(callback: Callable[[], object]) -> None:
    """Run ``callback`` in this worker process after each answer is sent (from the pool's initializer)."""
    _after_answer.append(callback)


def serve_tasks() -> None:
    """A worker process's life: set up, then answer tasks until its stdin ends."""
    tasks = sys.stdin.buffer
    # The answers keep the pipe to themselves: whatever the tasks print goes to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        initializer, initargs = pickle.loads(_receive(tasks))
        initializer(*initargs)
        while True:
            # Nothing of a task outlives its answer: a batch's body and rows are freed as soon as it is sent.
            _send(answers, _answer(_receive(tasks)))
            for callback in _after_answer:
                callback()
    except (EOFError, BrokenPipeError):
        return  # the pool stopped this worker, or the server is gone


def _answer(task: bytes) -> bytes:
    fn, args = pickle.loads(task)
    try:
        return pickle.dumps((True, fn(*args)), pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - the caller's future carries it
        try:
            return pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an exception that does not pickle, in words
            return pickle.dumps((False, RuntimeError(repr(exc))), pickle.HIGHEST_PROTOCOL)


__all__ = ["WorkerProcesses", "after_each_answer", "serve_tasks"]
