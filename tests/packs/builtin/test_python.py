"""``python``: real forked processes, real limits."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deadlines import scaled, wait_until
from tooldeck.packs.builtin import PythonTool, Roots, Sandbox, make_sandbox
from tooldeck.packs.builtin.config import PythonConfig

pytestmark = pytest.mark.anyio


@pytest.fixture
async def python(tmp_path: Path) -> AsyncIterator[PythonTool]:
    config = PythonConfig(timeout_s=5, cpu_s=3, memory_mb=256, max_output_bytes=2000,
                          preload=["json", "os", "subprocess"])  # fmt: skip
    tmp_path.chmod(0o755)  # a root the sandbox user (nobody) may enter
    sandbox = make_sandbox(
        config, {"PATH": os.environ["PATH"], "SECRET_TOKEN": "s3cret"}, roots=[tmp_path]
    )
    tool = PythonTool(config, Roots([tmp_path]), sandbox)
    yield tool
    await sandbox.aclose()


async def test_context_becomes_variables_and_result_comes_back(python: PythonTool) -> None:
    result = await python.execute({"code": "result = sum(x)", "context": {"x": [1, 2, 3]}})
    assert result.success, result.error
    assert result.data["result"] == 6


async def test_variables_do_not_persist_between_calls(python: PythonTool) -> None:
    assert (await python.execute({"code": "leak = 41\nresult = leak + 1"})).data["result"] == 42
    second = await python.execute({"code": "result = leak"})
    assert second.error is not None and second.error.type == "execution"
    assert "NameError: name 'leak' is not defined" in second.error.message


async def test_traceback_is_the_user_codes_own_with_its_line_numbers(python: PythonTool) -> None:
    code = "def f(n):\n    return 10 / n\n\nx = 1\nresult = f(0)\n"
    result = await python.execute({"code": code})
    assert result.error is not None
    trace = result.error.details["traceback"]
    assert 'File "<code>", line 5, in <module>' in trace
    assert 'File "<code>", line 2, in f' in trace
    assert "ZeroDivisionError: division by zero" in trace
    assert "_sandbox_server" not in trace and "tooldeck" not in trace


async def test_syntax_error_names_the_line(python: PythonTool) -> None:
    result = await python.execute({"code": "x = 1\nresult = (x +\n"})
    assert result.error is not None and "SyntaxError" in result.error.message
    assert "line 2" in result.error.details["traceback"]


async def test_infinite_loop_hits_the_wall_limit_and_the_next_call_works(
    python: PythonTool,
) -> None:
    start = time.perf_counter()
    result = await python.execute({"code": "while True:\n    pass", "timeout_s": 1})
    assert time.perf_counter() - start < scaled(3)
    assert result.error is not None and result.error.type == "timeout"
    assert result.error.details["limit"] == "timeout_s"
    assert (await python.execute({"code": "result = 'still up'"})).data["result"] == "still up"


async def test_a_timeout_over_the_maximum_is_lowered_and_says_so(python: PythonTool) -> None:
    quick = await python.execute({"code": "result = 1", "timeout_s": 90})
    assert quick.success
    assert "timeout_s 90 was lowered to 5 s" in quick.data["warnings"][0]
    slow = await python.execute({"code": "import time\ntime.sleep(30)", "timeout_s": 90})
    assert slow.error is not None and slow.error.type == "timeout"
    assert "lowered to 5 s, the configured maximum ([builtin.python] timeout_s)" in (
        slow.error.message
    )
    asked = await python.execute({"code": "result = 2", "timeout_s": 2})
    assert asked.data["warnings"] == []  # under the maximum: nothing to say


async def test_cpu_limit_is_named(tmp_path: Path) -> None:
    config = PythonConfig(timeout_s=10, cpu_s=1, preload=[])
    sandbox = make_sandbox(config, {"PATH": os.environ["PATH"]})
    try:
        result = await PythonTool(config, Roots([tmp_path]), sandbox).execute(
            {"code": "while True:\n    pass"}
        )
    finally:
        await sandbox.aclose()
    assert result.error is not None and result.error.type == "timeout"
    assert result.error.details["limit"] == "cpu_s"
    assert "cpu_s=1" in result.error.message


async def test_memory_bomb_hits_the_memory_limit(python: PythonTool) -> None:
    result = await python.execute({"code": "x = bytearray(10 ** 10)"})
    assert result.error is not None and result.error.type == "execution"
    assert result.error.details["limit"] == "memory_mb"
    assert "memory_mb=256" in result.error.message
    growing = await python.execute(
        {"code": "chunks = []\nwhile True:\n    chunks.append(b'x' * 10**7)"}
    )
    assert growing.error is not None and growing.error.details["limit"] == "memory_mb"


async def test_killing_the_parent_or_crashing_never_harms_the_caller(python: PythonTool) -> None:
    killer = await python.execute(
        {
            "code": "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\n"
            "except OSError as exc:\n    pass\nresult = 'done'"
        }
    )
    assert killer.data["result"] == "done"
    exited = await python.execute({"code": "import os\nos._exit(3)"})
    assert exited.error is not None and "exited with code 3" in exited.error.message
    crashed = await python.execute({"code": "import ctypes\nctypes.string_at(0)"})
    assert crashed.error is not None and "SIGSEGV" in crashed.error.message
    assert (await python.execute({"code": "result = 2 + 2"})).data["result"] == 4


async def test_output_is_cut_with_a_marker_and_stderr_is_kept(python: PythonTool) -> None:
    code = "import sys\nprint('a' * 5000)\nprint('oops', file=sys.stderr)\nresult = 1"
    result = await python.execute({"code": code})
    stdout = result.data["stdout"]
    assert stdout.startswith("a" * 2000)
    assert "more bytes cut: max_output_bytes=2000" in stdout
    assert result.data["stderr"] == "oops\n"


async def test_subprocess_output_is_captured_and_leftovers_are_killed(python: PythonTool) -> None:
    code = (
        "import subprocess\n"
        "print(subprocess.run(['echo', 'from child'], capture_output=True, text=True).stdout.strip())\n"
        "subprocess.run('echo direct', shell=True)\n"
        "subprocess.Popen(['sleep', '60.4242'])\n"
    )
    result = await python.execute({"code": code})
    assert result.success, result.error
    assert "from child" in result.data["stdout"] and "direct" in result.data["stdout"]
    assert_gone("60.4242")


def assert_gone(marker: str) -> None:
    """No live process has ``marker`` in its command line within 2.5 s."""
    for _ in range(50):
        alive = [
            entry.name
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and _live_with(entry, marker)
        ]
        if not alive:
            return
        time.sleep(0.05)
    pytest.fail(f"processes {alive} with {marker!r} outlived the call")


def _live_with(entry: Path, marker: str) -> bool:
    try:
        cmdline = (entry / "cmdline").read_bytes()
        state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return marker.encode() in cmdline and state != "Z"


async def test_non_json_results_are_reported_and_nan_is_flagged(python: PythonTool) -> None:
    odd = await python.execute({"code": "result = {'when': object()}"})
    assert odd.error is not None and "builtins.object" in odd.error.message
    assert "not JSON-able" in odd.error.message
    converted = await python.execute(
        {
            "code": "import datetime\nresult = {'s': {1}, 't': (1, 2), 'd': datetime.date(2026, 1, 2), 'n': float('nan')}"
        }
    )
    assert converted.data["result"] == {"s": [1], "t": [1, 2], "d": "2026-01-02", "n": None}
    assert converted.data["warnings"] == [
        "result held NaN or infinite floats; they are sent as null"
    ]


async def test_cwd_must_be_an_existing_directory_inside_the_roots(
    python: PythonTool, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "n.txt").write_text("7")
    inside = await python.execute(
        {"code": "result = int(open('n.txt').read())", "cwd": str(tmp_path / "data")}
    )
    assert inside.data["result"] == 7
    outside = await python.execute({"code": "result = 1", "cwd": "/etc"})
    assert outside.error is not None and outside.error.type == "denied"
    missing = await python.execute({"code": "result = 1", "cwd": "nope"})
    assert missing.error is not None and missing.error.type == "validation"
    assert "does not exist" in missing.error.message


async def test_default_cwd_is_a_fresh_scratch_directory(python: PythonTool) -> None:
    code = (
        "import os\nopen('f.txt', 'w').write('x')\nresult = [os.getcwd(), sorted(os.listdir('.'))]"
    )
    first = (await python.execute({"code": code})).data["result"]
    second = (await python.execute({"code": code})).data["result"]
    assert first[1] == second[1] == ["f.txt"]
    assert first[0] != second[0] and not Path(first[0]).exists()


async def test_server_environment_secrets_are_not_visible(python: PythonTool) -> None:
    result = await python.execute({"code": "import os\nresult = sorted(os.environ)"})
    assert "SECRET_TOKEN" not in result.data["result"]
    assert "PATH" in result.data["result"]


async def test_context_keys_must_be_identifiers(python: PythonTool) -> None:
    result = await python.execute({"code": "result = 1", "context": {"not valid": 1}})
    assert result.error is not None and result.error.type == "validation"
    assert "not valid" in result.error.message


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
async def test_process_limit_holds_when_running_as_another_user(tmp_path: Path) -> None:
    config = PythonConfig(max_processes=3, user="nobody", preload=["subprocess"])
    sandbox = make_sandbox(config, {"PATH": os.environ["PATH"]})
    tool = PythonTool(config, Roots([tmp_path]), sandbox)
    code = "import subprocess\nprocs = [subprocess.Popen(['sleep', '5']) for _ in range(10)]"
    try:
        result = await tool.execute({"code": code})
    finally:
        await sandbox.aclose()
    assert result.error is not None and result.error.details["limit"] == "max_processes"
    assert "max_processes=3" in result.error.message


async def test_pandas_and_matplotlib_are_preloaded_and_figures_become_images(
    tmp_path: Path,
) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    config = PythonConfig()
    sandbox = make_sandbox(config, {"PATH": os.environ["PATH"]})
    try:
        result = await PythonTool(config, Roots([tmp_path]), sandbox).execute(
            {"code": "df = pd.DataFrame({'a': [1, 2, 3]})\nplt.plot(df.a)\nresult = df"}
        )
    finally:
        await sandbox.aclose()
    assert result.success, result.error
    assert result.data["result"] == [{"a": 1}, {"a": 2}, {"a": 3}]
    (image,) = result.artifacts
    assert image.kind == "image" and image.mime_type == "image/png"
    png = base64.b64decode(image.uri.split(",", 1)[1])
    assert png.startswith(b"\x89PNG")


async def test_a_sandbox_restarts_after_its_server_dies(tmp_path: Path) -> None:
    sandbox = Sandbox(preload=("json",), env={"PATH": os.environ["PATH"]})
    await sandbox.start()
    assert sandbox.preloaded == ("json",)
    tool = PythonTool(PythonConfig(), Roots([tmp_path]), sandbox)
    await tool.execute({"code": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"})
    assert (await tool.execute({"code": "result = json.dumps([1])"})).data["result"] == "[1]"
    await sandbox.aclose()


def _prepared(server_pid: int) -> int:
    """Processes under the fork server (its spares, and jobs while they run)."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(status.parent.name))
    found, stack = 0, list(children.get(server_pid, []))
    while stack:
        found += 1
        stack += children.get(stack.pop(), [])
    return found


