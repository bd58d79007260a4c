"""The sandbox fork server: run by path in its own interpreter, imports nothing of tooldeck.

``python -I _sandbox_server.py FD CONFIG_JSON``. It imports the modules named in the
config once, then waits on the ``SOCK_SEQPACKET`` socket ``FD`` for requests from the
host (``sandbox.Sandbox``). Each request brings three sockets (control, stdout,
stderr) and goes to a process prepared ahead of time (``_fork_spare``: forked, in its
own session and, where the kernel allows, the first process of its own PID namespace,
with its own mount, IPC and network namespaces); it switches to the job's user, runs
one job in a fresh Python namespace and exits. The server keeps ``spares`` such
processes (config, default 4), so that parallel calls (a model's parallel tool calls)
find them ready. Preparing one costs CPU (a fork, namespaces, mounts), so replacements
are prepared once no job has run for ``_QUIET_S``, except the one kept ready for the
next call when the last was taken.

Messages to the host (JSON, one per packet): ``{"op": "ready", "preloaded": [...]}``,
``{"op": "started", "id": N, "pid": P}``, ``{"op": "exit", "id": N, "status": S}``
(``S`` is the raw ``waitpid`` status).

The child speaks length-prefixed JSON frames (4-byte big-endian length) on its control
socket: it reads the job ``{"code", "context", "tools"}``, may send
``{"op": "call", "name", "arguments"}`` and read ``{"op": "reply", "result"}`` (code
mode), may send ``{"op": "progress", "progress", "total", "message"}`` (the code's
``report_progress``), and ends with ``{"op": "done", ...}`` before ``os._exit``.
"""

# This file runs in a bare interpreter: the standard library only, Python 3.11+.

import base64
import collections
import contextlib
import ctypes
import datetime as _dt
import gc
import importlib
import io
import json
import linecache
import math as _math
import os
import resource
import selectors
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

CODE_FILE = "<code>"
_FRAME = struct.Struct(">I")
_ALIASES = {"pandas": "pd", "numpy": "np", "matplotlib.pyplot": "plt"}
_TYPING = ("Any", "Dict", "List", "Optional")


# -- frames -------------------------------------------------------------------------------


def _send(sock: socket.socket, message: Any) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(_FRAME.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("the host closed the control socket")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket) -> Any:
    (size,) = _FRAME.unpack(_recv_exact(sock, _FRAME.size))
    return json.loads(_recv_exact(sock, size))


# -- isolation ----------------------------------------------------------------------------
# Linux namespaces through libc (os.unshare is Python 3.12+): each job gets its own PID
# namespace (it sees only its own processes, and all of them die with it), mount
# namespace (a private /tmp and /dev/shm, a fresh /proc, directories the job may not
# read hidden), IPC namespace and, unless the config allows the network, network
# namespace (no interface but a down loopback: the server cannot be reached).
#
# The job is the first process of its PID namespace, forked straight from the server
# (``_fork_spare``): one fork of the server's large address space per job (a fork and
# its exit cost ~5 ms of CPU with pandas loaded; three per job, a relay outside and a
# first process inside, made calls that follow each other wait). The kernel shields a
# namespace's first process from signals it has no handler for, but not from SIGKILL
# sent by the kernel or from outside: the host's kill, ``RLIMIT_CPU``'s hard limit
# (``_apply_limits`` sets the soft limit to it) and faults (SIGSEGV) still end it.

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x00020000, 0x08000000, 0x20000000, 0x40000000,
)  # fmt: skip
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _unshare(network: bool) -> None:
    """New mount and IPC namespaces (and network, unless allowed) for the calling process."""
    flags = _CLONE_NEWNS | _CLONE_NEWIPC | (0 if network else _CLONE_NEWNET)
    _check(_libc.unshare(flags), "unshare")


def _fork_first(pid_ns: int | None) -> tuple[int, bool]:
    """``os.fork``, the child the first process of a new PID namespace when ``pid_ns``.

    ``pid_ns`` is a descriptor of the server's own PID namespace: the server makes its
    next child's namespace (``unshare(CLONE_NEWPID)`` concerns children only), forks,
    and sets its children's namespace back to its own.

    Returns:
        ``(pid, isolated)``: ``os.fork``'s pid, and whether the child is in a PID
        namespace of its own (False when none was asked, or the kernel refused one).

    Raises:
        OSError: the server's children's namespace could not be set back (every later
            child would share one namespace): the server must stop.
    """
    isolated = pid_ns is not None and _libc.unshare(_CLONE_NEWPID) == 0
    pid = -1
    try:
        pid = os.fork()
    finally:
        if isolated and pid != 0:  # in the server (also when the fork failed), not the child
            _check(_libc.setns(pid_ns, _CLONE_NEWPID), "setns")
    return pid, isolated


