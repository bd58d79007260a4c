"""Run Python in a separate, limited OS process, fast: a fork server with modules preloaded.

Example::

    sandbox = Sandbox(preload=("json", "pandas"))
    outcome = await sandbox.run("result = sum(x)", context={"x": [1, 2, 3]},
                                limits=SandboxLimits(timeout_s=5), cwd=None)
    outcome.result        # 6
    await sandbox.aclose()

How it works: one server process (``_sandbox_server.py``, started with ``python -I``
and a minimal environment) imports the preloaded modules once. While idle it prepares
the processes for the next runs (``spares`` of them: forked, isolated, warmed up), so
a run pays neither interpreter start-up and imports (~50 ms for ``python -c pass``,
~500 ms with pandas) nor the isolation: ~3 ms for ``result = 1 + 1`` with pandas
preloaded (``benchmarks/python_exec.py``, calls 50 ms apart), ~5.5 ms back to back
(a fresh ``python -c`` takes 10-15 ms). Runs beyond the prepared ones wait for their
process's preparation (a fork of the server, namespaces, mounts). The code runs in a
fresh namespace; its stdout and stderr go to sockets the host reads with a size cap.

The boundary, on Linux with root (or user namespaces):

- **Identity**: the code runs as an unprivileged user (``nobody`` by default when the
  server runs as root; ``user``), with no supplementary groups and ``no_new_privs``
  (a setuid binary cannot give root back). It cannot read the server's files closed
  to others, nor signal the server's processes.
- **Namespaces** (``isolate``): its own PID namespace (it sees and can signal only its
  own processes; the server's ``/proc/<pid>`` entries do not exist for it), mount
  namespace (a fresh ``/proc``, a private ``/tmp`` holding its scratch directory and a
  private ``/dev/shm``; directories closed to others, such as ``/root``, are covered,
  with only Python's installation and the tools' roots bound back), IPC namespace, and
  unless ``network`` a network namespace with no interface (no server, this one
  included, can be reached).
- **Lifetime**: when a run ends, times out or is cancelled, the host kills its process
  group; the run is its namespace's first process, so the kernel then kills every
  process the code started, whatever session or group it moved to. As that first
  process, the run ignores signals it sends itself without a handler (``SIGTERM``);
  the host's kill, the CPU limit and faults still end it.
- **Resources**: wall time (the host), CPU time (``RLIMIT_CPU``), memory
  (``RLIMIT_AS``, on top of the preloaded modules), processes (``RLIMIT_NPROC``,
  counted for the unprivileged user), output (the host keeps ``max_output_bytes``).
- **Supervision**: a watchdog replaces a fork server that died or was stopped within
  ``_WATCH_S`` (0.25 s).

Without namespaces (no root and no user namespaces), or with ``user = "root"``, the
boundary is weaker and a warning is logged at start: code then sees other processes
and ``/tmp``, and as the server's own user can read its files and signal it. It is
not a boundary against kernel exploits: give hostile code a VM.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any

from tooldeck.isolation.process import OutputCapture

__all__ = [
    "CallHandler",
    "ProgressHandler",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxOutcome",
]

_SERVER = Path(__file__).with_name("_sandbox_server.py")
_FRAME = struct.Struct(">I")
_START_TIMEOUT_S = 60.0
_WATCH_S = 0.25
_log = logging.getLogger("tooldeck.sandbox")

CallHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Runs a tool call a script made: ``(name, arguments) -> ToolResult as JSON-able dict``."""
ProgressHandler = Callable[[float, "float | None", "str | None"], object]
"""Takes the code's ``report_progress(progress, total, message)`` (``ToolContext.report_progress``);
what it returns is ignored."""


