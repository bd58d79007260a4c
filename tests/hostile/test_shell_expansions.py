"""Commands hidden in what bash expands (issue 25, finding 9).

The shell allow-list read command names, substitutions and redirections, but not the
text of parameter expansions or here-document bodies, where bash runs ``$(...)`` and
backticks too. Each line below ran ``touch`` (not on the list) through real bash.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.packs.builtin import Roots, ShellTool
from tooldeck.packs.builtin.config import ShellConfig

pytestmark = pytest.mark.anyio

ATTACKS = [
    "echo ${x:-$(touch RAN)}",
    "echo ${x:-`touch RAN`}",
    "echo ${a[$(touch RAN >&2)]}",
    'echo "${x:-$(touch RAN)}"',
    "echo ${x/a/$(touch RAN)}",
    "cat <<EOF\n$(touch RAN)\nEOF\n",
    "cat <<EOF\n`touch RAN`\nEOF\n",
    "cat <<-EOF\n\t${x:-$(touch RAN)}\nEOF\n",
    "x='a[$(touch RAN)]'; echo ${!x}",
    "x='a[$(touch RAN)]'; echo ${y:x}",
]


def shell(tmp_path: Path) -> ShellTool:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    config = ShellConfig(allowed_commands=["echo", "cat"])  # type: ignore[call-arg]
    return ShellTool(config, Roots([tmp_path]), environ)


@pytest.mark.parametrize("command", ATTACKS)
async def test_a_command_hidden_in_an_expansion_is_denied(tmp_path: Path, command: str) -> None:
    result = await shell(tmp_path).execute({"command": command, "cwd": "."})
    assert not (tmp_path / "RAN").exists(), f"bash ran touch through {command!r}"
    assert result.error is not None and result.error.type == "denied", result


@pytest.mark.parametrize(
    "command",
    ["echo ${HOME} $1 $? ${#HOME} ${x:-none} ${HOME%/}", "cat <<EOF\nplain text\nEOF\n"],
)
async def test_plain_expansions_still_run(tmp_path: Path, command: str) -> None:
    result = await shell(tmp_path).execute({"command": command, "cwd": "."})
    assert result.success and result.data["exit_code"] == 0, result