def _traversable(path: str) -> bool:
    """Whether any user may pass through ``path`` (the ``x`` bit for others)."""
    try:
        return bool(os.stat(path).st_mode & 0o001)
    except OSError:
        return False


def _world_writable(depth: int = 3) -> list[str]:
    """Directories every user may write, down to ``depth`` levels below ``/``.

    ``/tmp``, ``/var/tmp``, ``/run/lock``, ``/dev/shm``, ``/dev/mqueue``...: each is
    covered by an empty tmpfs in a job's namespace, so nothing a job writes there
    reaches the host or the next job. Found once, when the server starts (a few
    thousand ``stat`` calls); ``/proc`` and ``/sys`` are not walked.
    """
    found: list[str] = ["/tmp"]
    level = ["/"]
    for _ in range(depth):
        below: list[str] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                path = entry.path
                if path in ("/proc", "/sys") or not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    writable = entry.stat(follow_symlinks=False).st_mode & 0o002
                except OSError:
                    continue
                if writable:
                    if path not in found:
                        found.append(path)
                else:
                    below.append(path)
        level = below
    return found


def _cover_of(path: str, shared: list[str]) -> str | None:
    """The directory to cover so that ``path`` can be bound back reachable, or None.

    That is the world-writable directory (``shared``, always covered) it is under,
    else the highest ancestor of ``path`` that others cannot pass; None when every
    ancestor is passable.
    """
    for folder in shared:
        if path.startswith(folder + "/"):
            return folder
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        ancestor = "/" + "/".join(parts[:depth])
        if not _traversable(ancestor):
            return ancestor
    return None


