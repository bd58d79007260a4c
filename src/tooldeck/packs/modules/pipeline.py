"""``module_pipeline``: build a module, write its code, repair, validate and install it (seed 000).

One ``CompositeTool`` for the path from a description to a served tool:

- ``build``: a new module from a template (``module.toml``, ``tools.py``, ``test_tools.py``);
  when the ``llm`` tool is there, the model drafts ``tools.py`` from the description.
- ``write_code``: replace a file of the module's draft (``tools.py`` by default).
- ``validate``: the static checks and the checks in the sandbox (``validation.py``); the
  report and an attestation (the content hash of exactly what passed) are kept.
- ``repair``: the model gets the code and the last report and writes a fix (needs ``llm``).
- ``install``: the draft becomes the active version, only when the ``content_hash`` given
  is the one a passing validation attested and the draft still has that content; a
  person approves first (``confirm_actions``).

Each action works on the module's newest draft unless ``draft_id`` names another; the
drafts, diffs and rollbacks are ``module_admin``'s. The model is reached through the
caller's own view of the tools (``ToolViews``), so its policies, audit and confirmation
apply to the ``llm`` calls too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy
from tooldeck.core.context import ANONYMOUS, ToolContext, principal_of
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.tool import ToolViews
from tooldeck.exceptions import InvalidArgumentsError, ToolFailure, ToolUnavailableError
from tooldeck.packs.modules.access import ModulesTool
from tooldeck.packs.modules.manifest import MANIFEST
from tooldeck.packs.modules.validation import ModuleValidator, validate_draft
from tooldeck.packs.modules.versions import ModuleVersions, texts

__all__ = ["ModulePipelineTool"]

_MODULE_ID = Field(description="The module's id (lower case, e.g. `weather`).")
_DRAFT_ID = Field(None, description="A draft id; default: the module's newest draft.")


class _Module(BaseModel):
    module_id: str = _MODULE_ID
    draft_id: str | None = _DRAFT_ID


class _Build(BaseModel):
    name: str = Field(description="The module's id: lower case, digits and _, e.g. `weather`.")
    description: str = Field(min_length=1, max_length=2000, description="What it does.")
    kind: Literal["tool", "context_adapter"] = "tool"
    category: str | None = Field(None, description="For a context adapter: its category.")
    api_url: str | None = Field(None, description="The API it wraps, e.g. https://api.x.com.")
    hosts: list[str] = Field(
        default_factory=list, description="Hosts its code may reach; default: api_url's host."
    )
    requires_api_key: bool = False
    auth_type: Literal["api_key", "bearer", "basic", "none"] = "none"


class _WriteCode(_Module):
    code: str = Field(description="The file's whole new content.")
    file_path: str = Field("tools.py", description="Which file of the module.")


class _Install(_Module):
    content_hash: str = Field(
        description="The content_hash a passing validate returned for this draft."
    )


class _Action(ActionStrategy):
    def __init__(self, tool: ModulePipelineTool) -> None:
        self.tool = tool

    @property
    def versions(self) -> ModuleVersions:
        return self.tool.versions

    def draft(self, request: _Module) -> str:
        return request.draft_id or self.versions.latest_draft(request.module_id)


class _BuildAction(_Action):
    name = "build"
    description = "Start a new module from a template (the model drafts its code if there is one)."
    RequestModel = _Build

    async def run(self, request: _Build, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, files: [paths], drafted_by: "template" | "llm"}``.

        When the model cannot write the code, the template is kept and ``model_error``
        says why.
        """
        if request.name in self.versions.modules():
            raise InvalidArgumentsError.for_field(
                "name", f"module {request.name!r} exists; use module_admin create_draft"
            )
        files = _template(request)
        drafted: dict[str, Any] = {"drafted_by": "template"}
        if await self.tool.has_model(ctx):
            prompt = (
                f"Write tools.py for a tooldeck module named {request.name!r}: "
                f"{request.description}\nAPI: {request.api_url or 'none'}; hosts it may "
                f"reach: {', '.join(_hosts(request)) or 'none'}. Start from this template "
                "and keep its shape (a @tool function, arguments with Field(examples=[...]))."
            )
            try:
                files["tools.py"] = await self.tool.write_with_model(
                    prompt, {"template": files["tools.py"]}, ctx
                )
                drafted = {"drafted_by": "llm"}
            except ToolFailure as exc:  # the template stays: nothing is lost
                drafted["model_error"] = str(exc)
        draft_id = self.versions.create_draft(request.name, files)
        return {"module_id": request.name, "draft_id": draft_id, "files": sorted(files), **drafted}


