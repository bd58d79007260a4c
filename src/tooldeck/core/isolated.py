"""Run a parser on a stranger's bytes in a process that can be killed.

A document, a calendar feed or a bank statement comes from someone else: a zip bomb,
billion laughs or a pathological nesting can cost minutes of CPU and gigabytes of
memory. ``IsolatedProcesses.call`` runs a function in a child process, forked from a
server that has already imported the parsing libraries (``multiprocessing``'s
``forkserver``), under an address-space limit and a deadline; past either, the child
is killed and the caller gets an ``IsolationError`` naming the limit. At most
``max_workers`` children run at once; the rest wait their turn (the wait counts
against no deadline of theirs). Nothing of the child's state reaches the caller but
the function's return value or exception, pickled. Children run at a lower priority
(``nice`` 10) than the server, so a parse does not slow its answers.

Example::

    pool = IsolatedProcesses(max_workers=2, preload=["pypdf"])
    document = pool.call(parse_bytes, data, "report.pdf", limits=ProcessLimits(timeout_s=30))
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = ["IsolatedProcesses", "IsolationError", "ProcessLimits"]

T = TypeVar("T")

_PRELOAD: set[str] = {"tooldeck.core.isolated"}


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessLimits:
    """Limits of one isolated call."""

    timeout_s: float = 30.0
    """Wall-clock seconds; the child is killed past them (its CPU is capped likewise)."""
    memory_mb: int | None = 1024
    """MiB of address space the child may add to what it starts with (``RLIMIT_AS``)."""


class IsolationError(Exception):
    """An isolated call that did not return: a limit was hit, or the child died.

    Attributes:
        kind: ``timeout``, ``memory``, ``crash`` or ``stopped`` (the pool was closed).
        limit: The limit that was hit (``timeout_s``, ``memory_mb``), or None.
    """

    def __init__(
        self,
        kind: Literal["timeout", "memory", "crash", "stopped"],
        message: str,
        limit: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.limit = limit


class IsolatedProcesses:
    """A bounded set of killable worker processes (module docstring).

    Semantics:
        ``call`` blocks its thread (run it in a worker thread from async code) until
        the function returns, raises, or a limit ends it. An exception the function
        raises is raised again in the caller (as a ``RuntimeError`` naming it when it
        cannot be pickled); ``MemoryError`` becomes ``IsolationError("memory")``.
        ``close`` kills every child still running: their callers get ``stopped``.

    Args:
        max_workers: Children running at once.
        preload: Modules the fork server imports once, so that a child starts warm.
    """

    def __init__(self, max_workers: int = 2, preload: Sequence[str] = ()) -> None:
        self.max_workers = max_workers
        self._context = multiprocessing.get_context("forkserver")
        # one fork server per process: it imports what every pool asked for so far
        _PRELOAD.update(preload)
        self._context.set_forkserver_preload(sorted(_PRELOAD))
        self._slots = threading.BoundedSemaphore(max_workers)
        self._running: set[Any] = set()
        self._lock = threading.Lock()
        self._closed = False

    def call(self, func: Callable[..., T], *args: Any, limits: ProcessLimits) -> T:
        """``func(*args)`` in a child process under ``limits``; its return value.

        Raises:
            IsolationError: the child passed a limit, died, or the pool was closed.
            Exception: whatever ``func`` raised.
        """
        with self._slots:
            if self._closed:
                raise IsolationError("stopped", "the server is stopping")
            receiver, sender = self._context.Pipe(duplex=False)
            child = self._context.Process(
                target=_work, args=(sender, func, args, limits), daemon=True
            )
            with self._lock, _main_unnamed():
                child.start()
                self._running.add(child)
            sender.close()
            try:
                value: T = self._outcome(child, receiver, limits)
                return value
            finally:
                with self._lock:
                    self._running.discard(child)
                with contextlib.suppress(OSError):
                    child.kill()
                child.join()
                receiver.close()

    def _outcome(self, child: Any, receiver: Any, limits: ProcessLimits) -> Any:
        try:
            ready = receiver.poll(limits.timeout_s)
            message = receiver.recv() if ready else None
        except (EOFError, OSError):
            message = None
            ready = True
        if not ready:
            raise IsolationError(
                "timeout",
                f"did not finish within timeout_s={limits.timeout_s:g} s",
                "timeout_s",
            )
        if message is None:
            child.join(1)
            if self._closed:
                raise IsolationError("stopped", "the server is stopping")
            code = child.exitcode
            if code in (-signal.SIGXCPU, -signal.SIGKILL):  # its CPU limit
                raise IsolationError(
                    "timeout",
                    f"did not finish within timeout_s={limits.timeout_s:g} s",
                    "timeout_s",
                )
            raise IsolationError("crash", f"the reading process ended (exit code {code})")
        ok, value = message
        if ok:
            return value
        if isinstance(value, MemoryError):
            raise IsolationError(
                "memory",
                f"needed more than memory_mb={limits.memory_mb} MiB of memory",
                "memory_mb",
            )
        raise value

    def close(self) -> None:
        """Kill every running child (their callers get ``stopped``); later calls too."""
        self._closed = True
        with self._lock:
            running = list(self._running)
        for child in running:
            with contextlib.suppress(OSError):
                child.kill()


_MAIN = threading.Lock()
_UNSET = object()


@contextlib.contextmanager
def _main_unnamed() -> Iterator[None]:
    """``__main__`` with neither a ``__file__`` nor a ``__spec__`` while a child starts.

    ``multiprocessing`` tells each child (and its fork server) where the parent's main
    module is, and the child runs it again, as ``__mp_main__``: a script that builds a
    runtime at its top level, with no ``if __name__ == "__main__":`` guard, started one
    child per child (Python refuses: "An attempt has been made to start a new process
    before the current process has finished its bootstrapping phase"), and ``python -
    < script.py`` named a file ``<stdin>`` that does not exist (issue 55). A child here
    runs only tooldeck's functions, importable by name: it needs nothing of the main
    module, so none is named.
    """
    main = sys.modules.get("__main__")
    with _MAIN:
        if main is None:
            yield
            return
        saved = {name: main.__dict__.get(name, _UNSET) for name in ("__file__", "__spec__")}
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is _UNSET:
                    main.__dict__.pop(name, None)
                else:
                    main.__dict__[name] = value


def _address_space() -> int:
    """Bytes of address space this process has now (0 where /proc cannot tell)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _die_with_parent() -> None:
    """On Linux, SIGKILL this child when its parent, ``multiprocessing``'s fork server, ends.

    The fork server exits once every holder of its "alive" pipe is gone: the server
    that started it, and each child (``multiprocessing`` hands them a copy). The child
    lets its copy go, so a server killed with SIGKILL takes the fork server with it,
    and this child with that; a parse went on after both before.
    """
    from multiprocessing import forkserver

    alive = getattr(forkserver._forkserver, "_forkserver_alive_fd", None)
    with contextlib.suppress(OSError, AttributeError, TypeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if alive is not None:
            os.close(alive)
            forkserver._forkserver._forkserver_alive_fd = None  # type: ignore[attr-defined]


def _work(sender: Any, func: Callable[..., Any], args: tuple[Any, ...], limits: Any) -> None:
    """The child: apply the limits, run ``func``, send ``(ok, value)``."""
    import resource

    _die_with_parent()
    if limits.memory_mb:
        ceiling = _address_space() + limits.memory_mb * 1024 * 1024  # on top of the start
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    seconds = math.ceil(limits.timeout_s) + 1  # the wall deadline comes first
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    with contextlib.suppress(OSError):
        os.nice(10)  # a parse yields the CPU to the server that waits for it
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        outcome: tuple[bool, Any] = (True, func(*args))
    except MemoryError:
        outcome = (False, MemoryError())
    except BaseException as exc:  # everything the parser raises goes back to the caller
        outcome = (False, exc)
    try:
        sender.send(outcome)
    except Exception as exc:  # what does not pickle goes back as text
        ok, value = outcome
        text = (
            f"the result cannot be sent back: {exc}" if ok else f"{type(value).__name__}: {value}"
        )
        sender.send((False, RuntimeError(text)))
    sender.close()
    os._exit(0)
