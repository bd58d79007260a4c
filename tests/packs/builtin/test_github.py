"""``github``: a local server on 127.0.0.1 answering like the REST API."""

from __future__ import annotations

import json

import pytest

from tooldeck.packs.builtin import GitHubTool
from tooldeck.packs.builtin.config import GitHubConfig

from .conftest import LocalServer

pytestmark = pytest.mark.anyio

ISSUE = {"number": 7, "title": "Crash on start", "state": "open", "user": {"login": "ada"},
         "labels": [{"name": "bug"}], "comments": 2, "created_at": "2026-11-01T10:00:00Z",
         "updated_at": "2026-11-02T10:00:00Z", "html_url": "https://github.com/o/r/issues/7",
         "body": "It crashes."}  # fmt: skip
PULL = {**ISSUE, "number": 8, "title": "Fix crash", "draft": False, "merged": False,
        "head": {"ref": "fix"}, "base": {"ref": "main"}, "pull_request": {}}  # fmt: skip


def github(server: LocalServer, token: str | None = "t0ken") -> GitHubTool:
    return GitHubTool(GitHubConfig(base_url=f"{server.url}/api/v3", token=token))  # type: ignore[arg-type]


async def test_repository_issues_and_pulls(server: LocalServer) -> None:
    server.json("GET", "/api/v3/repos/o/r", {"full_name": "o/r", "stargazers_count": 5,
                                            "default_branch": "main", "private": False})  # fmt: skip
    server.json("GET", "/api/v3/repos/o/r/issues", [ISSUE, PULL])
    server.json("GET", "/api/v3/repos/o/r/issues/7", ISSUE)
    server.json("GET", "/api/v3/repos/o/r/pulls", [PULL])
    server.json("GET", "/api/v3/repos/o/r/pulls/8", PULL)
    tool = github(server)
    repo = await tool.execute({"action": "repo", "owner": "o", "repo": "r"})
    assert repo.data["full_name"] == "o/r" and repo.data["stargazers_count"] == 5
    assert server.seen[-1]["headers"]["Authorization"] == "Bearer t0ken"
    issues = await tool.execute(
        {"action": "list_issues", "owner": "o", "repo": "r", "state": "all"}
    )
    assert [i["number"] for i in issues.data["issues"]] == [7]  # the pull request is left out
    assert "state=all" in server.seen[-1]["path"]
    issue = await tool.execute({"action": "get_issue", "owner": "o", "repo": "r", "number": 7})
    assert issue.data["labels"] == ["bug"] and issue.data["author"] == "ada"
    pulls = await tool.execute({"action": "list_pulls", "owner": "o", "repo": "r"})
    assert pulls.data["pulls"][0]["head"] == "fix"
    pull = await tool.execute({"action": "get_pull", "owner": "o", "repo": "r", "number": 8})
    assert pull.data["base"] == "main"


async def test_create_issue_posts_and_needs_confirmation(server: LocalServer) -> None:
    server.json(
        "POST", "/api/v3/repos/o/r/issues", {**ISSUE, "number": 9, "title": "New"}, status=201
    )
    tool = github(server)
    assert tool.definition.confirm_actions == ("create_issue",)
    created = await tool.execute({"action": "create_issue", "owner": "o", "repo": "r",
                                  "title": "New", "body": "text", "labels": ["bug"]})  # fmt: skip
    assert created.data["number"] == 9
    assert json.loads(server.seen[-1]["body"]) == {
        "title": "New",
        "body": "text",
        "labels": ["bug"],
    }


async def test_auth_rate_limit_and_missing_are_clear(server: LocalServer) -> None:
    server.json("GET", "/api/v3/repos/o/bad", {"message": "Bad credentials"}, status=401)
    server.json("GET", "/api/v3/repos/o/limited", {"message": "API rate limit exceeded"}, status=403,
                **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1790000000"})  # fmt: skip
    tool = github(server)
    denied = await tool.execute({"action": "repo", "owner": "o", "repo": "bad"})
    assert denied.error is not None and denied.error.type == "denied"
    assert "check builtin.github.token" in denied.error.message
    limited = await github(server, token=None).execute(
        {"action": "repo", "owner": "o", "repo": "limited"}
    )
    assert limited.error is not None and limited.error.type == "unavailable"
    assert (
        "resets at 2026-09-21T" in limited.error.message
        and "builtin.github.token" in limited.error.message
    )
    missing = await tool.execute({"action": "repo", "owner": "o", "repo": "nothing"})
    assert missing.error is not None and missing.error.type == "validation"
    invalid = await tool.execute({"action": "repo", "owner": "../x", "repo": "r"})
    assert invalid.error is not None and invalid.error.type == "validation"
