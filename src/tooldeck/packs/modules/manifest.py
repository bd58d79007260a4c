"""A module's manifest (``module.toml``): what it is, what it needs, what it may reach.

    name = "weather"
    kind = "tool"                       # or "context_adapter" (then: category)
    description = "Forecasts from the Open-Meteo API"
    version = "1.0.0"
    entry = "tools.py"                  # the file whose tools are served (it imports the rest)
    requires_api_key = false
    api_url = "https://api.open-meteo.com"
    auth_type = "none"                  # api_key | bearer | basic | none
    hosts = ["api.open-meteo.com"]      # the only hosts its code may reach

Validated with the same strictness as ``tooldeck.toml``: unknown keys are errors that
name the closest known key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tooldeck.core.names import closest_names

__all__ = ["MANIFEST", "ManifestError", "ModuleManifest", "read_manifest"]

MANIFEST = "module.toml"


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the key."""


class ModuleManifest(BaseModel):
    """The ``module.toml`` of a module (seed 000's module metadata)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")
    """The module's id: its folder and its tools' prefix."""
    kind: Literal["tool", "context_adapter"] = "tool"
    category: str | None = None
    """For a context adapter: the ``user_context`` category it serves."""
    description: str = Field(min_length=1, max_length=2000)
    version: str = "0.1.0"
    entry: str = Field("tools.py", pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
    """The file whose tools are served; it imports the module's other files relatively
    (``from . import helpers``)."""
    requires_api_key: bool = False
    """A user must store a key (``tooldeck credentials set module:<name>``) first."""
    api_url: str | None = None
    auth_type: Literal["api_key", "bearer", "basic", "none"] = "none"
    hosts: list[str] = Field(default_factory=list)
    """The hosts its code may reach; none: no network at all."""

    @model_validator(mode="after")
    def _adapter_has_a_category(self) -> Self:
        if self.kind == "context_adapter" and not self.category:
            raise ValueError('a context adapter needs category = "<user_context category>"')
        return self


def read_manifest(folder: Path) -> ModuleManifest:
    """The manifest of the module in ``folder``.

    Raises:
        ManifestError: missing, not TOML, or invalid (each problem with its key).
    """
    path = folder / MANIFEST
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{MANIFEST} is missing: every module has one") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{MANIFEST} is not valid TOML: {exc}") from None
    try:
        return ModuleManifest.model_validate(data)
    except ValidationError as exc:
        problems = []
        known = list(ModuleManifest.model_fields)
        for error in exc.errors(include_url=False):
            key = ".".join(map(str, error["loc"])) or "(manifest)"
            if error["type"] == "extra_forbidden":
                near = closest_names(key, known)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(f"{key}: unknown key{hint}")
            else:
                problems.append(f"{key}: {error['msg']}")
        raise ManifestError(f"{MANIFEST}: " + "; ".join(problems)) from None
