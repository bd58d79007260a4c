"""The README, run as written: every shell and Python block, in order, on a fresh checkout.

A temporary folder plays the checkout (the README, the Makefile, pyproject.toml and
this repository's ``.venv``), with its own ``HOME`` and no ``TOOLDECK_*`` variables.
Each block is handled by its language:

- ``bash``: each command runs in order (``\\`` continues a line); ``source
  .venv/bin/activate`` and ``cd`` carry over to later commands, as in a terminal. A
  command that serves (``make serve``, ``tooldeck serve``) starts in the background and
  must answer ``/healthz``; the ports the README names map to free ones. ``make test``
  is the suite this test is part of, so it is not run again.
- ``python``: run with the environment's ``python`` in the current folder, after the
  blocks before it (the README's Python is one session).
- ``toml``: loaded as a ``tooldeck.toml`` (a typo in documented configuration fails);
  a block marked ``<!-- readme: add to tooldeck.toml -->`` is appended to the current
  folder's file, as the text before it asks the reader to.
- ``json``: parsed.

What the README shows a command print is checked against what it prints:

- ``<!-- readme: output -->`` before a block: the output of the last command run
  before it. JSON is compared as data, but for values that change on every call
  (``request_id``, ``duration_ms``); text line by line, each shown line found in the
  output with spacing and table borders ignored, and a decimal number in a table row
  (a duration) matching any number. ``...`` in a shown line matches anything.
- ``# → TEXT`` after a command or a Python ``print``: that command's (that block's)
  output contains TEXT, ``...`` matching anything and ``\n`` a new line.

``<!-- readme: skip REASON -->`` before a block leaves it out (the reason is required).
Every relative link must name a file of the repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from processes import free_port

from deadlines import scaled

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
BLOCK = re.compile(
    r"(?:<!-- readme: (?P<mark>[^>]*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S
)
PORT = re.compile(
    r"(?<=localhost:)\d{4,5}|(?<=127\.0\.0\.1:)\d{4,5}|(?<=--port )\d{4,5}|(?<=PORT=)\d{4,5}"
)


@dataclass
class Block:
    lang: str
    body: str
    mark: str
    line: int


def blocks() -> list[Block]:
    text = README.read_text()
    return [
        Block(m["lang"], m["body"], m["mark"] or "", text.count("\n", 0, m.start("body")) + 1)
        for m in BLOCK.finditer(text)
    ]


@dataclass
class Terminal:
    """A shell session's state: folder, environment, background servers, port map."""

    cwd: Path
    env: dict[str, str]
    ports: dict[str, str] = field(default_factory=dict)
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    output: str = ""
    """What the last command printed (stdout, then stderr)."""
    stdout: str = ""
    """What the last command printed on stdout."""

    def port(self, documented: str) -> str:
        if documented not in self.ports:
            self.ports[documented] = str(free_port())
        return self.ports[documented]

    def run(self, command: str, where: str) -> None:
        command = PORT.sub(lambda m: self.port(m.group()), command)
        words = shlex.split(command, comments=True)
        if not words:
            return
        if words[0] == "cd":
            self.cwd = (self.cwd / words[1]).resolve()
            return
        if words[0] in ("source", ".") and words[1].endswith("/activate"):
            venv = (self.cwd / words[1]).parent.parent
            self.env["VIRTUAL_ENV"] = str(venv)
            self.env["PATH"] = f"{venv / 'bin'}{os.pathsep}{self.env['PATH']}"
            return
        if words[:2] == ["make", "test"]:
            return
        if words[:2] == ["make", "serve"] or (words[0] == "tooldeck" and "serve" in words):
            self.serve(command, words, where)
            return
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"{where}: `{command}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
        assert "Traceback" not in done.stderr, f"{where}: `{command}`:\n{done.stderr}"
        self.output, self.stdout = done.stdout + done.stderr, done.stdout
        shown = ARROW.search(command)
        if shown:
            check_shown(shown[1], self.output, f"{where}: `{command}`")

    def serve(self, command: str, words: list[str], where: str) -> None:
        command = shlex.join(words)  # without the comment
        if words[:2] == ["make", "serve"] and not any(w.startswith("PORT=") for w in words):
            command += f" PORT={self.port('8765')}"  # make serve's documented default
        if words[0] == "tooldeck" and "--port" not in words:
            command += f" --port {self.port('8765')}"
        port = re.search(r"(?:PORT=|--port )(\d+)", command)
        assert port, command
        log = self.cwd / f"serve-{port[1]}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                ["bash", "-c", f"exec {command}"],
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.servers.append(proc)
        deadline = time.monotonic() + scaled(180)
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{where}: `{command}` exited:\n{log.read_text()}"
            try:
                if httpx.get(f"http://127.0.0.1:{port[1]}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise AssertionError(f"{where}: `{command}` did not answer /healthz within 60 s")

    def stop(self) -> None:
        for proc in self.servers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def commands(body: str) -> list[str]:
    """The block's commands, with ``\\``-continued lines joined."""
    return body.replace("\\\n", " ").splitlines()


def test_every_block_of_the_readme_runs_in_order(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("README.md", "Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, checkout / name)
    # make must never reinstall into this venv from the scratch checkout (the editable
    # install would point at a folder deleted after the test): the copied pyproject is
    # made older than any install stamp. (MAKEFLAGS="-o stamp" from the environment is
    # not honoured by GNU make 4.3: found when an edited pyproject made it reinstall.)
    os.utime(checkout / "pyproject.toml", (0, 0))
    venv = Path(sys.prefix)
    (checkout / ".venv").symlink_to(
        venv if (venv / "bin" / "tooldeck").exists() else ROOT / ".venv"
    )
    home = tmp_path / "home"
    home.mkdir()
    for folder in (tmp_path, checkout, home):  # the sandbox runs code as nobody
        folder.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TOOLDECK_", "VIRTUAL_ENV", "XDG_"))
    }
    env["HOME"] = str(home)
    env["COLUMNS"] = "80"  # what the README's shown output was printed at
    env["PATH"] = os.pathsep.join(
        p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(venv))
    )  # a fresh terminal: the environment is not active until the README activates it
    terminal = Terminal(checkout, env)
    ran = 0
    python = ""
    try:
        for block in blocks():
            where = f"README.md:{block.line}"
            if block.mark.startswith("skip"):
                assert block.mark[4:].strip(), f"{where}: say why the block is skipped"
                continue
            if block.lang == "bash":
                for command in commands(block.body):
                    terminal.run(command, where)
                    ran += 1
            elif block.mark == "output":
                check_output(block, terminal, where)
            elif block.lang == "python":
                script = terminal.cwd / f"readme_{block.line}.py"
                before = terminal.output if python else ""
                python += block.body
                script.write_text(python)
                terminal.run(f"python {script.name}", where)
                printed = terminal.output[len(before) :]  # this block's own prints
                for shown in ARROW.findall(block.body):
                    check_shown(shown, printed, where)
                ran += 1
            elif block.lang == "toml":
                check_toml(block, terminal, where)
            elif block.lang == "json":
                json.loads(block.body)
    finally:
        terminal.stop()
    assert ran >= 20


ARROW = re.compile(r"#[^\n→]*→\s*(.+)$", re.M)
"""``# → what it prints`` after a command or a ``print``."""
VOLATILE = frozenset({"request_id", "duration_ms"})
"""JSON keys whose values change on every call."""


def check_shown(shown: str, output: str, where: str) -> None:
    """``output`` contains ``shown`` (``...`` matches anything, ``\\n`` a new line)."""
    pattern = ".*?".join(re.escape(part) for part in shown.strip().split("..."))
    pattern = pattern.replace(re.escape("\\n"), "\n")
    assert re.search(pattern, output, re.S), f"{where}: shows {shown!r}; printed:\n{output}"


def check_output(block: Block, terminal: Terminal, where: str) -> None:
    """The block is what the last command printed (see the module docstring)."""
    if block.lang == "json":
        assert_same_data(json.loads(block.body), json.loads(terminal.stdout), where)
        return
    output = terminal.output
    printed = [_plain(line) for line in output.splitlines()]
    for line in block.body.splitlines():
        if not _plain(line):
            continue
        pattern = ".*?".join(re.escape(part) for part in _plain(line).split("..."))
        if "│" in line:  # a table row: a duration is whatever it took this time
            pattern = re.sub(r"\d+\\\.\d+", r"\\d+(?:\\.\\d+)?", pattern)
        assert any(re.search(pattern, p) for p in printed), (
            f"{where}: shows {line.strip()!r}, not printed:\n{output}"
        )


def _plain(line: str) -> str:
    """A line without table borders, spacing collapsed."""
    return " ".join(re.sub(r"[│┃┏┓┗┛┡┩└┘━─╇┳┻╋┣┫]", " ", line).split())


def assert_same_data(shown: object, printed: object, where: str, path: str = "") -> None:
    """Equal JSON, but for the values of ``VOLATILE`` keys."""
    if isinstance(shown, dict) and isinstance(printed, dict):
        assert shown.keys() == printed.keys(), f"{where}: {path or '/'} keys differ: {printed}"
        for key in shown:
            if key not in VOLATILE:
                assert_same_data(shown[key], printed[key], where, f"{path}/{key}")
        return
    assert shown == printed, f"{where}: {path} shows {shown!r}, printed {printed!r}"


def check_toml(block: Block, terminal: Terminal, where: str) -> None:
    """Load the block as a config file; append it to the folder's own when marked."""
    from tooldeck.config import load_settings

    tomllib.loads(block.body)
    if block.mark == "add to tooldeck.toml":
        config = terminal.cwd / "tooldeck.toml"
        config.write_text(config.read_text() + "\n" + block.body)
        return
    scratch = terminal.cwd / ".readme-check.toml"
    scratch.write_text(block.body)
    try:
        load_settings(scratch)
    except Exception as exc:
        raise AssertionError(
            f"{where}: the documented configuration does not load: {exc}"
        ) from None
    finally:
        scratch.unlink()


def test_the_readme_links_only_to_files_of_the_repository() -> None:
    text = README.read_text()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local, "no relative links found"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert missing == []
    assert "../shared" not in text
