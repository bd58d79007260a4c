"""``github``: repositories, issues and pull requests through the GitHub REST API.

Example::

    await tool.execute({"action": "list_issues", "owner": "octo", "repo": "hello", "state": "open"})
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.exceptions import (
    InvalidArgumentsError,
    ToolDeniedError,
    ToolFailure,
    ToolUnavailableError,
    TransientToolError,
)
from tooldeck.packs.builtin.config import GitHubConfig
from tooldeck.packs.builtin.http_client import http_client

__all__ = ["GitHubTool"]

_NAME = r"^[A-Za-z0-9_.\-]{1,100}$"


class RepoRequest(BaseModel):
    """A repository."""

    owner: str = Field(pattern=_NAME, description="User or organisation, e.g. `octocat`.")
    repo: str = Field(pattern=_NAME, description="Repository name, e.g. `hello-world`.")


class ListRequest(RepoRequest):
    """Arguments of ``list_issues`` and ``list_pulls``."""

    state: Literal["open", "closed", "all"] = Field("open", description="Which to list.")
    per_page: int = Field(20, ge=1, le=100, description="How many to return.")


class NumberRequest(RepoRequest):
    """Arguments of ``get_issue`` and ``get_pull``."""

    number: int = Field(ge=1, description="Issue or pull request number.")


class CreateIssueRequest(RepoRequest):
    """Arguments of ``create_issue``."""

    title: str = Field(min_length=1, max_length=256, description="Issue title.")
    body: str = Field("", max_length=65_536, description="Issue text (Markdown).")
    labels: list[str] = Field(default_factory=list, description="Label names.")


def _issue(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "number": item.get("number"),
        "title": item.get("title"),
        "state": item.get("state"),
        "author": (item.get("user") or {}).get("login"),
        "labels": [label.get("name") for label in item.get("labels") or []],
        "comments": item.get("comments"),
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "url": item.get("html_url"),
        "body": item.get("body"),
    }


def _pull(item: dict[str, Any]) -> dict[str, Any]:
    return {
        **_issue(item),
        "draft": item.get("draft"),
        "merged": item.get("merged"),
        "head": (item.get("head") or {}).get("ref"),
        "base": (item.get("base") or {}).get("ref"),
    }


class _GitHubAction(ActionStrategy):
    def __init__(self, config: GitHubConfig) -> None:
        self.config = config

    async def request(self, ctx: ToolContext, method: str, path: str, **kwargs: Any) -> Any:
        """Send ``method path`` to the API and return the decoded JSON body.

        Raises:
            ToolFailure: the error ``_check`` chose for a failed response.
            TransientToolError: the request did not get an answer.
        """
        config = self.config
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "tooldeck",
        }
        if config.token is not None:
            headers["Authorization"] = f"Bearer {config.token.get_secret_value()}"
        url = f"{config.base_url.rstrip('/')}{path}"
        try:
            async with http_client(ctx) as client:
                response = await client.request(
                    method, url, headers=headers, timeout=config.timeout_s, **kwargs
                )
        except httpx.HTTPError as exc:
            raise TransientToolError(f"GitHub API request failed: {exc}") from None
        _check(response, path, authenticated=config.token is not None)
        return response.json()


def _check(response: httpx.Response, path: str, *, authenticated: bool) -> None:
    """Raise the error envelope for a failed GitHub response."""
    status = response.status_code
    if status < 400:
        return
    try:
        message = response.json().get("message", "")
    except ValueError:
        message = response.text[:200]
    remaining = response.headers.get("x-ratelimit-remaining")
    if status in (403, 429) and (remaining == "0" or "rate limit" in message.lower()):
        reset = response.headers.get("x-ratelimit-reset")
        when = (
            datetime.fromtimestamp(int(reset), UTC).isoformat()
            if reset and reset.isdigit()
            else "later"
        )
        raise ToolUnavailableError(
            f"GitHub rate limit exceeded; it resets at {when}"
            + ("" if authenticated else ". Set builtin.github.token for a higher limit"),
            details={"status_code": status, "reset": reset},
        )
    if status == 401:
        raise ToolDeniedError(
            f"GitHub authentication failed ({message or 'bad credentials'}); check "
            "builtin.github.token",
            details={"status_code": status},
        )
    if status == 403:
        raise ToolDeniedError(
            f"GitHub refused {path}: {message} (the token lacks a permission?)",
            details={"status_code": status},
        )
    if status == 404:
        raise InvalidArgumentsError(
            f"GitHub has no {path}"
            + ("" if authenticated else " (or it is private: set builtin.github.token)"),
            details={"status_code": status},
        )
    if status == 422:
        raise InvalidArgumentsError(
            f"GitHub rejected the request: {message}; {response.json().get('errors', '')}",
            details={"status_code": status},
        )
    error = TransientToolError if status >= 500 else ToolFailure
    raise error(f"GitHub answered HTTP {status}: {message}", details={"status_code": status})


class Repository(_GitHubAction):
    """Repository facts."""

    name = "repo"
    description = "A repository's description, stars, forks, open issues, default branch."
    RequestModel = RepoRequest

    async def run(self, request: RepoRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the repository's main fields."""
        data = await self.request(ctx, "GET", f"/repos/{request.owner}/{request.repo}")
        keys = ("full_name", "description", "stargazers_count", "forks_count",
                "open_issues_count", "default_branch", "language", "html_url",
                "private", "archived", "updated_at")  # fmt: skip
        return {key: data.get(key) for key in keys}


