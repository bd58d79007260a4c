"""Modules (seed 000): tools an agent or a person writes, validates, installs and versions.

This package holds, so far: ``manifest`` (``module.toml``), ``versions`` (a module's
versions, the active one, drafts, attestations) and ``checks`` (the static checks a
validation starts with). The pipeline and admin tools build on them.
"""

from tooldeck.packs.modules.checks import Check, attest, static_checks
from tooldeck.packs.modules.manifest import ManifestError, ModuleManifest, read_manifest
from tooldeck.packs.modules.versions import Attestation, ModuleVersions, VersionInfo, content_hash

__all__ = [
    "Attestation",
    "Check",
    "ManifestError",
    "ModuleManifest",
    "ModuleVersions",
    "VersionInfo",
    "attest",
    "content_hash",
    "read_manifest",
    "static_checks",
]