class _WriteCodeAction(_Action):
    name = "write_code"
    description = "Replace one file of the module's draft (tools.py by default)."
    RequestModel = _WriteCode

    def run(self, request: _WriteCode, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, file_path, bytes}``; the draft must be validated again."""
        draft_id = self.draft(request)
        self.versions.edit_draft(request.module_id, draft_id, request.file_path, request.code)
        return {
            "module_id": request.module_id,
            "draft_id": draft_id,
            "file_path": request.file_path,
            "bytes": len(request.code.encode()),
        }


class _Validate(_Action):
    name = "validate"
    description = (
        "Validate the draft: static checks, then in the sandbox import, export, its own "
        "tests and one call per tool. Returns each check and the content_hash to install."
    )
    RequestModel = _Module

    async def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, passed, content_hash, checks: [{name, passed, output}]}``."""
        return await validate_draft(
            self.versions, self.tool.validator(), request.module_id, self.draft(request)
        )


class _Repair(_Action):
    name = "repair"
    description = "Have the model fix tools.py from the last validation report (validate first)."
    RequestModel = _Module

    async def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, file_path: "tools.py", bytes}``; validate again after."""
        draft_id = self.draft(request)
        attestation, report = self.versions.validation(request.module_id, draft_id)
        if attestation.passed:
            raise InvalidArgumentsError(
                f"draft {draft_id!r} passed its validation: nothing to repair; install it"
            )
        failed = [c for c in report if not c.get("passed")]
        files = texts(self.versions.draft_path(request.module_id, draft_id))
        code = await self.tool.write_with_model(
            "This tooldeck module failed validation. Fix tools.py so every check passes; "
            "keep its tools' names and arguments unless a check says otherwise.",
            {"files": files, "failed_checks": failed},
            ctx,
        )
        self.versions.edit_draft(request.module_id, draft_id, "tools.py", code)
        return {
            "module_id": request.module_id,
            "draft_id": draft_id,
            "file_path": "tools.py",
            "bytes": len(code.encode()),
        }


class _InstallAction(_Action):
    name = "install"
    description = "Install the validated draft as the module's active version."
    RequestModel = _Install
    requires_confirmation = True

    def run(self, request: _Install, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, version_id}``."""
        version = self.versions.install_validated(
            request.module_id,
            self.draft(request),
            by=principal_of(ctx),
            content_hash=request.content_hash,
        )
        self.tool.changed()
        return {"module_id": request.module_id, "version_id": version}


_ACTIONS: tuple[type[_Action], ...] = (
    _BuildAction,
    _WriteCodeAction,
    _Validate,
    _Repair,
    _InstallAction,
)


