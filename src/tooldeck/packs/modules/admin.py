"""``module_admin``: list, draft, diff, validate, promote and roll back modules (seed 000).

One ``CompositeTool`` for what seed 000 spread over many tools: ``list``,
``list_versions``, ``create_draft``, ``edit_draft``, ``diff_draft``, ``delete_draft``,
``validate_draft``, ``promote_draft``, ``rollback_version``, ``disable``, ``enable``,
``uninstall`` and ``store_credentials``. Every dependency is
given to it (the versions on disk, the credential store); nothing is global.

``validate_draft`` runs the static checks and the checks in the sandbox
(``validation.py``) and keeps the attestation beside the draft
(``<module>/attestations/<draft>.json``, outside the content it vouches for; an edit
drops it); ``promote_draft`` installs the draft only with a passing attestation of
exactly its current content. ``promote_draft``, ``rollback_version``, ``enable``,
``uninstall`` and ``store_credentials`` change what runs, what it can reach or delete a
module: a person approves each call (``confirm_actions``). A change takes effect in the running server through
``on_change`` (the runtime reloads the modules), else at the next start.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy
from tooldeck.core.context import ANONYMOUS, ToolContext, principal_of
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.definition import ToolAnnotations
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.modules.access import ModulesTool
from tooldeck.packs.modules.validation import ModuleValidator, validate_draft
from tooldeck.packs.modules.versions import ModuleVersions

__all__ = ["ModuleAdminTool"]

_MODULE_ID = Field(description="The module's id (lower case, e.g. `weather`).")
_DRAFT_ID = Field(description="The draft's id, as create_draft returned it.")


class _Module(BaseModel):
    module_id: str = _MODULE_ID


class _Draft(_Module):
    draft_id: str = _DRAFT_ID


class _CreateDraft(_Module):
    files: dict[str, str] = Field(
        default_factory=dict,
        description="For a new module: relative path → content (module.toml, tools.py). "
        "For an installed one, leave empty: the draft starts as a copy of it.",
    )


class _EditDraft(_Draft):
    file_path: str = Field(description="Relative path inside the draft, e.g. `tools.py`.")
    content: str = Field(description="The file's whole new content.")


class _Rollback(_Module):
    target_version_id: str = Field(description="A version id from list_versions.")


class _StoreCredentials(_Module):
    api_key: str = Field("", description="The module's API key.")
    credentials_json: str = Field("", description="Or its credentials as a JSON object.")


class _Action(ActionStrategy):
    open_to_all = False
    """Whether a caller who is not a module admin may run it (``access.py``)."""

    def __init__(self, tool: ModuleAdminTool) -> None:
        self.tool = tool

    @property
    def versions(self) -> ModuleVersions:
        return self.tool.versions


class _List(_Action):
    name = "list"
    open_to_all = True
    description = "The modules, each with its active version (none: not installed)."
    RequestModel = BaseModel

    def run(self, request: BaseModel, ctx: ToolContext) -> dict[str, Any]:
        """``{modules: [{module_id, active_version}]}``."""
        return {
            "modules": [
                {"module_id": m, "active_version": self.versions.active(m)}
                for m in self.versions.modules()
            ]
        }


class _ListVersions(_Action):
    name = "list_versions"
    description = "A module's installed versions, oldest first, and who installed each."
    RequestModel = _Module

    def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, versions: [VersionInfo]}``."""
        return {
            "module_id": request.module_id,
            "versions": [asdict(v) for v in self.versions.versions(request.module_id)],
        }


class _CreateDraftAction(_Action):
    name = "create_draft"
    description = "Start a draft: a copy of the installed version, or the files of a new module."
    RequestModel = _CreateDraft

    def run(self, request: _CreateDraft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id}``."""
        draft_id = self.versions.create_draft(request.module_id, request.files or None)
        return {"module_id": request.module_id, "draft_id": draft_id}


class _EditDraftAction(_Action):
    name = "edit_draft"
    description = "Write one file of a draft (its whole content)."
    RequestModel = _EditDraft

    def run(self, request: _EditDraft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, file_path, bytes}``."""
        self.versions.edit_draft(
            request.module_id, request.draft_id, request.file_path, request.content
        )
        return {**request.model_dump(exclude={"content"}), "bytes": len(request.content.encode())}


class _DiffDraft(_Action):
    name = "diff_draft"
    description = "The unified diff from the installed version to the draft."
    RequestModel = _Draft

    def run(self, request: _Draft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, diff}``."""
        diff = self.versions.diff_draft(request.module_id, request.draft_id)
        return {**request.model_dump(), "diff": diff}


class _DeleteDraft(_Action):
    name = "delete_draft"
    description = "Delete a draft (and its validation)."
    RequestModel = _Draft

    def run(self, request: _Draft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, deleted: true}``."""
        self.versions.delete_draft(request.module_id, request.draft_id)
        return {**request.model_dump(), "deleted": True}


