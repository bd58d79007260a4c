"""``git``: status, log, diff, show, branches, add, commit on repositories in the roots.

Runs the ``git`` CLI (no shell), with the repository path checked against the roots.

Example::

    await tool.execute({"action": "log", "repo": "projects/app", "limit": 5})
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.exceptions import InvalidArgumentsError, ToolFailure, ToolUnavailableError
from tooldeck.isolation.process import run_process
from tooldeck.packs.builtin.config import GitConfig
from tooldeck.packs.builtin.roots import Roots

__all__ = ["GitTool"]

_FIELD, _RECORD = "\x1f", "\x1e"


class RepoRequest(BaseModel):
    """Arguments every action takes."""

    repo: str = Field(
        ".", max_length=4096, description="Path of the repository (inside the allowed roots)."
    )


class LogRequest(RepoRequest):
    """Arguments of ``log``."""

    limit: int = Field(20, ge=1, le=500, description="Most recent commits to return.")
    path: str | None = Field(None, max_length=4096, description="Only commits touching this path.")


class DiffRequest(RepoRequest):
    """Arguments of ``diff``."""

    staged: bool = Field(False, description="Diff the index against HEAD instead of the work tree.")
    paths: list[str] = Field(default_factory=list, description="Limit to these paths.")


class ShowRequest(RepoRequest):
    """Arguments of ``show``."""

    revision: str = Field("HEAD", max_length=256, description="Commit, tag or branch to show.")


class AddRequest(RepoRequest):
    """Arguments of ``add``."""

    paths: list[str] = Field(min_length=1, description="Paths to stage.")


class CommitRequest(RepoRequest):
    """Arguments of ``commit``."""

    message: str = Field(min_length=1, max_length=100_000, description="The commit message.")
    author_name: str | None = Field(None, description="Author name, if git has none configured.")
    author_email: str | None = Field(None, description="Author email, likewise.")


class _GitAction(ActionStrategy):
    def __init__(self, config: GitConfig, roots: Roots, env: Mapping[str, str]) -> None:
        self.config = config
        self.roots = roots
        self.env = env

    def repository(self, request: RepoRequest) -> Path:
        path = self.roots.directory(request.repo, field="repo")
        if not any((p / ".git").exists() for p in (path, *path.parents)):
            raise InvalidArgumentsError(
                f"repo: {request.repo!r} is not inside a git repository",
                details={"errors": [{"field": "repo", "message": "not a git repository"}]},
            )
        return path

    def inside(self, repo: Path, paths: list[str], field: str = "paths") -> list[str]:
        return [str(self.roots.resolve(repo / p, field=field)) for p in paths]

    async def git(self, repo: Path, *args: str) -> str:
        program = shutil.which("git", path=self.env.get("PATH"))
        if program is None:
            raise ToolUnavailableError("git is not installed (no git on PATH)", retryable=False)
        done = await run_process(
            [program, *args],
            cwd=repo,
            env=self.env,
            timeout_s=self.config.timeout_s,
            max_output_bytes=self.config.max_output_bytes,
        )
        if done.timed_out:
            raise ToolFailure(f"git {args[0]} did not finish within {self.config.timeout_s:g} s")
        if done.exit_code != 0:
            raise ToolFailure(
                f"git {args[0]} failed (exit {done.exit_code}): {done.stderr.strip() or done.stdout.strip()}",
                details={"exit_code": done.exit_code, "stderr": done.stderr},
            )
        return done.stdout


def _revision(value: str) -> str:
    if not value or value.startswith("-") or any(c.isspace() for c in value):
        raise InvalidArgumentsError(
            f"revision: {value!r} is not a revision (no leading '-', no spaces)",
            details={"errors": [{"field": "revision", "message": "invalid revision"}]},
        )
    return value


class Status(_GitAction):
    """Branch and changed files."""

    name = "status"
    description = "Current branch and changed, staged and untracked files."
    RequestModel = RepoRequest

    async def run(self, request: RepoRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{branch, files: [{path, index, worktree}], clean}``."""
        repo = self.repository(request)
        out = await self.git(repo, "status", "--porcelain=v1", "--branch", "-z")
        entries = out.split("\x00")
        branch = (
            entries[0][3:].split("...")[0] if entries and entries[0].startswith("## ") else None
        )
        files = []
        rest = iter(entries[1:])
        for entry in rest:
            if not entry:
                continue
            index, worktree, path = entry[0], entry[1], entry[3:]
            if index in "RC":
                next(rest, None)  # the rename's source path
            files.append({"path": path, "index": index.strip(), "worktree": worktree.strip()})
        return {"branch": branch, "files": files, "clean": not files}


