"""What a validation runs inside the sandbox (``validation.py`` sends this file's text).

Never imported by tooldeck itself: the sandbox executes it with these names bound:
``files`` (relative path → text of the module's files), ``module_id``, ``entry``,
``kind`` and ``category`` (the manifest's),
``private`` (folders a module may not read: the server's data and configuration) and
``tools`` (the host's channel; ``tools.http`` performs one HTTP request to a declared
host). It sets ``result = {"checks": [{name, passed, output}], "tools": [names]}``.

The checks, in order (a failed ``import`` or ``export`` stops the ones after it; ``tests``
and ``calls`` both run, so one report shows everything a repair needs):

- ``import``: the module's ``entry`` file loads and defines at least one tool (a context
  adapter module: at least one adapter of its ``category``, ``pack.adapters_in``).
- ``export``: each tool's definition exports to every wire format (OpenAI strict,
  OpenAI Responses, Anthropic, Gemini, MCP).
- ``tests``: every ``test*`` function in the module's ``test_*.py`` files passes.
- ``tool_calls``: each tool answers one call with its example arguments (the input
  schema's ``examples``, else each property's ``examples`` or ``default``).
- ``fetch`` (context adapters): each adapter's ``fetch()`` succeeds and
  ``normalize_for_tools`` shapes its records into JSON.
- ``behaviour``: nothing the code did was refused: an audit hook (PEP 578), installed
  before the module is imported, refuses writing outside the module's folder,
  reading the server's data or configuration, any socket connection (HTTP goes
  through httpx to the manifest's hosts, relayed by the host), running programs,
  native code and signals, and lists each refusal with the reason.
"""

import asyncio
import base64
import inspect
import json
import os
import pathlib
import socket
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from tooldeck.core.context import ToolContext
from tooldeck.exporters import FORMATS, export
from tooldeck.packs.modules.pack import adapters_in, load_version, version_package

_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_RUNS = ("subprocess.", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork", "pty.")
_CHANGES = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
            "os.symlink", "os.link", "os.truncate", "os.utime", "shutil.rmtree",
            "shutil.copyfile", "shutil.move"}  # fmt: skip
_given = globals()  # bound by the sandbox before this runs
files: dict[str, str] = _given["files"]
module_id: str = _given["module_id"]
entry: str = _given["entry"]
kind: str = _given["kind"]
category: str | None = _given["category"]
private: list[str] = _given["private"]
tools: Any = _given["tools"]
refused: list[str] = []


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _guard(folder: str, closed: list[str]) -> None:
    """The audit hook: refuse (and record) what a module may not do."""

    def refuse(what: str, why: str) -> None:
        refused.append(f"{what}: {why}")
        raise PermissionError(f"module validation refused {what}: {why}")

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

    sys.addaudithook(hook)


def _relay(request: httpx.Request) -> httpx.Response:
    """One request through the host, which checks the host against the manifest."""
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


class _Relay(httpx.BaseTransport):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        return _relay(request)


class _AsyncRelay(httpx.AsyncBaseTransport):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return _relay(request)


def _short(exc: BaseException) -> str:
    """The exception and the module's own frames of its traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, root)]
    lines = [f"  {f.filename.removeprefix(root + '/')}:{f.lineno}: {f.line}" for f in frames]
    return "\n".join([f"{type(exc).__name__}: {exc}", *lines[-3:]])


def _example(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments for one call from a JSON Schema's examples, or None with the reason."""
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], dict):
        return examples[0], None
    arguments: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop.get("examples"), list) and prop["examples"]:
            arguments[name] = prop["examples"][0]
        elif "default" in prop:
            arguments[name] = prop["default"]
        elif name in (schema.get("required") or []):
            return None, f"argument {name!r} has no example: give it Field(examples=[...])"
    return arguments, None


def _run(function: Callable[[], Any]) -> None:
    value = function()
    if inspect.iscoroutine(value):
        asyncio.run(value)