class ListIssues(_GitHubAction):
    """List issues."""

    name = "list_issues"
    description = "List issues (pull requests excluded)."
    RequestModel = ListRequest

    async def run(self, request: ListRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{issues: [...]}``."""
        data = await self.request(
            ctx,
            "GET",
            f"/repos/{request.owner}/{request.repo}/issues",
            params={"state": request.state, "per_page": request.per_page},
        )
        return {"issues": [_issue(i) for i in data if "pull_request" not in i]}


class GetIssue(_GitHubAction):
    """One issue."""

    name = "get_issue"
    description = "One issue with its text."
    RequestModel = NumberRequest

    async def run(self, request: NumberRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the issue."""
        path = f"/repos/{request.owner}/{request.repo}/issues/{request.number}"
        data = await self.request(ctx, "GET", path)
        return _issue(data)


class CreateIssue(_GitHubAction):
    """Open an issue (needs confirmation)."""

    name = "create_issue"
    description = "Open a new issue."
    RequestModel = CreateIssueRequest
    requires_confirmation = True

    async def run(self, request: CreateIssueRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the new issue."""
        body: dict[str, Any] = {"title": request.title, "body": request.body}
        if request.labels:
            body["labels"] = request.labels
        path = f"/repos/{request.owner}/{request.repo}/issues"
        data = await self.request(ctx, "POST", path, json=body)
        return _issue(data)


class ListPulls(_GitHubAction):
    """List pull requests."""

    name = "list_pulls"
    description = "List pull requests."
    RequestModel = ListRequest

    async def run(self, request: ListRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{pulls: [...]}``."""
        data = await self.request(
            ctx,
            "GET",
            f"/repos/{request.owner}/{request.repo}/pulls",
            params={"state": request.state, "per_page": request.per_page},
        )
        return {"pulls": [_pull(p) for p in data]}


class GetPull(_GitHubAction):
    """One pull request."""

    name = "get_pull"
    description = "One pull request with its text, branches and merge state."
    RequestModel = NumberRequest

    async def run(self, request: NumberRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the pull request."""
        path = f"/repos/{request.owner}/{request.repo}/pulls/{request.number}"
        data = await self.request(ctx, "GET", path)
        return _pull(data)


class GitHubTool(CompositeTool):
    """GitHub's REST API: repository info, issues, pull requests.

    Semantics:
        Authenticates with ``token`` when configured; ``base_url`` points it at GitHub
        Enterprise. Failures: rate limit → ``unavailable`` with the reset time; bad
        token → ``denied``; missing repository/issue → ``validation``; 5xx and
        network errors → retryable ``execution``. ``create_issue`` needs confirmation.
    """

    name = "github"
    source_id = "tool:github:v1"
    description = (
        "GitHub: actions repo, list_issues, get_issue, create_issue, list_pulls, "
        "get_pull (owner, repo, number, state)."
    )
    annotations = ToolAnnotations(title="GitHub", read_only=False, open_world=True)
    tags = ("builtin", "github")

    def __init__(self, config: GitHubConfig) -> None:
        actions = (Repository, ListIssues, GetIssue, CreateIssue, ListPulls, GetPull)
        super().__init__([action(config) for action in actions])