def _private_mounts(exposed: list[str], shared: list[str]) -> None:
    """Mounts of a job's namespace: fresh /proc, every ``shared`` folder private, ``exposed``.

    Each world-writable folder (``shared``: /tmp, /var/tmp, /dev/shm...) is covered by
    an empty tmpfs of its own. Each ``exposed`` path (Python's installation, the
    tools' roots) stays reachable for the job's user even where an ancestor is closed
    to others (``/root``) or covered (``/tmp``): that ancestor is covered by an empty
    tmpfs into which only the exposed path is bound back, so its siblings (a home
    directory's secrets) are out of sight.
    """
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE, None)
    covers: dict[str, list[tuple[str, int]]] = {folder: [] for folder in shared}
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in exposed if p and os.path.isdir(p)}):
        if any(path.startswith(k + "/") for k in kept):
            continue  # inside a path already kept
        kept.append(path)
        cover = _cover_of(path, shared)
        if cover is not None:  # opened now: the cover will hide it
            covers.setdefault(cover, []).append((path, os.open(path, os.O_PATH)))
    for cover in sorted(covers, key=len):
        mode = "1777" if cover in shared else "0755"
        size = "256m" if cover == "/tmp" else "64m"
        try:
            _mount("tmpfs", cover, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode={mode},size={size}")
        except OSError:
            if covers[cover] or cover == "/tmp":
                raise  # what must be private or bound back: the job cannot run without it
            continue  # one odd mount (a read-only bind) does not cost every other cover
        for path, fd in covers[cover]:
            os.makedirs(path, mode=0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
            os.close(fd)
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV, None)


def _exposed(config: dict[str, Any]) -> list[str]:
    """What every job must reach: Python's installation, its import path, the roots."""
    return [sys.base_prefix, sys.prefix, *sys.path, *config.get("exposed", [])]


def _enter_namespaces(config: dict[str, Any]) -> int | None:
    """Enter the job's other namespaces and mounts (in the first process of its PID one).

    When the job ends, or the host kills it, the kernel kills every process left in
    its PID namespace.

    Returns:
        How many processes the job's user owned outside, counted before the new
        ``/proc`` hides them (for ``RLIMIT_NPROC``); None without a user to switch to.
    """
    identity = config.get("identity")
    owned = _owned_processes(identity["uid"]) if identity else None
    _unshare(config.get("network", False))
    _private_mounts(_exposed(config), config["shared"])
    return owned


def _probe(config: dict[str, Any], pid_ns: int) -> str | None:
    """Why namespaces cannot be used here (None: they can); tried in a throwaway child."""
    pid, isolated = _fork_first(pid_ns)
    if pid == 0:
        code = 1
        with contextlib.suppress(BaseException):
            if isolated:
                _unshare(config.get("network", False))
                code = 2
                _private_mounts(_exposed(config), config["shared"])
                code = 0
        os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return {
        0: None,
        1: "unshare() was refused (no CAP_SYS_ADMIN and no user namespaces)",
        2: "mounting in the new namespace was refused",
    }.get(code, f"probe exited {code}")


def _owned_processes(uid: int) -> int:
    owned = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                owned += entry.stat().st_uid == uid
    return owned


# -- the child ----------------------------------------------------------------------------


class ToolCallError(Exception):
    """A tool called from a script returned an error (``type`` and ``message`` kept)."""

    def __init__(self, name: str, type: str, message: str) -> None:
        super().__init__(f"{name} failed ({type}): {message}")
        self.tool = name
        self.type = type
        self.message = message


class Tools:
    """``tools.<name>(**arguments)`` calls a tool through the host's provider stack."""

    def __init__(self, sock: socket.socket, names: list[str]) -> None:
        self._sock = sock
        self._names = list(names)

    def __dir__(self) -> list[str]:
        return [*self._names, "call"]

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)

        def call(**arguments: Any) -> Any:
            return self.call(name, arguments)

        call.__name__ = name
        return call

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call the tool ``name`` with ``arguments``; returns its data or raises ToolCallError."""
        _send(self._sock, {"op": "call", "name": name, "arguments": arguments or {}})
        reply = _recv(self._sock)
        result = reply.get("result") or {}
        if result.get("status") == "success":
            return result.get("data") if result.get("data") is not None else result.get("output")
        error = result.get("error") or {}
        raise ToolCallError(name, error.get("type", "execution"), error.get("message", ""))


def _progress_reporter(sock: socket.socket) -> Callable[..., None]:
    def report_progress(
        progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell whoever follows this run how far it is: ``report_progress(3, 10, "file 3")``."""
        try:
            frame = {
                "op": "progress",
                "progress": float(progress),
                "total": None if total is None else float(total),
                "message": None if message is None else str(message)[:500],
            }
            _send(sock, frame)
        except (OSError, TypeError, ValueError, OverflowError):
            pass  # a report never fails the code

    return report_progress


