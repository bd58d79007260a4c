"""``git``: real repositories made in the test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tooldeck.packs.builtin import GitTool, Roots
from tooldeck.packs.builtin.config import GitConfig

pytestmark = pytest.mark.anyio

ENVIRON = {"PATH": os.environ["PATH"], "HOME": "/nonexistent"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **ENVIRON,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-m", "first commit")
    (repo / "a.txt").write_text("one\ntwo\n")
    git("add", "a.txt")
    git("commit", "-m", "second commit")
    git("branch", "feature")
    return repo


@pytest.fixture
def tool(tmp_path: Path) -> GitTool:
    return GitTool(GitConfig(), Roots([tmp_path]), ENVIRON)


async def test_status_log_diff_show_branches(tool: GitTool, repo: Path) -> None:
    assert (await tool.execute({"action": "status", "repo": "repo"})).data == {
        "branch": "main",
        "files": [],
        "clean": True,
    }
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    (repo / "new.txt").write_text("x")
    status = (await tool.execute({"action": "status", "repo": "repo"})).data
    assert status["files"] == [
        {"path": "a.txt", "index": "", "worktree": "M"},
        {"path": "new.txt", "index": "?", "worktree": "?"},
    ]
    log = (await tool.execute({"action": "log", "repo": "repo", "limit": 5})).data["commits"]
    assert [c["subject"] for c in log] == ["second commit", "first commit"]
    assert log[0]["author"] == "Ada" and len(log[0]["hash"]) == 40
    diff = (await tool.execute({"action": "diff", "repo": "repo"})).data["diff"]
    assert "+three" in diff
    shown = (await tool.execute({"action": "show", "repo": "repo", "revision": "HEAD~1"})).data
    assert "first commit" in shown["text"] and "+one" in shown["text"]
    branches = (await tool.execute({"action": "branches", "repo": "repo"})).data
    assert branches["current"] == "main"
    assert [b["name"] for b in branches["branches"]] == ["feature", "main"]


async def test_add_and_commit(tool: GitTool, repo: Path) -> None:
    assert tool.definition.confirm_actions == ("commit",)
    (repo / "b.txt").write_text("b\n")
    added = await tool.execute({"action": "add", "repo": "repo", "paths": ["b.txt"]})
    assert added.success, added.error
    staged = (await tool.execute({"action": "diff", "repo": "repo", "staged": True})).data["diff"]
    assert "+b" in staged
    committed = await tool.execute(
        {
            "action": "commit",
            "repo": "repo",
            "message": "add b",
            "author_name": "Bot",
            "author_email": "bot@example.org",
        }
    )
    assert committed.success, committed.error
    head = subprocess.run(
        ["git", "log", "-1", "--format=%H %an %s"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split(" ", 1)
    assert head == [committed.data["hash"], "Bot add b\n"]


async def test_refusals(tool: GitTool, repo: Path, tmp_path: Path) -> None:
    injected = await tool.execute({"action": "show", "repo": "repo", "revision": "--output=/tmp/x"})
    assert injected.error is not None and injected.error.type == "validation"
    outside = await tool.execute({"action": "status", "repo": "/"})
    assert outside.error is not None and outside.error.type == "denied"
    escape = await tool.execute({"action": "add", "repo": "repo", "paths": ["../../etc/passwd"]})
    assert escape.error is not None and escape.error.type == "denied"
    (tmp_path / "plain").mkdir()
    plain = await tool.execute({"action": "log", "repo": "plain"})
    assert plain.error is not None and "not inside a git repository" in plain.error.message
    bad = await tool.execute({"action": "show", "repo": "repo", "revision": "nope"})
    assert (
        bad.error is not None
        and bad.error.type == "execution"
        and "git show failed" in bad.error.message
    )