async def test_parallel_calls_find_prepared_processes_and_they_are_replaced(
    tmp_path: Path,
) -> None:
    """``spares`` processes wait prepared; after a burst, the server prepares them again."""
    sandbox = Sandbox(preload=("json",), env={"PATH": os.environ["PATH"]}, spares=3)
    await sandbox.start()
    try:
        assert sandbox._server is not None
        server = sandbox._server.process.pid
        wait_until(lambda: _prepared(server) == 3, "three prepared processes")
        tool = PythonTool(PythonConfig(), Roots([tmp_path]), sandbox)
        codes = [f"import time; time.sleep(0.2); result = {i} * 2" for i in range(5)]
        results = await asyncio.gather(*(tool.execute({"code": code}) for code in codes))
        assert [r.data["result"] for r in results if r.data] == [0, 2, 4, 6, 8]
        wait_until(lambda: _prepared(server) == 3, "the spares prepared again")
    finally:
        await sandbox.aclose()


@pytest.mark.parametrize(
    ("builtin", "key"),
    [
        ({"python": {"user": "no-such-user-x"}}, "builtin.python.user"),
        ({"roots": []}, "builtin.roots"),
    ],
)
def test_bad_builtin_settings_are_config_errors_naming_the_key(
    builtin: dict[str, object], key: str
) -> None:
    from tooldeck.config import load_settings
    from tooldeck.exceptions import ConfigError

    with pytest.raises(ConfigError, match=key):
        load_settings(builtin=builtin)