class Log(_GitAction):
    """Recent commits."""

    name = "log"
    description = "Recent commits: hash, author, date, subject."
    RequestModel = LogRequest

    async def run(self, request: LogRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{commits: [{hash, author, email, date, subject}]}``."""
        repo = self.repository(request)
        fmt = _FIELD.join(("%H", "%an", "%ae", "%aI", "%s")) + _RECORD
        args = ["log", f"-n{request.limit}", f"--pretty=format:{fmt}"]
        if request.path:
            args += ["--", *self.inside(repo, [request.path], "path")]
        out = await self.git(repo, *args)
        keys = ("hash", "author", "email", "date", "subject")
        commits = [
            dict(zip(keys, record.strip("\n").split(_FIELD), strict=False))
            for record in out.split(_RECORD)
            if record.strip()
        ]
        return {"commits": commits}


class Diff(_GitAction):
    """Changes as a unified diff."""

    name = "diff"
    description = "Unified diff of the work tree (or the staged changes)."
    RequestModel = DiffRequest

    async def run(self, request: DiffRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{diff, staged}``."""
        repo = self.repository(request)
        args = ["diff", "--no-color", *(["--staged"] if request.staged else [])]
        if request.paths:
            args += ["--", *self.inside(repo, request.paths)]
        return {"diff": await self.git(repo, *args), "staged": request.staged}


class Show(_GitAction):
    """One commit."""

    name = "show"
    description = "A commit's message and diff."
    RequestModel = ShowRequest

    async def run(self, request: ShowRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{revision, text}``."""
        repo = self.repository(request)
        text = await self.git(repo, "show", "--no-color", _revision(request.revision), "--")
        return {"revision": request.revision, "text": text}


class Branches(_GitAction):
    """Local branches."""

    name = "branches"
    description = "Local branches, the current one marked."
    RequestModel = RepoRequest

    async def run(self, request: RepoRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{current, branches: [{name, current, commit}]}``."""
        repo = self.repository(request)
        fmt = _FIELD.join(("%(refname:short)", "%(HEAD)", "%(objectname:short)"))
        out = await self.git(repo, "branch", f"--format={fmt}")
        branches = []
        for line in out.splitlines():
            name, head, commit = line.split(_FIELD)
            branches.append({"name": name, "current": head == "*", "commit": commit})
        current = next((b["name"] for b in branches if b["current"]), None)
        return {"current": current, "branches": branches}


class Add(_GitAction):
    """Stage paths."""

    name = "add"
    description = "Stage files for the next commit."
    RequestModel = AddRequest

    async def run(self, request: AddRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{staged: [paths]}``."""
        repo = self.repository(request)
        await self.git(repo, "add", "--", *self.inside(repo, request.paths))
        return {"staged": request.paths}


class Commit(_GitAction):
    """Record a commit (needs confirmation)."""

    name = "commit"
    description = "Commit the staged changes."
    RequestModel = CommitRequest
    requires_confirmation = True

    async def run(self, request: CommitRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{hash, message}``."""
        repo = self.repository(request)
        identity = []
        if request.author_name:
            identity += ["-c", f"user.name={request.author_name}"]
        if request.author_email:
            identity += ["-c", f"user.email={request.author_email}"]
        await self.git(repo, *identity, "commit", "-m", request.message)
        commit = (await self.git(repo, "rev-parse", "HEAD")).strip()
        return {"hash": commit, "message": request.message}


class GitTool(CompositeTool):
    """Git on repositories inside the allowed roots, through the ``git`` CLI.

    Semantics:
        ``repo`` and every path must resolve inside the roots (else ``denied``).
        Revisions may not start with ``-`` (no option injection); paths are passed
        after ``--``. A failing git command is an ``execution`` error with git's own
        message. ``commit`` needs confirmation (``confirm_actions``).

    Args:
        config: Timeout and output cap.
        roots: Where repositories may be.
        environ: The server's environment (PATH, HOME and git's own variables are used).
    """

    labels = ("private",)  # the user's repositories (providers.flow)

    name = "git"
    source_id = "tool:git:v1"
    description = (
        "Work with git repositories. Actions: status, log (limit, path), diff (staged, "
        "paths), show (revision), branches, add (paths), commit (message)."
    )
    annotations = ToolAnnotations(title="Git", read_only=False, destructive=False)
    tags = ("builtin", "git")

    def __init__(self, config: GitConfig, roots: Roots, environ: Mapping[str, str]) -> None:
        keep = ("PATH", "HOME", "LANG", "TZ", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")  # fmt: skip
        env = {k: environ[k] for k in keep if k in environ}
        env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"})
        actions = (Status, Log, Diff, Show, Branches, Add, Commit)
        super().__init__([action(config, roots, env) for action in actions])