def _apply_limits(limits: dict[str, Any], address_space: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    file_mb = limits.get("max_file_mb")
    if file_mb:
        # a write past it fails with EFBIG ("File too large") instead of a SIGXFSZ kill
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        size = file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    cpu = limits.get("cpu_s")
    if cpu:  # soft = hard: SIGKILL, which reaches a namespace's first process (SIGXCPU not)
        seconds = max(1, _math.ceil(cpu))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    memory = limits.get("memory_mb")
    if memory:
        # The limit is on address space; the child starts with the server's mappings
        # (the preloaded modules, ``address_space``), so it gets ``memory_mb`` on top.
        ceiling = address_space + memory * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    processes = limits.get("max_processes")
    if processes and os.getuid() != 0:  # the kernel never applies RLIMIT_NPROC to root
        owned = limits.get("owned_processes")
        if owned is None:
            owned = _owned_processes(os.getuid())
        resource.setrlimit(resource.RLIMIT_NPROC, (owned + processes, owned + processes))


def _jsonable(value: Any, warnings: list[str]) -> str:
    """``value`` as JSON text; common non-JSON types converted, others named in an error."""

    def convert(obj: Any) -> Any:
        if isinstance(obj, (set, frozenset, tuple)):
            return list(obj)
        if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
            return obj.isoformat()
        module = type(obj).__module__.split(".")[0]
        if module == "numpy":
            return obj.tolist() if hasattr(obj, "tolist") else obj.item()
        if module == "pandas":
            if hasattr(obj, "to_dict") and hasattr(obj, "columns"):
                return json.loads(obj.to_json(orient="records", date_format="iso"))
            if hasattr(obj, "to_json"):
                return json.loads(obj.to_json(date_format="iso"))
            if hasattr(obj, "isoformat"):
                return obj.isoformat()
        raise TypeError(
            f"result contains a {type(obj).__module__}.{type(obj).__qualname__} "
            f"({_short(obj)}), which is not JSON-able; convert it to str, a number, "
            "a list or a dict"
        )

    try:
        return json.dumps(value, default=convert, allow_nan=False)
    except ValueError:
        warnings.append("result held NaN or infinite floats; they are sent as null")
        return json.dumps(_finite(json.loads(json.dumps(value, default=convert))))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not _math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _short(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def _user_traceback(exc: BaseException) -> str:
    """The traceback limited to the submitted code's frames (line numbers as submitted)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CODE_FILE]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def _figures() -> list[str]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    figures = []
    for number in pyplot.get_fignums()[:10]:
        buffer = io.BytesIO()
        pyplot.figure(number).savefig(buffer, format="png", dpi=100)
        figures.append(base64.b64encode(buffer.getvalue()).decode())
    pyplot.close("all")
    return figures


def _run_child(sock: socket.socket, preloaded: list[str]) -> None:
    job = _recv(sock)
    code = job["code"]
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    for name in preloaded:
        namespace[_ALIASES.get(name, name)] = sys.modules[name]
    typing = sys.modules["typing"]
    namespace.update({name: getattr(typing, name) for name in _TYPING})
    namespace["report_progress"] = _progress_reporter(sock)
    namespace.update(job.get("context") or {})
    if job.get("tools") is not None:
        namespace["tools"] = Tools(sock, job["tools"])
        namespace["ToolCallError"] = ToolCallError
    linecache.cache[CODE_FILE] = (len(code), None, code.splitlines(True), CODE_FILE)
    done: dict[str, Any] = {"op": "done", "error": None, "result": "null"}
    warnings: list[str] = []
    done["warnings"] = warnings
    try:
        compiled = compile(code, CODE_FILE, "exec")
        exec(compiled, namespace)
    except MemoryError:
        namespace.clear()  # free what the code holds, so the report can be built
        done["error"] = {"kind": "memory", "message": "MemoryError"}
    except SystemExit as exc:
        if exc.code not in (None, 0):
            done["error"] = {"kind": "exit", "message": f"the code called sys.exit({exc.code!r})"}
    except BaseException as exc:
        done["error"] = {
            "kind": "exception",
            "exception": type(exc).__name__,
            "message": "".join(traceback.format_exception_only(type(exc), exc)).strip(),
            "traceback": _user_traceback(exc),
        }
    if done["error"] is None:
        try:
            done["result"] = _jsonable(namespace.get("result"), warnings)
        except (TypeError, ValueError) as exc:
            done["error"] = {"kind": "result", "message": str(exc)}
        except MemoryError:
            done["error"] = {"kind": "memory", "message": "MemoryError"}
    try:
        done["figures"] = _figures()
    except Exception as exc:  # a broken figure must not lose the result
        warnings.append(f"could not render figures: {type(exc).__name__}: {exc}")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # EOF for the host now, not at exit
    os.dup2(1, 2)
    _send(sock, done)


def _prepare(config: dict[str, Any]) -> tuple[str | None, int]:
    """What every job needs, done while the process waits for one (off the call's time).

    Standard streams on fds 0-2 (a job's sockets are put on 1 and 2 when it comes)
    and, with namespaces, a scratch directory in the namespace's own ``/tmp`` for the
    job's user: ~0.6 ms a call paid before the code could start. The process stays
    root until its job comes (``_child``), so waiting processes do not count against
    the job user's ``RLIMIT_NPROC``.

    Returns:
        ``(the scratch directory or None, the address space in bytes)``: the memory
        limit is counted on top of the latter (the preloaded modules).
    """
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(
            os.fdopen(fd, "wb", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        )
        setattr(sys, name, stream)
    scratch = None
    if config.get("namespaces"):  # a private /tmp: unused, it goes with the namespace
        scratch = tempfile.mkdtemp(prefix="tooldeck-python-", dir="/tmp")
        identity = config.get("identity")
        if identity:
            os.chown(scratch, identity["uid"], identity["gid"])
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    return scratch, size


class _Unprepared(Exception):
    """``_prepare`` failed in this process; the job ends with code 70."""


def _child(
    fds: list[int],
    limits: dict[str, Any],
    preloaded: list[str],
    config: dict[str, Any],
    prepared: tuple[str | None, int] | str,
) -> NoReturn:
    """Run one job in a process ``_prepare`` readied: its user, cwd, limits, the code.

    ``prepared`` is what ``_prepare`` returned, or the traceback of its failure (then
    written to the job's stderr). Never returns.
    """
    control, out, err = fds
    identity = config.get("identity")
    try:
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        if isinstance(prepared, str):
            sys.stderr.write(prepared)
            raise _Unprepared
        scratch, address_space = prepared
        if identity:
            os.setgroups([])
            os.setgid(identity["gid"])
            os.setuid(identity["uid"])
        _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary gives root back
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # cleared by setuid
        cwd = limits.get("cwd")
        if not cwd:  # a private scratch directory (in the namespace's own /tmp)
            cwd = scratch or tempfile.mkdtemp(prefix="tooldeck-python-")
            os.environ["TMPDIR"] = os.environ["HOME"] = cwd
        try:
            os.chdir(cwd)
        except OSError as exc:
            raise OSError(
                f"cwd {cwd} is not reachable in the sandbox ({exc.strerror}); it must be "
                "inside the sandbox's exposed paths (the tools' roots)"
            ) from None
        _apply_limits(limits, address_space)
        sock = socket.socket(fileno=control)
        gc.enable()
        _run_child(sock, preloaded)
        code = 0
    except _Unprepared:  # its traceback is on stderr already
        code = 70
    except BaseException:
        traceback.print_exc()
        code = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


# -- the server ---------------------------------------------------------------------------


def _preload(names: list[str]) -> list[str]:
    loaded = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            continue
        if name == "matplotlib":
            sys.modules["matplotlib"].use("Agg")
        loaded.append(name)
    return loaded


def main() -> None:
    host = socket.socket(fileno=int(sys.argv[1]))
    config = json.loads(sys.argv[2])
    # the server dies with the host, kill -9 included (its jobs die with it: theirs too)
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if config.get("host_pid") is not None and os.getppid() != config["host_pid"]:
        os._exit(0)  # the host died before the line above
    importlib.import_module("typing")
    preloaded = _preload(config.get("preload", []))
    isolation = None
    pid_ns: int | None = None
    if config.get("namespaces"):
        config["shared"] = _world_writable()
        pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        isolation = _probe(config, pid_ns)
        config["namespaces"] = isolation is None
        if isolation is not None:
            os.close(pid_ns)
            pid_ns = None
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.collect()
    gc.freeze()  # forked children share these pages instead of copying them on first GC
    gc.disable()
    _huge_pages()
    inherited = (host, wake_r, wake_w)
    spares: collections.deque[tuple[int, socket.socket]] = collections.deque()
    wanted = max(1, int(config.get("spares", 2)))

    while len(spares) < wanted:
        spares.append(_fork_spare(inherited, preloaded, config, pid_ns))
    jobs: dict[int, int] = {}
    due: float | None = None  # when to prepare the next missing spare
    ready = {"op": "ready", "preloaded": preloaded, "pid": os.getpid()}
    ready["namespaces"], ready["namespace_error"] = config.get("namespaces", False), isolation
    host.send(json.dumps(ready).encode())
    selector = selectors.DefaultSelector()
    selector.register(host, selectors.EVENT_READ, "host")
    selector.register(wake_r, selectors.EVENT_READ, "wake")
    try:
        while True:
            events = selector.select(None if due is None else max(0.0, due - time.monotonic()))
            if not events and due is not None:  # quiet: prepare one, then look again
                due = None
                if not jobs and len(spares) < wanted:
                    spares.append(_fork_spare(inherited, preloaded, config, pid_ns))
                    due = time.monotonic() if len(spares) < wanted else None
            for key, _ in events:
                if key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        wake_r.recv(4096)
                    _reap(host, jobs)
                    if not jobs and len(spares) < wanted:
                        due = time.monotonic() + _QUIET_S
                    continue
                message, fds, _, _ = socket.recv_fds(host, 1 << 16, 3)
                if not message:
                    return
                request = json.loads(message)
                for _attempt in range(2):  # a spare that died before its job is replaced
                    if not spares:
                        spares.append(_fork_spare(inherited, preloaded, config, pid_ns))
                    pid, sock = spares.popleft()
                    try:
                        socket.send_fds(sock, [message], fds)
                    except OSError:
                        continue
                    finally:
                        sock.close()
                    break
                for fd in fds:
                    os.close(fd)
                jobs[pid] = request["id"]
                host.send(json.dumps({"op": "started", "id": request["id"], "pid": pid}).encode())
                if not spares:  # keep one ready; the rest once the running jobs end
                    spares.append(_fork_spare(inherited, preloaded, config, pid_ns))
    finally:
        for pid in jobs:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)


_QUIET_S = 0.02
"""Missing spares are prepared one by one once no job has run for this long (seconds).

Preparing one costs CPU (a fork of the server, namespaces, mounts): done while calls
follow each other, it slows them (a sequence of calls uses the spares, and the one
kept ready when the last is taken); done once the calls pause, it costs them nothing.
"""


_HUGE_PAGE = 2 << 20
_MADV_COLLAPSE = 25  # Linux 6.1+


def _huge_pages() -> None:
    """Back the server's dense anonymous memory with huge pages, so forks copy less.

    A fork copies one page-table entry per 4 KiB page the server holds; for 2 MiB of
    a huge page, one. ``madvise(MADV_COLLAPSE)`` on each private, anonymous, writable
    mapping at least half resident (the heaps and the interpreter's arenas; not a
    thread's mostly untouched stack) took a fork of a server with pandas loaded from
    2.6 to 1.3 ms, 6.7 to 3.5 ms with the child's exit, for ~150 ms once at start and
    ~1 MB more resident. A child's first write to a huge page splits it back to 4 KiB
    pages in the child alone. Best effort: on an older kernel, or with transparent
    huge pages off, nothing changes.
    """
    _libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        with open("/proc/self/smaps") as smaps:
            lines = smaps.read().splitlines()
    except OSError:  # no /proc: nothing to collapse
        return
    mapping: tuple[int, int] | None = None
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            start, end = (int(x, 16) for x in fields[0].split("-"))
            anonymous = len(fields) == 5 or fields[5] == "[heap]"
            mapping = (start, end) if fields[1] == "rw-p" and anonymous else None
        elif mapping is not None and fields[0] == "Rss:":
            start, end = mapping
            low = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
            high = end & ~(_HUGE_PAGE - 1)
            if high - low >= _HUGE_PAGE and int(fields[1]) * 1024 * 2 >= end - start:
                _libc.madvise(low, high - low, _MADV_COLLAPSE)
            mapping = None


def _warm_up() -> None:
    """Touch what every job uses, so its copy-on-write page faults happen before the job."""
    gc.enable()
    namespace = {"__builtins__": __builtins__}
    exec(compile("result = [str(i) for i in range(100)]", CODE_FILE, "exec"), namespace)
    _jsonable(json.loads(json.dumps(namespace["result"])), [])
    with open(os.devnull, "wb") as null:
        io.TextIOWrapper(null, encoding="utf-8", line_buffering=True).write("warm")
    gc.collect()


def _fork_spare(
    inherited: tuple[socket.socket, ...],
    preloaded: list[str],
    config: dict[str, Any],
    pid_ns: int | None,
) -> tuple[int, socket.socket]:
    """Prepare the next request's process ahead of time, so a request pays no fork.

    The process is forked (the first of its own PID namespace when ``pid_ns``, the
    server's namespace, is given), in its own session and other namespaces, and
    warmed up. One that could not be isolated exits 70 and fails its job.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid, isolated = _fork_first(pid_ns)
    if pid:
        theirs.close()
        return pid, ours
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for sock in (*inherited, ours):
        sock.close()
    owned = None
    try:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.setsid()
        if pid_ns is not None:
            os.close(pid_ns)
            if not isolated:
                os._exit(70)
            owned = _enter_namespaces(config)
    except BaseException:
        os._exit(70)
    _warm_up()
    prepared: tuple[str | None, int] | str
    try:
        prepared = _prepare(config)
    except BaseException:  # told to the job that comes, on its stderr
        prepared = traceback.format_exc()
    message, fds, _, _ = socket.recv_fds(theirs, 1 << 16, 3)
    if not message:
        os._exit(0)
    theirs.close()
    limits = {**json.loads(message)["limits"], "owned_processes": owned}
    _child(fds, limits, preloaded, config, prepared)


def _reap(host: socket.socket, jobs: dict[int, int]) -> None:
    while jobs:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        job = jobs.pop(pid, None)
        if job is not None:
            host.send(json.dumps({"op": "exit", "id": job, "status": status}).encode())


if __name__ == "__main__":
    main()
