"""Sandboxed code and the host's disk (issue 25, finding 8).

Only ``/tmp`` was private to a run: ``/var/tmp``, ``/run/lock`` and other folders every
user may write were the host's, kept between calls, and a file could grow without
limit (600 MB written to the host in one call).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tooldeck.packs.builtin import PythonTool, Roots, make_sandbox
from tooldeck.packs.builtin.config import PythonConfig

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.geteuid() != 0, reason="the isolation defaults apply to a root server"),
]

SHARED = [p for p in ("/var/tmp", "/run/lock", "/dev/shm", "/dev/mqueue") if os.path.isdir(p)]


@pytest.fixture
async def python(tmp_path: Path) -> AsyncIterator[PythonTool]:
    config = PythonConfig(timeout_s=20, cpu_s=15, max_file_mb=5, preload=["os"])
    work = tmp_path / "work"
    work.mkdir(mode=0o777)
    work.chmod(0o777)  # the default user (nobody) writes there
    sandbox = make_sandbox(config, {"PATH": os.environ["PATH"]}, [work])
    yield PythonTool(config, Roots([work]), sandbox)
    await sandbox.aclose()


async def test_world_writable_folders_are_private_to_each_run(python: PythonTool) -> None:
    assert "/var/tmp" in SHARED
    marker = f"tooldeck-canary-{os.getpid()}"
    write = (
        "import os\nwritten = []\n"
        "for folder in folders:\n"
        "    try:\n"
        "        open(os.path.join(folder, name), 'w').write('x')\n"
        "        written.append(folder)\n"
        "    except OSError:\n"
        "        pass\n"
        "result = written"
    )
    first = await python.execute({"code": write, "context": {"folders": SHARED, "name": marker}})
    assert first.success and first.data["result"], first  # writable inside the run
    for folder in SHARED:
        assert not os.path.exists(os.path.join(folder, marker)), f"{folder} is the host's"
    look = "import os\nresult = [f for f in folders if os.path.exists(os.path.join(f, name))]"
    second = await python.execute({"code": look, "context": {"folders": SHARED, "name": marker}})
    assert second.success and second.data["result"] == []  # not kept for the next run


async def test_a_file_cannot_grow_past_max_file_mb(python: PythonTool, tmp_path: Path) -> None:
    code = (
        "chunk = b'x' * (1 << 20)\n"
        "with open('big.bin', 'wb') as f:\n"
        "    for _ in range(50):\n"
        "        f.write(chunk)\n"
    )
    result = await python.execute({"code": code, "cwd": str(tmp_path / "work")})
    assert result.error is not None and "File too large" in result.error.message, result
    assert (tmp_path / "work" / "big.bin").stat().st_size <= 5 * 1024 * 1024
