"""``/api/modules``: the installed modules, their versions, drafts and validations (read only).

The console's Modules page reads it. Every change (a draft, a validation, an install,
a rollback) goes through the ``module_admin`` and ``module_pipeline`` tools like any
call, so confirmation, policies and the audit apply. Served with ``[packs.modules]
admin = true`` only.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel

from tooldeck.core.context import principal_of
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.modules.runner import served_summary
from tooldeck.packs.modules.versions import ModuleVersions
from tooldeck.server.http import call_context, problems

__all__ = ["modules_router"]


class Draft(BaseModel):
    """A draft, and its last validation since its last edit (None: not validated)."""

    draft_id: str
    passed: bool | None = None
    content_hash: str | None = None
    validated_at: str | None = None
    checks: list[dict[str, Any]] = []
    """``{name, passed, output}`` each, in the order they ran."""


class Module(BaseModel):
    """A module: its active version, every installed version, its drafts."""

    module_id: str
    active_version: str | None
    description: str = ""
    """The active version's ``module.toml`` description ("" when none is active)."""
    tools: list[str] = []
    """The active version's tools."""
    versions: list[dict[str, Any]]
    """``{version_id, content_hash, installed_at, installed_by, active}``, oldest first."""
    drafts: list[Draft]
    history: list[dict[str, Any]]
    """Who installed, rolled back or uninstalled what, and when; oldest first."""


def modules_router(versions: ModuleVersions, admins: Collection[str]) -> APIRouter:
    """The routes over the modules in ``versions``, for ``admins`` only (403 otherwise)."""

    def admin_only(request: Request) -> None:
        principal = principal_of(call_context(request))
        if principal not in admins:
            raise HTTPException(403, f"the modules are for the module admins; not {principal!r}")

    router = APIRouter(
        prefix="/api/modules",
        tags=["modules"],
        dependencies=[Depends(admin_only)],
        responses=problems(403, e403="The caller is not one of [packs.modules] admins."),
    )

    def module(module_id: str) -> Module:
        drafts = []
        for draft_id in versions.drafts(module_id):
            try:
                attestation, report = versions.validation(module_id, draft_id)
            except InvalidArgumentsError:  # not validated since its last edit
                drafts.append(Draft(draft_id=draft_id))
                continue
            drafts.append(
                Draft(
                    draft_id=draft_id,
                    passed=attestation.passed,
                    content_hash=attestation.content_hash,
                    validated_at=attestation.validated_at,
                    checks=report,
                )
            )
        description, tools = served_summary(versions.root, module_id)
        return Module(
            module_id=module_id,
            active_version=versions.active(module_id),
            description=description,
            tools=tools,
            versions=[asdict(v) for v in versions.versions(module_id)],
            drafts=drafts,
            history=versions.history(module_id),
        )

    @router.get("", summary="Modules", response_model=list[Module])
    async def modules() -> list[Module]:
        """Every module with its versions, drafts, validations and history."""
        return [module(m) for m in versions.modules()]

    @router.get(
        "/{module_id}/drafts/{draft_id}/diff",
        summary="A draft's diff",
        responses=problems(404, e404="No such module or draft (the detail lists them)."),
    )
    async def diff(module_id: str, draft_id: str) -> dict[str, str]:
        """``{diff}``: unified, from the active version to the draft."""
        try:
            return {"diff": versions.diff_draft(module_id, draft_id)}
        except InvalidArgumentsError as exc:
            raise HTTPException(404, str(exc)) from None

    return router