async def test_the_codes_progress_reports_reach_the_caller(python: PythonTool) -> None:
    from tooldeck.core.context import ToolContext

    reports: list[dict[str, object]] = []
    ctx = ToolContext(event_emitter=lambda event: reports.append(event.data))
    code = (
        "for step in range(1, 4):\n"
        "    report_progress(step, 3, f'file {step}' * 200)\n"
        "report_progress('not a number')\n"  # dropped, and never fails the code
        "result = 'done'"
    )
    result = await python.execute({"code": code}, ctx)
    assert result.success and result.data["result"] == "done", result.error
    assert [(r["progress"], r["total"]) for r in reports] == [(1, 3), (2, 3), (3, 3)]
    assert all(len(str(r["message"])) <= 500 for r in reports)


async def test_a_forged_frame_on_the_control_socket_ends_the_run_not_the_server(
    python: PythonTool,
) -> None:
    """The code digs the control socket out of report_progress and writes garbage."""
    code = (
        "import struct\n"
        "sock = report_progress.__closure__[0].cell_contents\n"
        "for frame in (b'[1, 2]', b'{\"op\": \"call\", \"name\": 5}', b'not json'):\n"
        "    sock.sendall(struct.pack('>I', len(frame)) + frame)\n"
        "result = 'unreachable?'"
    )
    forged = await python.execute({"code": code})
    assert forged.error is not None and forged.error.type == "execution", forged
    assert "before reporting a result" in forged.error.message  # not the host's own crash
    assert "Error" not in forged.error.message and forged.error.details["traceback"] is None
    after = await python.execute({"code": "result = 1 + 1"})
    assert after.success and after.data["result"] == 2


