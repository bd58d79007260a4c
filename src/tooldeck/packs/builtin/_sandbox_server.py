"""The sandbox fork server: run by path in its own interpreter, imports nothing of tooldeck.

``python -I _sandbox_server.py FD CONFIG_JSON``. It imports the modules named in the
config once, then waits on the ``SOCK_SEQPACKET`` socket ``FD`` for requests from the
host (``sandbox.Sandbox``). Each request brings three sockets (control, stdout,
stderr); the server forks a child that runs one job in a fresh namespace and exits.

Messages to the host (JSON, one per packet): ``{"op": "ready", "preloaded": [...]}``,
``{"op": "started", "id": N, "pid": P}``, ``{"op": "exit", "id": N, "status": S}``
(``S`` is the raw ``waitpid`` status).

The child speaks length-prefixed JSON frames (4-byte big-endian length) on its control
socket: it reads the job ``{"code", "context", "tools"}``, may send
``{"op": "call", "name", "arguments"}`` and read ``{"op": "reply", "result"}`` (code
mode), and ends with ``{"op": "done", ...}`` before ``os._exit``.
"""

# This file runs in a bare interpreter: the standard library only, Python 3.11+.

import base64
import contextlib
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


def _apply_limits(limits: dict[str, Any]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = limits.get("cpu_s")
    if cpu:
        seconds = max(1, _math.ceil(cpu))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    memory = limits.get("memory_mb")
    if memory:
        # The limit is on address space; the child starts with the server's mappings
        # (the preloaded modules), so it gets ``memory_mb`` on top of them.
        with open("/proc/self/status") as status:
            current = next(
                int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:")
            )
        ceiling = current + memory * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    processes = limits.get("max_processes")
    uid = os.getuid()
    if processes and uid != 0:  # the kernel never applies RLIMIT_NPROC to root: skip the count
        owned = 0
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    owned += entry.stat().st_uid == uid
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


def _child(
    fds: list[int], limits: dict[str, Any], preloaded: list[str], identity: dict[str, int] | None
) -> NoReturn:
    control, out, err = fds
    try:
        os.setsid()
        os.dup2(out, 1)
        os.dup2(err, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd in (null, out, err):
            os.close(fd)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            stream = io.TextIOWrapper(
                os.fdopen(fd, "wb", closefd=False),
                encoding="utf-8",
                errors="backslashreplace",
                line_buffering=True,
            )
            setattr(sys, name, stream)
        if limits.get("cwd"):
            os.chdir(limits["cwd"])
        if identity:
            os.setgroups([])
            os.setgid(identity["gid"])
            os.setuid(identity["uid"])
        _apply_limits(limits)
        sock = socket.socket(fileno=control)
        gc.enable()
        _run_child(sock, preloaded)
        code = 0
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
    importlib.import_module("typing")
    preloaded = _preload(config.get("preload", []))
    identity = config.get("identity")
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.collect()
    gc.freeze()  # forked children share these pages instead of copying them on first GC
    gc.disable()
    inherited = (host, wake_r, wake_w)
    spare: tuple[int, socket.socket] | None = _fork_spare(inherited, preloaded, identity)
    jobs: dict[int, int] = {}
    host.send(json.dumps({"op": "ready", "preloaded": preloaded, "pid": os.getpid()}).encode())
    selector = selectors.DefaultSelector()
    selector.register(host, selectors.EVENT_READ, "host")
    selector.register(wake_r, selectors.EVENT_READ, "wake")
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        wake_r.recv(4096)
                    _reap(host, jobs)
                    if spare is None:  # fork the next child while nothing runs
                        spare = _fork_spare(inherited, preloaded, identity)
                    continue
                message, fds, _, _ = socket.recv_fds(host, 1 << 16, 3)
                if not message:
                    return
                request = json.loads(message)
                for _attempt in range(2):  # a spare that died before its job is replaced
                    if spare is None:
                        spare = _fork_spare(inherited, preloaded, identity)
                    pid, sock = spare
                    spare = None
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
    finally:
        for pid in jobs:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)


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
    inherited: tuple[socket.socket, ...], preloaded: list[str], identity: dict[str, int] | None
) -> tuple[int, socket.socket]:
    """Fork the child for the next request ahead of time, so a request pays no fork."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid:
        theirs.close()
        return pid, ours
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for sock in (*inherited, ours):
        sock.close()
    _warm_up()
    message, fds, _, _ = socket.recv_fds(theirs, 1 << 16, 3)
    if not message:
        os._exit(0)
    theirs.close()
    _child(fds, json.loads(message)["limits"], preloaded, identity)


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