class ModulePipelineTool(ModulesTool):
    """The ``module_pipeline`` tool (see the module docstring).

    Args:
        versions: The modules on disk.
        validator: Gives the validator (its sandbox starts on first use).
        on_change: Called after an install (the runtime reloads the modules).
        model_tool: The tool that writes text (``llm``), called through the caller's view.
        admins: Who may run it (``access.py``).
    """

    name = "module_pipeline"
    source_id = "tool:module_pipeline:v1"
    description = (
        "Write new tools as code: build (a module from a description), write_code, "
        "validate (in a sandbox), repair (the model fixes what validation reported), "
        "install (a validated draft, with its content_hash)."
    )
    annotations = ToolAnnotations(title="Module pipeline", read_only=False, destructive=True)
    tags = ("modules",)
    effects = ("destructive",)  # installs code that then runs (sandboxed) for every user

    def __init__(
        self,
        versions: ModuleVersions,
        validator: Callable[[], ModuleValidator],
        on_change: Callable[[], None] | None = None,
        model_tool: str = "llm",
        admins: Collection[str] = (ANONYMOUS,),
    ) -> None:
        self.validator = validator
        self.model_tool = model_tool
        super().__init__(versions, [action(self) for action in _ACTIONS], on_change, admins)

    async def has_model(self, ctx: ToolContext) -> bool:
        """Whether the caller can reach the model tool."""
        views = ctx.services.get_optional(ToolViews)  # type: ignore[type-abstract]
        return views is not None and self.model_tool in await views.names(ctx.profile)

    async def write_with_model(self, prompt: str, context: dict[str, Any], ctx: ToolContext) -> str:
        """Python source the model writes for ``prompt`` (its first code block, if fenced).

        Raises:
            ToolUnavailableError: the caller cannot reach the model tool.
            ToolFailure: the model's call failed, or it wrote no code.
        """
        if not await self.has_model(ctx):
            raise ToolUnavailableError(
                f"writing code needs the {self.model_tool!r} tool (configure [builtin.llm] "
                "with a model); or write the code yourself with write_code"
            )
        views = ctx.services.get(ToolViews)  # type: ignore[type-abstract]
        result = await views.view(ctx.profile).execute(
            self.model_tool,
            {"prompt": prompt, "context": context, "system": _SYSTEM},
            ctx.derive(request_id=None),
        )
        if result.status != "success" or not isinstance(result.data, dict):
            message = result.error.message if result.error else "no text"
            raise ToolFailure(f"the model could not write the code: {message}")
        code = _code_of(str(result.data.get("text", "")))
        if not code.strip():
            raise ToolFailure("the model's answer held no code; try again or use write_code")
        return code


_SYSTEM = (
    "You write Python modules for tooldeck. Answer with the whole file in one ```python "
    "block. Tools are functions decorated with `from tooldeck import tool`, typed, with a "
    "docstring; each argument has `Field(examples=[...])`. Reach the network only with "
    "httpx and only the declared hosts; no subprocess, ctypes, eval, exec or files "
    "outside the module."
)
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def _code_of(text: str) -> str:
    """The first fenced code block of ``text``, else the whole text."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def _hosts(request: _Build) -> list[str]:
    if request.hosts:
        return request.hosts
    if request.api_url:
        host = re.sub(r"^[a-z]+://", "", request.api_url).split("/")[0].split("@")[-1]
        return [host] if host else []
    return []


def _template(request: _Build) -> dict[str, str]:
    """The files of a new module: manifest, one tool, one test."""
    summary = _docstring(request.description)
    lines = [
        f"name = {_toml(request.name)}",
        f"kind = {_toml(request.kind)}",
        f"description = {_toml(request.description)}",
        'version = "0.1.0"',
        f"requires_api_key = {str(request.requires_api_key).lower()}",
        f"auth_type = {_toml(request.auth_type)}",
        f"hosts = [{', '.join(_toml(h) for h in _hosts(request))}]",
    ]
    if request.category:
        lines.append(f"category = {_toml(request.category)}")
    if request.api_url:
        lines.append(f"api_url = {_toml(request.api_url)}")
    if request.api_url:
        body = (
            f"    async with httpx.AsyncClient(base_url={request.api_url!r}, timeout=10) as client:\n"
            '        response = await client.get("/", params={"q": query})\n'
            "        response.raise_for_status()\n"
            "        return response.json()\n"
        )
        imports = "import httpx\n"
    else:
        body = '    return {"query": query}\n'
        imports = ""
    tools = (
        f'"""{summary}"""\n\n'
        f"{imports}from pydantic import Field\n\nfrom tooldeck import tool\n\n\n"
        "@tool\n"
        f'async def {request.name}(query: str = Field(examples=["example"])) -> dict:\n'
        f'    """{summary}"""\n'
        f"{body}"
    )
    test = (
        f"from .tools import {request.name}\n\n\n"
        "def test_it_is_a_tool():\n"
        f'    assert {request.name}.definition.name == "{request.name}"\n'
    )
    return {MANIFEST: "\n".join(lines) + "\n", "tools.py": tools, "test_tools.py": test}


def _docstring(text: str) -> str:
    """``text`` safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', "'''")


def _toml(value: str) -> str:
    """A TOML basic string."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