@dataclass(frozen=True, kw_only=True)
class SandboxLimits:
    """Per-run limits; None switches a limit off."""

    timeout_s: float = 30.0
    """Wall-clock seconds before the process group is killed."""
    cpu_s: float | None = 30.0
    """CPU seconds (``RLIMIT_CPU``, rounded up to whole seconds)."""
    memory_mb: int | None = 1024
    """Address space in MiB the code may add to the preloaded modules' (``RLIMIT_AS``)."""
    max_output_bytes: int = 64_000
    """Bytes of stdout and of stderr kept; the rest is counted and marked as cut."""
    max_processes: int | None = 64
    """Processes the code may start (``RLIMIT_NPROC``; not enforced for root)."""
    max_file_mb: int | None = 100
    """MiB one file written by the code may grow to (``RLIMIT_FSIZE``); a write past it
    fails with ``OSError: File too large``."""
    max_message_bytes: int = 32 * 1024 * 1024
    """Bytes one message of the code to the host (its result, a tool call) may hold; a
    larger one is not read: the run ends with a ``result`` error naming this limit."""
    max_messages_bytes: int = 128 * 1024 * 1024
    """Bytes all of one run's messages to the host may hold together (the same error)."""


@dataclass(frozen=True, kw_only=True)
class SandboxError:
    """Why a run did not produce a result."""

    kind: str
    """``timeout``, ``cpu``, ``memory``, ``exception``, ``result``, ``exit``, ``crash``."""
    message: str
    """What happened, for the model."""
    limit: str | None = None
    """The limit that was hit (``timeout_s``, ``cpu_s``, ``memory_mb``, ``max_processes``)."""
    traceback: str | None = None
    """The user code's traceback (its own frames only, lines as submitted)."""


@dataclass(kw_only=True)
class SandboxOutcome:
    """What one run produced."""

    result: Any = None
    """The code's ``result`` variable, as JSON data."""
    stdout: str = ""
    """Captured stdout, cut after ``max_output_bytes`` with a marker."""
    stderr: str = ""
    """Captured stderr, cut the same way."""
    error: SandboxError | None = None
    """Set when the run failed."""
    figures: list[str] = field(default_factory=list)
    """Matplotlib figures left open, as base64 PNG."""
    warnings: list[str] = field(default_factory=list)
    """Conversions applied to the result (e.g. NaN sent as null)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Tool calls the code made: name, arguments, status, error type."""
    duration_ms: float = 0.0
    """Wall time of the run."""


class _Server:
    """One fork-server process and the futures waiting on its messages."""

    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.process = process
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.started: dict[int, asyncio.Future[int | None]] = {}
        self.exited: dict[int, asyncio.Future[int | None]] = {}
        self.alive = True
        sock.setblocking(False)
        self.loop.add_reader(sock.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        try:
            message = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            message = b""
        if not message:
            self.close()
            return
        data = json.loads(message)
        op = data["op"]
        if op == "ready":
            if not self.ready.done():
                self.ready.set_result(data)
            return
        pending = (self.started if op == "started" else self.exited).pop(data["id"], None)
        if pending is not None and not pending.done():
            pending.set_result(data["pid"] if op == "started" else data["status"])

    def close(self) -> None:
        if not self.alive:
            return
        self.alive = False
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=1)
        gone = RuntimeError("the sandbox server stopped")
        if not self.ready.done():
            self.ready.set_exception(gone)
        for pending in (*self.started.values(), *self.exited.values()):
            if not pending.done():
                pending.set_result(None)  # no pid / status unknown: nobody left to reap it
        self.started.clear()
        self.exited.clear()


