"""Where tooldeck starts must not decide what it runs (issue 25, findings 5 and 6).

A ``tooldeck.toml`` names code to import and commands to spawn: one left by another
user in a shared folder above the working directory (``/tmp``, ``/var/tmp``) must not
be read. A desktop MCP client launches the server in ``/``: the built-in tools must not
default to the whole disk.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from integration import processes
from tooldeck.config import find_config, load_settings
from tooldeck.exceptions import ConfigError
from tooldeck.runtime import build_runtime

BIN = Path(sys.executable).parent
EVIL = 'tools = ["./evil.py"]\n'
EVIL_PY = "from pathlib import Path\nPath(__file__).with_name('RAN').write_text('x')\n"


def plant(folder: Path) -> Path:
    """A config in ``folder`` that imports code writing ``folder/RAN`` when loaded."""
    (folder / "evil.py").write_text(EVIL_PY)
    config = folder / "tooldeck.toml"
    config.write_text(EVIL)
    return config


def tooldeck(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TOOLDECK_DATA_DIR": str(home / "d")}
    return processes.tooldeck(*args, cwd=cwd, env=env)


def test_a_config_in_a_world_writable_folder_above_is_not_read(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    project = shared / "someone" / "project"
    project.mkdir(parents=True)
    shared.chmod(0o1777)  # like /tmp and /var/tmp
    plant(shared)
    assert find_config(project) is None
    done = tooldeck("config", "show", cwd=project, home=tmp_path / "home")
    assert not (shared / "RAN").exists()
    assert "writable by every user" in done.stderr, done.stderr


def test_a_world_writable_config_file_is_ignored_and_named(tmp_path: Path) -> None:
    config = plant(tmp_path)
    config.chmod(0o666)
    assert find_config(tmp_path) is None
    config.chmod(0o644)
    assert find_config(tmp_path) == config  # the user's own file is read


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_config_owned_by_another_user_is_not_read(tmp_path: Path) -> None:
    other = tmp_path / "other"
    project = other / "project"
    project.mkdir(parents=True)
    plant(other)
    os.chown(other, 65534, 65534)  # nobody
    assert find_config(project) is None
    os.chown(other, 0, 0)
    os.chown(other / "tooldeck.toml", 65534, 65534)
    assert find_config(project) is None


def test_the_search_stops_at_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    plant(tmp_path)  # above home: never looked at
    done = tooldeck("config", "show", cwd=project, home=home)
    assert not (tmp_path / "RAN").exists()
    assert "none (defaults and environment)" in done.stdout, done.stdout + done.stderr


def test_default_roots_are_the_config_folder_and_never_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text("[brokerage]\nenabled = false\n")
    monkeypatch.chdir("/")
    runtime = build_runtime(load_settings(config))
    try:
        from tooldeck.isolation.sandbox import Sandbox

        sandbox = runtime.services.get(Sandbox)
        assert str(tmp_path.resolve()) in {str(p) for p in sandbox.exposed}
    finally:
        runtime.close()
    with pytest.raises(ConfigError, match=r"\[builtin\] roots is not set and the current folder"):
        build_runtime(load_settings(None, brokerage={"enabled": False}))
    explicit = load_settings(None, brokerage={"enabled": False}, builtin={"roots": ["/"]})
    build_runtime(explicit).close()  # said explicitly, it is meant


@pytest.mark.integration
@pytest.mark.anyio
async def test_a_desktop_launch_from_slash_reads_the_project_not_etc(tmp_path: Path) -> None:
    """As Claude Desktop starts a server: cwd ``/``, the absolute command, a bare PATH."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the project's own notes\n")
    config = project / "tooldeck.toml"
    config.write_text("[brokerage]\nenabled = false\n")
    command = shutil.which("tooldeck", path=str(BIN))
    assert command is not None
    params = StdioServerParameters(
        command=command,
        args=["mcp", "--config", str(config)],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")},
    )
    async with Client(params) as client:
        etc = await client.call_tool("files", {"action": "read", "path": "/etc/hostname"})
        assert etc.is_error and etc.meta["error_type"] == "denied"  # type: ignore[index]
        relative = await client.call_tool("files", {"action": "read", "path": "etc/hostname"})
        assert relative.is_error
        notes = await client.call_tool("files", {"action": "read", "path": "notes.txt"})
        assert not notes.is_error, notes.content
        assert "the project's own notes" in str(notes.structured_content)