class _ValidateDraft(_Action):
    name = "validate_draft"
    description = (
        "Check a draft: static checks, then in the sandbox its import, export, own tests "
        "and one call per tool; a pass can be promoted."
    )
    RequestModel = _Draft

    async def run(self, request: _Draft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, draft_id, passed, content_hash, checks: [{name, passed, output}]}``."""
        return await validate_draft(
            self.versions, self.tool.validator(), request.module_id, request.draft_id
        )


class _PromoteDraft(_Action):
    name = "promote_draft"
    description = "Install a validated draft as the new active version."
    RequestModel = _Draft
    requires_confirmation = True

    def run(self, request: _Draft, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, version_id}``."""
        version = self.versions.install_validated(
            request.module_id, request.draft_id, by=principal_of(ctx)
        )
        self.tool.changed()
        return {"module_id": request.module_id, "version_id": version}


class _RollbackVersion(_Action):
    name = "rollback_version"
    description = "Make an earlier installed version the active one again."
    RequestModel = _Rollback
    requires_confirmation = True

    def run(self, request: _Rollback, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, version_id}``."""
        self.versions.rollback(request.module_id, request.target_version_id, by=principal_of(ctx))
        self.tool.changed()
        return {"module_id": request.module_id, "version_id": request.target_version_id}


class _Disable(_Action):
    name = "disable"
    description = "Stop serving a module (its versions stay: enable serves it again)."
    RequestModel = _Module

    def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, disabled}``: whether it was being served."""
        done = self.versions.disable(request.module_id, by=principal_of(ctx))
        self.tool.changed()
        return {"module_id": request.module_id, "disabled": done}


class _Enable(_Action):
    name = "enable"
    description = "Serve a disabled module again (the version it had)."
    RequestModel = _Module
    requires_confirmation = True

    def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, version_id}``."""
        version = self.versions.enable(request.module_id, by=principal_of(ctx))
        self.tool.changed()
        return {"module_id": request.module_id, "version_id": version}


class _Uninstall(_Action):
    name = "uninstall"
    description = "Remove a module: its versions, drafts and history (disable keeps them)."
    RequestModel = _Module
    requires_confirmation = True

    def run(self, request: _Module, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, uninstalled: true}``."""
        self.versions.uninstall(request.module_id)
        self.tool.changed()
        return {"module_id": request.module_id, "uninstalled": True}


class _StoreCredentialsAction(_Action):
    name = "store_credentials"
    open_to_all = True  # the caller's own key
    description = "Store the module's API key (or credentials JSON) for the calling user."
    RequestModel = _StoreCredentials
    requires_confirmation = True

    def run(self, request: _StoreCredentials, ctx: ToolContext) -> dict[str, Any]:
        """``{module_id, stored: true}``; the secret is never returned or recorded."""
        secret = request.api_key or request.credentials_json
        if not secret:
            raise InvalidArgumentsError.for_field("api_key", "give api_key or credentials_json")
        if request.credentials_json:
            try:
                json.loads(request.credentials_json)
            except ValueError:
                raise InvalidArgumentsError.for_field(
                    "credentials_json", "is not JSON (give an object, or use api_key)"
                ) from None
        self.tool.credentials().put(principal_of(ctx), f"module:{request.module_id}", secret)
        return {"module_id": request.module_id, "stored": True}


_ACTIONS: tuple[type[_Action], ...] = (
    _List,
    _ListVersions,
    _CreateDraftAction,
    _EditDraftAction,
    _DiffDraft,
    _DeleteDraft,
    _ValidateDraft,
    _PromoteDraft,
    _RollbackVersion,
    _Disable,
    _Enable,
    _Uninstall,
    _StoreCredentialsAction,
)


class ModuleAdminTool(ModulesTool):
    """The ``module_admin`` tool (see the module docstring).

    Args:
        versions: The modules on disk.
        credentials: Opens the credential store (called on first use).
        validator: Gives the validator (its sandbox starts on first use).
        on_change: Called after an install, rollback or uninstall (the runtime
            reloads the modules); None: the change shows at the next start.
        admins: Who may run the actions other than ``list`` and ``store_credentials``
            (``access.py``).
    """

    name = "module_admin"
    source_id = "tool:module_admin:v1"
    description = (
        "Manage modules (tools written as code): list, list_versions, create_draft, "
        "edit_draft, diff_draft, delete_draft, validate_draft, promote_draft (install a validated "
        "draft), rollback_version, disable, enable, uninstall, store_credentials."
    )
    annotations = ToolAnnotations(title="Modules", read_only=False, destructive=True)
    tags = ("modules",)
    effects = ("destructive",)  # installs code that then runs (sandboxed) for every user

    def __init__(
        self,
        versions: ModuleVersions,
        credentials: Callable[[], CredentialStore],
        validator: Callable[[], ModuleValidator],
        on_change: Callable[[], None] | None = None,
        admins: Collection[str] = (ANONYMOUS,),
    ) -> None:
        self.credentials = credentials
        self.validator = validator
        super().__init__(versions, [action(self) for action in _ACTIONS], on_change, admins)
