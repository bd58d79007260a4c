"""What a module's code runs beside in the sandbox: its files, its HTTP relayed, its acts watched.

Imported only inside the sandbox (``_validate.py`` and ``_call.py`` run there, the
fork server preloads this file), never by the server's own code paths. ``unpack``
does everything a sandboxed run of a module's code needs before the module is
imported, the same for a validation and for every call, so that code cannot tell
the two apart:

- its files are written to ``./module`` in the run's private scratch directory;
- httpx's transports are replaced by one that relays each request to the host
  (``tools.http``), which sends it only to a host the manifest declares;
- an audit hook (PEP 578) refuses, and records, what a module may not do: writing
  outside its folder, reading the server's data or configuration, any socket, running
  programs, native code, signals. The sandbox (its own user, namespaces, no network)
  is the boundary; the hook names what the code tried, so a validation can fail it.
"""

from __future__ import annotations

import base64
import os
import socket
import sys
import traceback
from typing import Any

import httpx

__all__ = ["Unpacked", "unpack"]

_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_RUNS = ("subprocess.", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork", "pty.")
_CHANGES = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
            "os.symlink", "os.link", "os.truncate", "os.utime", "shutil.rmtree",
            "shutil.copyfile", "shutil.move"}  # fmt: skip


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Unpacked:
    """A module's files on disk in the sandbox, and what its code was refused.

    Args:
        root: The module's folder (``./module``, resolved).
        refused: What the audit hook refused so far, each with the reason.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.refused: list[str] = []

    def short(self, exc: BaseException) -> str:
        """The exception and the module's own frames of its traceback (the last three)."""
        frames = [
            f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, self.root)
        ]
        lines = [
            f"  {f.filename.removeprefix(self.root + '/')}:{f.lineno}: {f.line}" for f in frames
        ]
        return "\n".join([f"{type(exc).__name__}: {exc}", *lines[-3:]])


def unpack(files: dict[str, str], private: list[str], tools: Any) -> Unpacked:
    """Write ``files`` under ``./module``, relay httpx through ``tools``, watch the code.

    Args:
        files: Relative path → text of the module's files.
        private: Folders the code may not read (the server's data and configuration).
        tools: The sandbox's channel to the host (``tools.http(...)``).

    Returns:
        The unpacked module; its ``refused`` grows as the audit hook refuses things.
    """
    sys.dont_write_bytecode = True  # `python -I` ignores PYTHONDONTWRITEBYTECODE
    unpacked = Unpacked(os.path.realpath(os.path.join(os.getcwd(), "module")))
    for relative, text in files.items():
        path = os.path.join(unpacked.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    relay = _relay_through(tools, unpacked.refused)
    for module in (httpx, sys.modules["httpx._client"]):
        setattr(module, "HTTPTransport", relay[0])  # noqa: B010 - wherever httpx reads it
        setattr(module, "AsyncHTTPTransport", relay[1])  # noqa: B010
    socket.setdefaulttimeout(10)
    closed = [p for p in map(os.path.realpath, private) if not _inside(unpacked.root, p)]
    sys.addaudithook(_hook(unpacked, closed))
    return unpacked


def _hook(unpacked: Unpacked, closed: list[str]) -> Any:
    """The audit hook: refuse (and record) what a module may not do."""
    folder = unpacked.root

    def refuse(what: str, why: str) -> None:
        unpacked.refused.append(f"{what}: {why}")
        raise PermissionError(f"module refused {what}: {why}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, str | bytes):
                return
            path = os.path.realpath(os.fsdecode(path))
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(
                mode is None and flags and flags & _WRITES
            )
            if writing and not _inside(path, folder) and path != os.devnull:
                refuse(f"writing {path}", "a module writes only inside its own folder")
            for secret in closed:
                if _inside(path, secret):
                    refuse(f"reading {path}", "the server's data and configuration (the "
                           "credential store included) are not a module's to read")  # fmt: skip
        elif event in _CHANGES:
            path = args[0] if args else None
            if isinstance(path, str | bytes) and not _inside(
                os.path.realpath(os.fsdecode(path)), folder
            ):
                refuse(f"{event} {os.fsdecode(path)}", "a module changes only its own folder")
        elif event in ("socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo"):
            target = args[:2] if event == "socket.getaddrinfo" else args[1]
            refuse(f"a socket to {target!r}", "a module reaches the network only through "
                   "httpx, and only the hosts its module.toml declares")  # fmt: skip
        elif event.startswith(_RUNS):
            refuse(f"running a program ({event})", "a module runs no programs")
        elif event.startswith("ctypes."):
            refuse(f"native code ({event})", "native code escapes every check")
        elif event in ("os.kill", "os.killpg", "signal.pthread_kill", "sys.addaudithook"):
            refuse(event, "the sandbox owns processes, signals and audit hooks")

    return hook


def _relay_through(tools: Any, refused: list[str]) -> tuple[type, type]:
    """The httpx transports (sync, async) that send each request through the host."""

    def relay(request: httpx.Request) -> httpx.Response:
        try:
            reply = tools.http(
                method=request.method,
                url=str(request.url),
                headers=[[k, v] for k, v in request.headers.multi_items()],
                body=base64.b64encode(request.content).decode(),
            )
        except Exception as exc:  # ToolCallError: refused or failed; the message says why
            message = getattr(exc, "message", str(exc))
            if getattr(exc, "type", "") == "denied":
                refused.append(f"HTTP to {request.url.host}: {message}")
            raise httpx.ConnectError(message, request=request) from None
        return httpx.Response(
            reply["status_code"],
            headers=reply["headers"],
            content=base64.b64decode(reply["body"]),
            request=request,
        )

    class Relay(httpx.BaseTransport):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            request.read()
            return relay(request)

    class AsyncRelay(httpx.AsyncBaseTransport):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            await request.aread()
            return relay(request)

    return Relay, AsyncRelay