def _huge_pages_possible() -> bool:
    """Transparent huge pages not off, and a kernel with MADV_COLLAPSE (Linux 6.1+)."""
    try:
        setting = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False
    version = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (
        "[never]" not in setting
        and version is not None
        and ((int(version[1]), int(version[2])) >= (6, 1))
    )


@pytest.mark.skipif(not _huge_pages_possible(), reason="no transparent huge pages to collapse")
async def test_the_fork_servers_preloaded_memory_is_on_huge_pages(tmp_path: Path) -> None:
    """Forks copy one entry per 2 MiB of it, not 512 (``_sandbox_server._huge_pages``)."""
    sandbox = Sandbox(preload=("numpy", "pandas"), env={"PATH": os.environ["PATH"]}, spares=1)
    await sandbox.start()
    try:
        assert sandbox._server is not None
        rollup = Path(f"/proc/{sandbox._server.process.pid}/smaps_rollup").read_text()
        huge_kb = next(int(line.split()[1]) for line in rollup.splitlines()
                       if line.startswith("AnonHugePages:"))  # fmt: skip
        assert huge_kb >= 2048
        tool = PythonTool(PythonConfig(), Roots([tmp_path]), sandbox)
        result = await tool.execute({"code": "result = int(np.arange(10).sum())"})
        assert result.data["result"] == 45
    finally:
        await sandbox.aclose()


async def test_a_huge_message_on_the_control_socket_is_refused_unread(tmp_path: Path) -> None:
    """The code announces a 1.5 GB frame (the host grew to 4.9 GB reading one), then floods
    frames of 1 MB: each run ends at its limit, naming it, and the host reads neither."""
    from tooldeck.isolation.sandbox import SandboxLimits

    sandbox = Sandbox(preload=("json",), env={"PATH": os.environ["PATH"]}, spares=1)
    dig = "import struct\nsock = report_progress.__closure__[0].cell_contents\n"
    huge = dig + "sock.sendall(struct.pack('>I', 1_500_000_000) + b'{' * 65536)\nresult = 1"
    flood = dig + (
        'frame = b\'{"op": "progress", "progress": 1, "message": "\' + b\'x\' * 1_000_000 + b\'"}\'\n'
        "for _ in range(40):\n    sock.sendall(struct.pack('>I', len(frame)) + frame)\nresult = 1"
    )
    limits = SandboxLimits(timeout_s=20, max_messages_bytes=8_000_000)
    try:
        one = await sandbox.run(huge, cwd=None, limits=limits)
        assert one.error is not None and one.error.limit == "max_message_bytes", one.error
        assert "1,500,000,000 bytes" in one.error.message
        many = await sandbox.run(flood, cwd=None, limits=limits)
        assert many.error is not None and many.error.limit == "max_messages_bytes", many.error
        after = await sandbox.run("result = 2", cwd=None, limits=limits)
        assert after.result == 2
    finally:
        await sandbox.aclose()