class Sandbox:
    """Runs code in forked, limited, isolated processes (see the module docstring).

    Args:
        preload: Modules the server imports once (missing ones are skipped; see
            ``preloaded``). Each becomes a name in the code's namespace (``pandas`` as
            ``pd``, ``numpy`` as ``np``, ``matplotlib.pyplot`` as ``plt``).
        env: The whole environment of the sandboxed processes (the server's own
            environment is not inherited, so its secrets are not visible).
        user: Run the code as this user. None: ``nobody`` when the server runs as
            root, else the server's own user; ``"root"`` keeps root (trusted code only).
        isolate: Give each run its own PID, mount, IPC (and network) namespaces.
        network: Let the code use the network (off: a namespace with no interface).
        exposed: Directories a run's ``cwd`` may be in (the tools' roots); with
            namespaces, other directories closed to others or under ``/tmp`` are not
            visible to the code.
        spares: Processes the server keeps prepared for the next runs (at least 1;
            ``PythonConfig.spares``).

    Raises:
        ValueError: ``user`` does not exist.
    """

    def __init__(
        self,
        *,
        preload: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        user: str | None = None,
        isolate: bool = True,
        network: bool = False,
        exposed: Sequence[Path] = (),
        spares: int = 4,
    ) -> None:
        self.preload = tuple(preload)
        self.spares = max(1, spares)
        self.env = dict(env or {})
        self.identity: dict[str, int] | None = None
        if user is None and os.geteuid() == 0:
            user = "nobody"
        if user is not None and user != "root":
            try:
                entry = pwd.getpwnam(user)
            except KeyError:
                raise ValueError(f"sandbox user {user!r} does not exist") from None
            self.identity = {"uid": entry.pw_uid, "gid": entry.pw_gid}
        self.isolate = isolate
        self.network = network
        self.exposed = tuple(str(Path(p).resolve()) for p in exposed)
        self.namespaces = False
        """Whether runs get their own namespaces (known once the server started)."""
        self.preloaded: tuple[str, ...] = ()
        self._server: _Server | None = None
        self._lock: asyncio.Lock | None = None
        self._ids = itertools.count(1)
        self._watchdog: asyncio.Task[None] | None = None

    @property
    def boundary(self) -> str:
        """What separates the code from the server, in words (for logs and docs)."""
        who = (
            f"uid {self.identity['uid']}"
            if self.identity
            else f"the server's own uid {os.geteuid()}"
        )
        where = (
            "its own PID, mount, IPC"
            + ("" if self.network else " and network")
            + " namespaces (private /tmp, fresh /proc)"
            if self.namespaces
            else "the server's namespaces (it can see other processes and /tmp)"
        )
        return f"runs as {who} in {where}, with rlimits and a killed process group"

    async def start(self) -> None:
        """Start the fork server now (``run`` starts it when needed).

        Raises:
            RuntimeError: the server did not start within 60 s.
        """
        await self._ensure_server()

    async def _ensure_server(self) -> _Server:
        server = self._server
        loop = asyncio.get_running_loop()
        if server is not None and server.alive and server.loop is loop and server.ready.done():
            return server
        if self._lock is None or self._lock._get_loop() is not loop:  # type: ignore[attr-defined]
            self._lock = asyncio.Lock()
        async with self._lock:
            server = self._server
            if server is not None and server.alive and server.loop is loop:
                return server
            if server is not None:
                server.close()
            self._server = server = self._spawn()
            try:
                ready = await asyncio.wait_for(server.ready, _START_TIMEOUT_S)
            except (TimeoutError, RuntimeError) as exc:
                server.close()
                raise RuntimeError(f"the sandbox server did not start: {exc}") from None
            self.preloaded = tuple(ready["preloaded"])
            self.namespaces = bool(ready.get("namespaces"))
            self._warn(ready.get("namespace_error"))
            if self._watchdog is None or self._watchdog.done():
                self._watchdog = loop.create_task(self._watch())
            return server

    def _warn(self, namespace_error: str | None) -> None:
        if self.isolate and not self.namespaces:
            _log.warning(
                "sandbox: no namespaces for python/execute_script (%s): code can see other "
                "processes and /tmp; run the server as root or enable user namespaces",
                namespace_error,
            )
        for path in self.exposed:
            if self.identity is not None and not _open_to(path, self.identity["uid"]):
                _log.warning(
                    "sandbox: %s is closed to the sandbox user (uid %s): python and "
                    "execute_script cannot use it as cwd; give others r-x on it "
                    "(chmod o+rx) or pick another root",
                    path,
                    self.identity["uid"],
                )
        if self.identity is None and os.geteuid() == 0:
            _log.warning("sandbox: code runs as root (builtin.python.user = 'root')")
        elif self.identity is None:
            _log.warning(
                "sandbox: code runs as the server's own user %s and can read its files; "
                "run the server as root so the code gets an unprivileged user",
                os.geteuid(),
            )

    async def _watch(self) -> None:
        """Replace the fork server within ``_WATCH_S`` of it dying or being stopped."""
        while True:
            await asyncio.sleep(_WATCH_S)
            server = self._server
            if server is None:
                return
            if server.alive and _running(server.process):
                continue
            server.close()
            with contextlib.suppress(RuntimeError):
                await self._ensure_server()

    def _spawn(self) -> _Server:
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            "preload": list(self.preload),
            "identity": self.identity,
            "namespaces": self.isolate,
            "network": self.network,
            "exposed": list(self.exposed),
            "spares": self.spares,
            "host_pid": os.getpid(),
        }
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", str(_SERVER), str(child.fileno()), json.dumps(config)],
                pass_fds=(child.fileno(),),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            child.close()
        return _Server(process, host)

    async def run(
        self,
        code: str,
        *,
        context: Mapping[str, Any] | None = None,
        cwd: Path | None,
        limits: SandboxLimits,
        tools: Sequence[str] | None = None,
        on_call: CallHandler | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> SandboxOutcome:
        """Run ``code`` once in a fresh process; never raises for what the code does.

        Args:
            code: Python source; its ``result`` variable is the answer.
            context: JSON-able values bound as top-level names.
            cwd: Working directory of the process (checked by the caller); None: a new
                private scratch directory, removed after the run.
            limits: The limits of this run.
            tools: Tool names a script may call as ``tools.<name>(...)``; None: no
                ``tools`` object (plain Python).
            on_call: Runs each tool call the script makes.
            on_progress: Takes each ``report_progress(progress, total, message)`` the
                code makes (numbers and a text; others are dropped).

        Raises:
            RuntimeError: the fork server cannot be started.
        """
        await self._ensure_server()
        scratch = None
        if cwd is None and not self.namespaces:  # with namespaces the child makes its own
            cwd = scratch = Path(tempfile.mkdtemp(prefix="tooldeck-python-"))
            if self.identity is not None:
                os.chown(scratch, self.identity["uid"], self.identity["gid"])
        try:
            return await self._run(code, context, cwd, limits, tools, on_call, on_progress)
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    async def _run(
        self,
        code: str,
        context: Mapping[str, Any] | None,
        cwd: Path | None,
        limits: SandboxLimits,
        tools: Sequence[str] | None,
        on_call: CallHandler | None,
        on_progress: ProgressHandler | None,
    ) -> SandboxOutcome:
        start = perf_counter()
        outcome = SandboxOutcome()
        server, job_id, pid, (ctrl, out, err) = await self._launch(limits, cwd)
        exited = server.exited[job_id]
        captures = [_capture(out, limits.max_output_bytes), _capture(err, limits.max_output_bytes)]
        timed_out = False
        too_large: _TooLarge | None = None
        done: dict[str, Any] | None = None
        status: int | None = None
        writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = await asyncio.open_unix_connection(sock=ctrl)
            _write_frame(writer, {"code": code, "context": dict(context or {}), "tools": tools})
            try:
                async with asyncio.timeout(limits.timeout_s):
                    done = await _converse(
                        reader, writer, on_call, on_progress, outcome.calls, limits
                    )
                    if done is None:  # the process ended without reporting: learn why
                        status = await exited
            except TimeoutError:
                timed_out = True
            except _TooLarge as exc:
                too_large = exc
        finally:
            if writer is not None:
                writer.close()
            else:
                ctrl.close()
            _kill_group(pid)
            if done is None and not timed_out and too_large is None and status is None:
                with contextlib.suppress(TimeoutError):
                    status = await asyncio.wait_for(exited, 1.0)
            server.started.pop(job_id, None)
            server.exited.pop(job_id, None)
            await OutputCapture.finish(captures)
            for sock in (out, err):
                sock.close()
        outcome.stdout, outcome.stderr = (c.text() for c in captures)
        outcome.duration_ms = round((perf_counter() - start) * 1000, 3)
        if timed_out:
            outcome.error = SandboxError(
                kind="timeout",
                limit="timeout_s",
                message=f"the code did not finish within timeout_s={limits.timeout_s:g} s; "
                "its processes were killed",
            )
        elif too_large is not None:
            outcome.error = SandboxError(
                kind="result", limit=too_large.limit, message=str(too_large)
            )
        elif done is None:
            outcome.error = _abnormal_end(status, limits)
        else:
            self._read_done(done, outcome, limits)
        return outcome

    async def _launch(
        self, limits: SandboxLimits, cwd: Path | None
    ) -> tuple[_Server, int, int, list[socket.socket]]:
        """Have the server start a child; returns ``(server, job id, pid, [ctrl, out, err])``.

        A server found dead on the way (killed by the previous run's code, say) is
        restarted and the launch tried once more; no code has run yet, so it is safe.
        """
        for _attempt in range(2):
            server = await self._ensure_server()
            pairs = [socket.socketpair() for _ in range(3)]
            job_id = next(self._ids)
            started: asyncio.Future[int | None] = server.loop.create_future()
            server.started[job_id] = started
            server.exited[job_id] = server.loop.create_future()
            request = {
                "id": job_id,
                "limits": {**limits.__dict__, "cwd": None if cwd is None else str(cwd)},
            }
            pid = None
            try:
                socket.send_fds(
                    server.sock, [json.dumps(request).encode()], [c.fileno() for _, c in pairs]
                )
                pid = await asyncio.wait_for(started, _START_TIMEOUT_S)
            except (OSError, TimeoutError):
                pass
            finally:
                for _, child in pairs:
                    child.close()
            if pid is not None:
                return server, job_id, pid, [host for host, _ in pairs]
            for host, _ in pairs:
                host.close()
            server.started.pop(job_id, None)
            server.exited.pop(job_id, None)
            server.close()
        raise RuntimeError("the sandbox server stopped while starting the run, twice")

    @staticmethod
    def _read_done(done: dict[str, Any], outcome: SandboxOutcome, limits: SandboxLimits) -> None:
        outcome.figures = done.get("figures") or []
        outcome.warnings = done.get("warnings") or []
        error = done.get("error")
        if error is None:
            outcome.result = json.loads(done["result"])
            return
        kind = error["kind"]
        if kind == "memory":
            outcome.error = SandboxError(
                kind="memory",
                limit="memory_mb",
                message=f"the code ran out of memory: the memory_mb={limits.memory_mb} "
                "limit was hit (MemoryError)",
            )
            return
        message = error["message"]
        limit = None
        if error.get("exception") == "BlockingIOError" and limits.max_processes:
            limit = "max_processes"
            message += f" (the max_processes={limits.max_processes} limit was hit)"
        outcome.error = SandboxError(
            kind=kind, message=message, limit=limit, traceback=error.get("traceback")
        )

    async def aclose(self) -> None:
        """Stop the fork server (and with it any run still going)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._server is not None:
            self._server.close()
            self._server = None


def _open_to(path: str, uid: int) -> bool:
    """Whether ``uid`` may list and enter the directory ``path`` (by its own bits)."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return stat.st_uid == uid or stat.st_mode & 0o005 == 0o005


def _running(process: subprocess.Popen[bytes]) -> bool:
    """Alive and not stopped (``SIGSTOP`` leaves a process that answers nothing)."""
    if process.poll() is not None:
        return False
    try:
        stat = Path(f"/proc/{process.pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust poll()
    return stat.rsplit(")", 1)[1].split()[0] not in ("T", "t", "Z")


def _abnormal_end(status: int | None, limits: SandboxLimits) -> SandboxError:
    if status is None:
        return SandboxError(
            kind="crash", message="the sandboxed process ended without reporting a result"
        )
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return SandboxError(
            kind="exit",
            message=f"the process exited with code {code} before reporting a result "
            "(os._exit or a fatal error)",
        )
    sig = signal.Signals(-code)
    if sig in (signal.SIGXCPU, signal.SIGKILL) and limits.cpu_s:
        return SandboxError(
            kind="cpu",
            limit="cpu_s",
            message=f"the code used more than cpu_s={limits.cpu_s:g} s of CPU time and was "
            f"killed ({sig.name})",
        )
    return SandboxError(kind="crash", message=f"the process was killed by {sig.name}")


def _capture(sock: socket.socket, limit: int) -> OutputCapture:
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    return OutputCapture(lambda: loop.sock_recv(sock, 1 << 16), limit)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _report(on_progress: ProgressHandler, message: dict[str, Any]) -> None:
    """Pass a ``progress`` frame on if its fields are what ``report_progress`` sends."""
    progress, total, text = message.get("progress"), message.get("total"), message.get("message")
    number = (int, float)
    if not isinstance(progress, number) or isinstance(progress, bool):
        return
    if total is not None and (not isinstance(total, number) or isinstance(total, bool)):
        return
    if text is not None and not isinstance(text, str):
        return
    on_progress(progress, total, text)


def _write_frame(writer: asyncio.StreamWriter, message: Any) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    writer.write(_FRAME.pack(len(data)) + data)


class _TooLarge(Exception):
    """The code sent more than a ``max_message*_bytes`` limit allows (never read)."""

    def __init__(self, limit: str, size: int, allowed: int) -> None:
        super().__init__(
            f"the code sent a message of {size:,} bytes to the host, over {limit}="
            f"{allowed:,}; return less (write a file, or summarise)"
        )
        self.limit = limit


async def _converse(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    on_call: CallHandler | None,
    on_progress: ProgressHandler | None,
    calls: list[dict[str, Any]],
    limits: SandboxLimits,
) -> dict[str, Any] | None:
    """Serve the child's tool calls and reports until its ``done`` frame.

    None: it ended first, or sent a frame that is not one of the protocol's (the
    child runs a stranger's code: a malformed frame ends the conversation, it never
    raises here).

    Raises:
        _TooLarge: a frame's announced size, or the run's total, is over its limit;
            the frame is not read (the host's memory stays bounded).
    """
    received = 0
    while True:
        try:
            header = await reader.readexactly(_FRAME.size)
            (size,) = _FRAME.unpack(header)
            received += size
            if size > limits.max_message_bytes:
                raise _TooLarge("max_message_bytes", size, limits.max_message_bytes)
            if received > limits.max_messages_bytes:
                raise _TooLarge("max_messages_bytes", received, limits.max_messages_bytes)
            message = json.loads(await reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            return None
        if not isinstance(message, dict):
            return None
        op = message.get("op")
        if op == "done":
            return message
        if op == "progress":
            if on_progress is not None:
                _report(on_progress, message)
            continue
        name, arguments = message.get("name"), message.get("arguments")
        if op != "call" or not isinstance(name, str) or not isinstance(arguments, dict):
            return None
        result: dict[str, Any]
        if on_call is None:
            result = {"status": "error", "error": {"type": "denied", "message": "no tools"}}
        else:
            result = await on_call(name, arguments)
        error: dict[str, Any] = result.get("error") or {}
        calls.append(
            {
                "name": name,
                "arguments": arguments,
                "status": result.get("status"),
                "error_type": error.get("type"),
                "source_id": result.get("source_id"),
                "as_of": result.get("as_of"),
            }
        )
        _write_frame(writer, {"op": "reply", "result": result})
        await writer.drain()
