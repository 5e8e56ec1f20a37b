"""Worker processes that take the per-page work off the crawl process (``WISDOM_WORKERS``): any
handler, started, fed and restarted; the page analyses they run are
:mod:`wisdom_scrapy.engine.offload`'s.

Scrapy runs every callback, middleware and pipeline in one thread, which also drives every
download: CPU spent there on a page delays all the others. A :class:`WorkerPool` runs a
handler function in separate processes, so that work uses the machine's other cores.

Each worker is one process with its own pipe, not a slot of a shared executor, so a caller can
tell which worker a call goes to and keep, per worker, what it has already sent there (a site's
entropies, a vocabulary): a call then carries only what is new. The handler receives a dict
that lives as long as its worker, for exactly that.

A worker is a new Python process (``python -m wisdom_scrapy.engine.worker_pool``) talking over a
socket pair: never a fork of the crawl process (its reactor threads, its memory), and never one that
imports the crawl's main script, as multiprocessing's spawn and fork-server methods do (a script
that starts a crawl without an ``if __name__ == "__main__":`` guard would start it again in
every worker). It imports the handler's module and the handler's payloads' classes, nothing of
the caller's. A worker that dies fails its calls in flight with :class:`WorkerLost` and is
started again at the next call; :meth:`WorkerPool.generation` tells the caller that the new one
knows nothing yet; a worker whose crawl process dies reads the end of its socket and exits.
This module knows nothing of Scrapy nor of what the handler does.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import logging
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["WorkerHung", "WorkerLost", "WorkerNotStarted", "WorkerPool", "default_workers"]

logger = logging.getLogger(__name__)

#: Seconds a worker is given to exit after it was asked to, before it is terminated.
JOIN_TIMEOUT = 5.0
#: Seconds a worker with calls in flight may go without answering one before it is taken for
#: hung and killed (:class:`WorkerPool` ``timeout``).
DEFAULT_TIMEOUT = 60.0
#: Seconds, at least, a new worker is given to import what it runs and say it is ready: a
#: loaded machine may take many seconds, which must not count against a short ``timeout``.
START_TIMEOUT = 60.0
#: A function of the handler's module a new worker runs before it says it is ready, if the
#: module defines one (:func:`main`).
WARM_UP = "warm_up"
#: Workers that died in a row before they were ready, after which none is started again: this
#: Python cannot run them (a broken install, a frozen executable), and each try costs a process.
MAX_START_FAILURES = 3

Handler = Callable[[dict[str, Any], Any], Any]


class WorkerLost(RuntimeError):
    """The worker process running a call died (killed, out of memory) before it answered."""


class WorkerNotStarted(WorkerLost):
    """The worker died before it was ready (its interpreter or imports failed), or workers
    cannot be started here at all: it read no call, so a caller may run them elsewhere."""


class WorkerHung(WorkerLost):
    """The call a worker was running when it stopped answering (an endless loop, a stopped
    process): the worker was killed. Unlike the calls queued behind it, it is the likely cause,
    so a caller should not simply run it again."""


def default_workers(cpus: int | None = None) -> int:
    """``WISDOM_WORKERS = "auto"``: one worker per core beyond the one the crawl process
    needs, at most 4 (a page's work is done by one worker; more cores help a crawl of many
    pages in flight), and none on a one-core machine, where a worker would only add the cost
    of sending the page."""
    if cpus is None:  # the cores this process may run on, not the machine's
        affinity = getattr(os, "sched_getaffinity", None)
        cpus = len(affinity(0)) if affinity else os.cpu_count() or 1
    return max(0, min(cpus - 1, 4))


#: A payload asking a worker for its CPU seconds so far (:meth:`WorkerPool.cpu_seconds`).
_CPU = "wisdom_scrapy.engine.worker_pool:cpu"


def _serve(conn: Connection, handler: Handler) -> None:
    """A worker's loop: say it is ready (call id ``None``), then answer each ``(call id,
    payload)`` with ``(call id, ok, result or exception)`` until ``None`` or the pipe closes."""
    state: dict[str, Any] = {}
    try:
        conn.send((None, True, None))
    except OSError:
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        call_id, payload = message
        try:
            result = time.process_time() if payload == _CPU else handler(state, payload)
            answer = (call_id, True, result)
        except Exception as exc:  # sent back: the caller decides what a failure means
            answer = (call_id, False, _portable(exc))
        try:
            conn.send(answer)
        except OSError:  # the crawl process is gone
            return
        except Exception as exc:  # the result does not pickle
            conn.send((call_id, False, RuntimeError(f"result not picklable: {exc}")))


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


@dataclass
class _Worker:
    name: str
    process: subprocess.Popen[bytes]
    conn: Connection
    generation: int
    pending: dict[int, Future[Any]] = field(default_factory=dict)
    #: ``time.monotonic()`` of its last answer, or of its first call in flight since
    answered: float = 0.0
    ready: bool = False  # it has imported what it runs
    alive: bool = True
    why: str = ""  # why it was lost
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: pickled messages for the writer thread; ``None`` ends it
    outbox: queue.SimpleQueue[bytes | None] = field(default_factory=queue.SimpleQueue)
    writer: threading.Thread | None = None
    reader: threading.Thread | None = None


class WorkerPool:
    """``size`` worker processes running ``handler(state, payload)`` (module docstring).

    :meth:`pick` chooses the worker with the fewest calls in flight, :meth:`call` sends it a
    payload and returns a :class:`concurrent.futures.Future` of the result, resolved from a
    reader thread (``asyncio.wrap_future`` awaits it in an event loop). A call never waits for
    its worker: the payload is pickled in the calling thread (the payload may change once the
    call returns) and written by the worker's writer thread, since a busy worker reads nothing
    and a payload larger than the socket's buffer would block the caller (a crawl's reactor)
    until it does. A worker with calls in flight that answers none for ``timeout`` seconds is
    killed: its oldest call fails with :class:`WorkerHung`, the others with :class:`WorkerLost`.
    Thread-safe for one calling thread."""

    def __init__(self, size: int, handler: Handler, *, name: str = "wisdom-worker",
                 timeout: float = DEFAULT_TIMEOUT) -> None:  # fmt: skip
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, not {size}")
        if not timeout > 0:
            raise ValueError(f"a worker's timeout must be positive, not {timeout}")
        self.timeout = timeout
        self.handler = handler
        self.name = name
        self.size = size
        self._next_id = 0
        self._closed = False
        #: workers started again after one died (each death fails its calls in flight)
        self.restarts = 0
        #: calls sent to each worker (index), over its restarts
        self.calls = [0] * size
        self._start_failures = 0  # workers in a row that died before they were ready
        self._workers: list[_Worker] = []  # started at the first call: a crawl may make none

    def __len__(self) -> int:
        return self.size

    @property
    def closed(self) -> bool:
        """:meth:`close` was called: no call can be made any more."""
        return self._closed

    def _start(self, index: int, generation: int) -> _Worker:
        mine, theirs = socket.socketpair()
        handler = f"{self.handler.__module__}:{self.handler.__qualname__}"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        process = subprocess.Popen(
            # -P: the crawl's own sys.path (PYTHONPATH below), not the current directory first
            [sys.executable, "-P", "-m", "wisdom_scrapy.engine.worker_pool", str(theirs.fileno()),
             handler],
            # stdout may be the crawl's feed (-o -): a worker writes only errors, to stderr
            pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        theirs.close()
        worker = _Worker(f"{self.name}-{index}", process, Connection(mine.detach()), generation)
        worker.reader = threading.Thread(target=self._read, args=(worker,),
                                         name=f"{self.name}-{index}-reader", daemon=True)
        worker.writer = threading.Thread(target=self._write, args=(worker,),
                                         name=f"{self.name}-{index}-writer", daemon=True)
        worker.reader.start()
        worker.writer.start()
        return worker

    def generation(self, index: int) -> int:
        """Changes when worker ``index`` was started again: what was sent to it is gone."""
        return self._workers[index].generation if self._workers else 0

    def pick(self) -> int:
        """The index of the worker to call next (the least busy; a dead one is started again)."""
        if self._closed:
            raise WorkerLost("the worker pool is closed")
        if self._start_failures >= MAX_START_FAILURES:
            raise WorkerNotStarted(f"{self._start_failures} worker processes in a row died "
                                   "before they were ready")  # fmt: skip
        if not self._workers:
            self._workers = [self._start(i, 0) for i in range(self.size)]
        index = min(range(len(self._workers)), key=lambda i: len(self._workers[i].pending))
        worker = self._workers[index]
        if not worker.alive:
            self._start_failures = 0 if worker.ready else self._start_failures + 1
            if self._start_failures >= MAX_START_FAILURES:
                logger.error("wisdom_scrapy: worker process %s lost (%s) before it was ready, "
                             "as the %d before it: no worker is started again",
                             worker.name, worker.why, MAX_START_FAILURES - 1)  # fmt: skip
                raise WorkerNotStarted(worker.why)
            self.restarts += 1
            logger.warning("wisdom_scrapy: worker process %s lost (%s); starting another",
                           worker.name, worker.why)  # fmt: skip
            self._close_worker(worker, kill=True)  # replaced: nothing it would still do matters
            self._workers[index] = self._start(index, worker.generation + 1)
        return index

    def call(self, index: int, payload: Any) -> Future[Any]:
        """Send ``payload`` to worker ``index``; the future holds the handler's result, its
        exception, or :class:`WorkerLost`."""
        worker = self._workers[index]
        future: Future[Any] = Future()
        call_id, self._next_id = self._next_id, self._next_id + 1
        with worker.lock:
            if not worker.alive:
                future.set_exception(WorkerLost(f"worker process {worker.name} died"))
                return future
            if not worker.pending:  # its time to answer starts now
                worker.answered = time.monotonic()
            worker.pending[call_id] = future
        self.calls[index] += 1
        try:
            message = pickle.dumps((call_id, payload), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            # what the caller sent it before may be out of step now: the worker is lost
            self._lost(worker, f"cannot send to it: {type(exc).__name__} {exc}")
            return future
        worker.outbox.put(message)
        return future

    def cpu_seconds(self, timeout: float = JOIN_TIMEOUT) -> float:
        """CPU seconds the live workers have used (0 before the first call): what the crawl's
        work cost beside the crawl process's own time. A worker that does not answer within
        ``timeout`` counts 0."""
        futures = [self.call(i, _CPU) for i, w in enumerate(self._workers) if w.alive]
        total = 0.0
        for future in futures:
            try:
                total += float(future.result(timeout=timeout))
            except Exception:  # a dead or stuck worker: its time is unknown
                continue
        return total

    def _read(self, worker: _Worker) -> None:
        """The worker's reader thread: resolves its calls' futures until the pipe ends, an
        answer cannot be read, or the worker hangs (the worker is then lost: its calls fail,
        never hang)."""
        poll = min(1.0, self.timeout / 4)
        while True:
            try:
                if not worker.conn.poll(poll):
                    if self._hung(worker):
                        return
                    continue
                call_id, ok, result = worker.conn.recv()
            except Exception as exc:  # EOF, a broken pipe, an answer that does not unpickle
                self._lost(worker, self._failure(worker, exc))
                return
            with worker.lock:
                worker.answered = time.monotonic()
                worker.ready = True
                future = worker.pending.pop(call_id, None)
            if future is None:
                continue
            with contextlib.suppress(InvalidStateError):  # the caller cancelled it
                if ok:
                    future.set_result(result)
                else:
                    future.set_exception(result)

    def _write(self, worker: _Worker) -> None:
        """The worker's writer thread: sends its pickled messages in order until told to end
        or a send fails (a broken pipe: the worker is then lost)."""
        while (message := worker.outbox.get()) is not None:
            try:
                worker.conn.send_bytes(message)
            except Exception as exc:
                self._lost(worker, f"cannot send to it: {type(exc).__name__} {exc}")
                return

    @staticmethod
    def _failure(worker: _Worker, exc: Exception) -> str:
        if isinstance(exc, EOFError):  # it ended: killed, out of memory, crashed
            with contextlib.suppress(subprocess.TimeoutExpired):
                return f"it exited with code {worker.process.wait(JOIN_TIMEOUT)}"
        return f"{type(exc).__name__} {exc}".strip()

    def _hung(self, worker: _Worker) -> bool:
        """True when the worker has had calls in flight for ``timeout`` seconds without
        answering one: it is killed, and lost. The worker answers in order, so its oldest call
        is the one it was stuck on."""
        limit = self.timeout if worker.ready else max(self.timeout, START_TIMEOUT)
        with worker.lock:
            if not worker.pending or time.monotonic() - worker.answered < limit:
                return False
            # a worker that never became ready read no call: none of them is to blame
            stuck = min(worker.pending) if worker.ready else None
        why = f"answered nothing for {limit:g} s: killed"
        logger.warning("wisdom_scrapy: worker process %s %s", worker.name, why)
        self._lost(worker, why, stuck=stuck)  # before the kill: the writer's broken pipe would
        with contextlib.suppress(OSError):  # fail its calls first, for another reason
            worker.process.kill()
        return True

    def _lost(self, worker: _Worker, why: str, stuck: int | None = None) -> None:
        with worker.lock:
            if worker.alive:
                worker.why = why
            worker.alive = False
            pending, worker.pending = worker.pending, {}
        for call_id, future in pending.items():
            if call_id == stuck:
                lost: type[WorkerLost] = WorkerHung
            else:  # before it was ready it read no call
                lost = WorkerLost if worker.ready else WorkerNotStarted
            with contextlib.suppress(InvalidStateError):  # the caller cancelled it
                future.set_exception(lost(f"worker process {worker.name}: {why}"))

    def _close_worker(self, worker: _Worker, kill: bool = False) -> None:
        """End the worker: asked to (after the calls queued for it), or killed; its socket is
        closed once its threads are done with it (a new worker's socket may reuse the fd)."""
        worker.outbox.put(pickle.dumps(None))
        worker.outbox.put(None)
        if not kill:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(JOIN_TIMEOUT)
        if worker.process.poll() is None:
            worker.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # unkillable for now (D state)
                worker.process.wait(JOIN_TIMEOUT)
        threads = [t for t in (worker.writer, worker.reader) if t is not None]
        for thread in threads:
            thread.join(JOIN_TIMEOUT)
        if any(thread.is_alive() for thread in threads):  # its fd stays theirs: left open
            logger.warning("wisdom_scrapy: worker process %s did not end", worker.name)
            return
        worker.conn.close()

    def close(self) -> None:
        """Ask every worker to exit (calls in flight fail with :class:`WorkerLost`)."""
        if self._closed:
            return
        self._closed = True
        for worker in self._workers:
            try:
                self._close_worker(worker)
            finally:  # whatever happened to this one, the others are closed too
                self._lost(worker, "the pool closed")


def main(argv: list[str]) -> None:
    """A worker's process: ``python -m wisdom_scrapy.engine.worker_pool FD MODULE:FUNCTION``.

    Ctrl-C in the crawl's terminal reaches the whole process group: the crawl closes gracefully
    and tells its workers when, so they ignore it. A worker ends when its crawl process does
    (on Linux at once, by the kernel's parent-death signal; elsewhere at its next read)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    fd, handler = int(argv[0]), argv[1]
    module_name, _, name = handler.partition(":")
    module = importlib.import_module(module_name)
    # what the handler's first call would load lazily, loaded before the worker says it is
    # ready: inside the start's allowance, not inside a short per-call ``timeout``
    warm_up = getattr(module, WARM_UP, None)
    if callable(warm_up):
        warm_up()
    _serve(Connection(fd), getattr(module, name))


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):  # not Linux: the end of the socket ends the worker
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


#: Linux prctl(2) option: the signal the process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


if __name__ == "__main__":
    main(sys.argv[1:])
