"""Sandboxed code cannot reach the server, other calls, or outlive its call (issue 18).

Each attack of the issue is run for real against the fork server, as the default
unprivileged user and, where the namespaces alone must hold, as root (``user =
"root"``, a trusted setup). This test process plays the server: its environment holds
a secret and its pid is handed to the code.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deadlines import scaled
from tooldeck.packs.builtin import PythonTool, Roots, make_sandbox
from tooldeck.packs.builtin.config import PythonConfig

from .test_python import assert_gone

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.geteuid() != 0, reason="the isolation defaults apply to a root server"),
]

SECRET = "sk-live-issue18-canary"


@pytest.fixture(params=["default", "root"])
async def python(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[PythonTool]:
    user = None if request.param == "default" else "root"
    config = PythonConfig(timeout_s=10, cpu_s=5, user=user, preload=["os", "subprocess"])
    os.environ["TOOLDECK_CANARY_KEY"] = SECRET
    sandbox = make_sandbox(config, {"PATH": os.environ["PATH"]})
    tool = PythonTool(config, Roots([tmp_path]), sandbox)
    yield tool
    await sandbox.aclose()
    os.environ.pop("TOOLDECK_CANARY_KEY", None)


async def run(python: PythonTool, code: str, **context: object) -> object:
    result = await python.execute({"code": code, "context": context})
    assert result.success, result.error
    return result.data["result"]


async def test_runs_as_nobody_by_default_in_namespaces(python: PythonTool) -> None:
    uid = await run(python, "result = os.getuid()")
    expected = 0 if python.sandbox.identity is None else 65534
    assert uid == expected
    assert python.sandbox.namespaces
    assert "namespaces" in python.sandbox.boundary
    # a standard-library module that is not preloaded still imports as that user
    assert await run(python, "import xml.dom.minidom, email.parser\nresult = 'ok'") == "ok"


async def test_server_environ_and_proc_are_out_of_reach(python: PythonTool) -> None:
    code = (
        "import glob\nfound = []\n"
        "for path in [f'/proc/{server}/environ', *glob.glob('/proc/*/environ')]:\n"
        "    try:\n        found.append(open(path, 'rb').read().decode(errors='replace'))\n"
        "    except OSError:\n        pass\n"
        "result = {'leak': any(secret in text for text in found), 'pids': sorted("
        "int(p) for p in os.listdir('/proc') if p.isdigit())}"
    )
    seen = await run(python, code, server=os.getpid(), secret=SECRET)
    assert seen["leak"] is False
    assert seen["pids"] == [1]  # the job is the first and only process of its namespace


async def test_code_cannot_kill_or_stop_the_server_or_its_fork_server(python: PythonTool) -> None:
    code = (
        "import signal\nerrors = []\n"
        "for pid, sig in [(server, signal.SIGKILL), (os.getppid(), signal.SIGSTOP), (-1, signal.SIGKILL)]:\n"
        "    try:\n        os.kill(pid, sig)\n    except OSError as exc:\n"
        "        errors.append(type(exc).__name__)\nresult = errors"
    )
    await python.execute({"code": code, "context": {"server": os.getpid()}})
    assert await run(python, "result = 'still serving'") == "still serving"


async def test_processes_started_in_any_way_die_with_the_call(python: PythonTool) -> None:
    code = (
        "import subprocess\n"
        "subprocess.Popen(['sleep', '61.1818'], start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.execvp('sleep', ['sleep', '61.1818'])\n"
        "    os._exit(0)\n"
        "result = 'spawned'"
    )
    assert await run(python, code) == "spawned"
    assert_gone("61.1818")


async def test_calls_cannot_see_each_others_files_or_processes(python: PythonTool) -> None:
    writer = (
        "import time\nopen('secret.txt', 'w').write('mine')\n"
        "open('/tmp/shared.txt', 'w').write('mine')\ntime.sleep(1.5)\nresult = os.getcwd()"
    )
    spy = (
        "import glob, signal, time\ntime.sleep(0.5)\n"
        "files = glob.glob('/tmp/**/*.txt', recursive=True) + glob.glob('/dev/shm/*')\n"
        "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    if pid != os.getpid():\n"
        "        try:\n            os.kill(pid, signal.SIGKILL)\n"
        "        except OSError:\n            pass\n"
        "result = files"
    )
    first, second = await asyncio.gather(
        python.execute({"code": writer}), python.execute({"code": spy})
    )
    assert first.success, first.error  # the spy's kills did not reach it
    assert second.success, second.error
    assert second.data["result"] == []


async def test_no_network_by_default(python: PythonTool) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = (
            "import socket\ntry:\n"
            "    socket.create_connection(('127.0.0.1', port), timeout=2)\n"
            "    result = 'connected'\n"
            "except OSError as exc:\n    result = type(exc).__name__"
        )
        assert await run(python, code, port=port) != "connected"


async def test_closed_directories_stay_closed(python: PythonTool, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "key.txt").write_text(SECRET)
    code = (
        "try:\n    result = open(path).read()\n"
        "except OSError as exc:\n    result = type(exc).__name__"
    )
    assert await run(python, code, path=str(private / "key.txt")) != SECRET


async def test_a_stopped_or_killed_fork_server_is_replaced_within_a_second(
    python: PythonTool,
) -> None:
    assert await run(python, "result = 1") == 1
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        server = python.sandbox._server
        assert server is not None
        os.kill(server.process.pid, sig)
        await asyncio.sleep(1.0)
        started = time.perf_counter()
        assert await run(python, "result = 2") == 2
        assert time.perf_counter() - started < scaled(1.0)  # replaced, not after a timeout
        assert python.sandbox._server is not server
