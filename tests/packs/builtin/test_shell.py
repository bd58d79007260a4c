"""``shell``: real bash processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from deadlines import scaled
from tooldeck.packs.builtin import Roots, ShellTool
from tooldeck.packs.builtin.config import ShellConfig

pytestmark = pytest.mark.anyio

ENVIRON = {"PATH": os.environ["PATH"], "HOME": "/root", "API_TOKEN": "s3cret"}


def shell(tmp_path: Path, **config: object) -> ShellTool:
    return ShellTool(ShellConfig(**config), Roots([tmp_path]), ENVIRON)  # type: ignore[arg-type]


async def test_output_exit_code_and_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    ok = await shell(tmp_path).execute({"command": "pwd; echo oops >&2", "cwd": "sub"})
    assert ok.data["exit_code"] == 0
    assert ok.data["stdout"].strip() == str(tmp_path / "sub")
    assert ok.data["stderr"] == "oops\n" and ok.data["shell"] == "bash"
    failing = await shell(tmp_path).execute({"command": "exit 3"})
    assert failing.success and failing.data["exit_code"] == 3


async def test_only_allowed_environment_reaches_the_command(tmp_path: Path) -> None:
    result = await shell(tmp_path).execute({"command": "env", "env": {"EXTRA": "1"}})
    names = {line.split("=", 1)[0] for line in result.data["stdout"].splitlines()}
    assert "API_TOKEN" not in names and {"PATH", "HOME", "EXTRA"} <= names


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    start = time.perf_counter()
    result = await shell(tmp_path).execute(
        {"command": f"sleep 60 & echo $! > {marker}; echo started; wait", "timeout_s": 1}
    )
    assert time.perf_counter() - start < scaled(5)
    assert result.error is not None and result.error.type == "timeout"
    assert result.error.details["stdout"] == "started\n"
    pid = int(marker.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or " Z " in Path(f"/proc/{pid}/stat").read_text()


async def test_a_timeout_over_the_maximum_says_it_was_lowered(tmp_path: Path) -> None:
    result = await shell(tmp_path, timeout_s=1).execute({"command": "sleep 5", "timeout_s": 90})
    assert result.error is not None and result.error.type == "timeout"
    assert "timeout_s 90 was lowered to 1 s" in result.error.message


async def test_output_is_capped(tmp_path: Path) -> None:
    result = await shell(tmp_path, max_output_bytes=100).execute({"command": "yes | head -c 5000"})
    assert result.data["stdout"].startswith("y\ny\n")
    assert "4900 more bytes cut" in result.data["stdout"]


async def test_allow_list_checks_every_program_of_the_line(tmp_path: Path) -> None:
    tool = shell(tmp_path, allowed_commands=["echo", "grep", "ls"])
    assert (await tool.execute({"command": "echo hi | grep hi"})).data["stdout"] == "hi\n"
    for command in (
        "rm -rf x",
        "echo hi; rm x",
        "ls && curl x",
        "echo $(rm x)",
        "echo `id`",
        "X=1 python -c 1",
    ):
        result = await tool.execute({"command": command})
        assert result.error is not None and result.error.type == "denied", command


BYPASSES = [  # issue 18: each ran `id` (or wrote outside the roots) with echo and ls allowed
    ("echo hi\nid", {}),
    ("echo hi #\nid", {}),
    ("echo hi # comment\n  id", {}),
    ("echo hi", {"BASH_FUNC_echo%%": "() {{ id; }}"}),
    ("echo hi", {"BASH_ENV": "{evil}"}),
    ("echo hi", {"ENV": "{evil}"}),
    ("echo hi", {"LD_PRELOAD": "/tmp/x.so"}),
    ("ls", {"PATH": "{bindir}"}),
    ("PATH={bindir} ls", {}),
    ("PATH={bindir}; ls", {}),
    ("{bindir}/echo hi", {}),
    ("./echo hi", {}),
    ("echo pwned > {outside}", {}),
    ("echo pwned >> {outside}", {}),
    ("ls &> {outside}", {}),
    ("echo() {{ id; }}; echo hi", {}),
    ("$CMD hi", {}),
    ("e* hi", {}),
    ("echo $(id)", {}),
    ("echo <(id)", {}),
    ("(id)", {}),
    ("for x in 1; do id; done", {}),
    ("if true; then id; fi", {}),
    ("echo $((1+$(id)))", {}),
]


@pytest.mark.parametrize(("command", "env"), BYPASSES)
async def test_allow_list_bypasses_are_denied(
    tmp_path: Path, command: str, env: dict[str, str]
) -> None:
    root = tmp_path / "root"
    bindir = tmp_path / "evilbin"
    for place in (root, bindir):
        place.mkdir()
    for name in ("echo", "ls", "id"):  # an attacker's programs named like allowed ones
        (bindir / name).write_text("#!/bin/sh\necho EVIL\n")
        (bindir / name).chmod(0o755)
    (root / "echo").write_bytes((bindir / "echo").read_bytes())
    (root / "echo").chmod(0o755)
    evil = tmp_path / "evil.sh"
    evil.write_text("echo EVIL\n")
    outside = tmp_path / "outside.txt"
    fill = {"bindir": bindir, "outside": outside, "evil": evil}
    tool = ShellTool(
        ShellConfig(allowed_commands=["echo", "ls"]),
        Roots([root]),
        ENVIRON,
    )
    result = await tool.execute(
        {
            "command": command.format(**fill),
            "env": {k: v.format(**fill) for k, v in env.items()},
        }
    )
    assert result.error is not None, (command, result.data)
    assert result.error.type in ("denied", "validation"), result.error
    assert not outside.exists()


@pytest.mark.parametrize(
    "command",
    [
        "echo $((1+1)) 2>&1",
        "ls -la | echo done",
        "echo hi > out.txt",
        "echo 'a; id' \"b\" >/dev/null",
    ],
)
async def test_harmless_lines_pass_the_allow_list(tmp_path: Path, command: str) -> None:
    tool = ShellTool(ShellConfig(allowed_commands=["echo", "ls"]), Roots([tmp_path]), ENVIRON)
    result = await tool.execute({"command": command})
    assert result.success, result.error
    assert result.data["exit_code"] == 0


async def test_unsafe_env_is_a_validation_error_even_without_an_allow_list(
    tmp_path: Path,
) -> None:
    result = await shell(tmp_path).execute(
        {"command": "echo hi", "env": {"BASH_ENV": "/x", "LD_PRELOAD": "/y", "OK": "1"}}
    )
    assert result.error is not None and result.error.type == "validation"
    assert "BASH_ENV, LD_PRELOAD" in result.error.message


async def test_cwd_outside_the_roots_is_denied_and_confirmation_is_the_default(
    tmp_path: Path,
) -> None:
    tool = shell(tmp_path)
    assert tool.definition.requires_confirmation is True
    result = await tool.execute({"command": "ls", "cwd": "/"})
    assert result.error is not None and result.error.type == "denied"