def _checks() -> Iterator[tuple[str, list[str]]]:
    loaded = load_version(module_id, pathlib.Path(root), entry, tools_required=kind == "tool")
    package = version_package(module_id, pathlib.Path(root))
    if kind == "context_adapter" and not loaded.errors:
        module = sys.modules[f"{package}.{entry.removesuffix('.py')}"]
        adapters.extend(adapters_in(module, category or ""))
    wanted = adapters if kind == "context_adapter" else loaded.tools
    if loaded.errors or not wanted:
        what = f"a context adapter of category {category!r}" if kind != "tool" else "tool"
        problems = [str(e) for e in loaded.errors] or [f"{entry} defines no {what}"]
        yield "import", problems
        return
    found.extend(loaded.tools)
    yield "import", []
    problems = []
    for tool in loaded.tools:
        for fmt in FORMATS:
            try:
                export([tool.definition], fmt)
            except Exception as exc:
                problems.append(f"{tool.definition.name} → {fmt}: {_short(exc)}")
    yield "export", problems
    if problems:
        return
    problems = []
    for relative in sorted(files):
        name = os.path.basename(relative)
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        dotted = f"{package}.{relative.removesuffix('.py').replace('/', '.')}"
        try:
            __import__(dotted)
        except Exception as exc:
            problems.append(f"{relative}: {_short(exc)}")
            continue
        tests = sys.modules[dotted]
        for attr, function in sorted(vars(tests).items()):
            if attr.startswith("test") and inspect.isfunction(function):
                try:
                    _run(function)
                except Exception as exc:
                    problems.append(f"{relative}::{attr}: {_short(exc)}")
    yield "tests", problems
    problems = []
    for tool in loaded.tools:
        definition = tool.definition
        arguments, why = _example(definition.input_schema)
        if arguments is None:
            problems.append(f"{definition.name}: {why}")
            continue
        outcome = asyncio.run(tool.execute(arguments, ToolContext(user="module-validation")))
        if outcome.status != "success":
            error = outcome.error
            assert error is not None
            problems.append(f"{definition.name}({arguments}): {error.type}: {error.message}")
    yield "tool_calls", problems
    if kind == "context_adapter":
        problems = []
        for adapter in adapters:
            fetched = asyncio.run(adapter.fetch())
            if not fetched.success:
                problems.append(f"{adapter.platform}: fetch failed: {fetched.error}")
                continue
            try:
                json.dumps(adapter.normalize_for_tools(fetched.data))
            except Exception as exc:
                problems.append(f"{adapter.platform}: normalize_for_tools: {_short(exc)}")
        yield "fetch", problems


sys.dont_write_bytecode = True  # `python -I` ignores PYTHONDONTWRITEBYTECODE; no .pyc anywhere
root = os.path.realpath(os.path.join(os.getcwd(), "module"))
for _relative, _text in files.items():
    _path = os.path.join(root, _relative)
    os.makedirs(os.path.dirname(_path), exist_ok=True)
    with open(_path, "w", encoding="utf-8") as _file:
        _file.write(_text)
for _module in (httpx, sys.modules["httpx._client"]):
    setattr(_module, "HTTPTransport", _Relay)  # noqa: B010 - the name, wherever httpx reads it
    setattr(_module, "AsyncHTTPTransport", _AsyncRelay)  # noqa: B010
socket.setdefaulttimeout(10)
_guard(root, [p for p in map(os.path.realpath, private) if not _inside(root, p)])
found: list[Any] = []
adapters: list[Any] = []
report: list[dict[str, Any]] = []
try:
    for _name, _problems in _checks():
        report.append({"name": _name, "passed": not _problems, "output": "\n".join(_problems)})
except Exception as _exc:  # a check itself broke: say so, keep what ran
    report.append({"name": "validation", "passed": False, "output": _short(_exc)})
report.append({"name": "behaviour", "passed": not refused, "output": "\n".join(refused)})
result = {"checks": report, "tools": [t.definition.name for t in found]}
