"""``/api/catalog``: every tool grouped by provider, as one profile sees it (the tools UI's index)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from tooldeck.server.http import PROFILE, problems, runtime_of, view_of

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["tools"])


@router.get(
    "/catalog",
    summary="Tools by provider, for a profile",
    responses=problems(404),
    openapi_extra={"parameters": [PROFILE]},
)
async def catalog(request: Request) -> dict[str, Any]:
    """Every tool, grouped by provider, marked as the ``?profile=`` view sees it.

    Returns ``{"profile", "profiles": [{"name", "description"}], "providers": [{"id",
    "kind": "local" | "mcp", "error", "tools": [definition + "visible",
    "unavailable"]}]}``. A tool outside the profile's view has ``visible: false``; a
    visible tool's ``requires_confirmation`` is the profile's (policy and ``confirm``
    globs included).
    """
    runtime = runtime_of(request)
    view = view_of(request)
    seen = {d.name: d for d in await view.all_definitions()}
    hidden = view.unavailable()
    groups: dict[str, dict[str, Any]] = {
        "local": {"id": "local", "kind": "local", "error": None, "tools": []}
    }
    for sid, provider in runtime.mcp.items():
        groups[sid] = {"id": sid, "kind": "mcp", "error": provider.last_error, "tools": []}
    for definition in sorted(await runtime.provider.all_definitions(), key=lambda d: d.name):
        shown = seen.get(definition.name, definition)
        group = groups[definition.server_id or "local"]
        group["tools"].append(
            {
                **shown.model_dump(mode="json"),
                "visible": definition.name in seen,
                "unavailable": hidden.get(definition.name),
            }
        )
    profiles = runtime.settings.profiles
    return {
        "profile": request.query_params.get("profile"),
        "profiles": [
            {"name": n, "description": p.description} for n, p in sorted(profiles.items())
        ],
        "providers": list(groups.values()),
    }
