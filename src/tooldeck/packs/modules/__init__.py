"""Modules (seed 000): tools an agent or a person writes, validates, installs and versions.

``manifest`` (``module.toml``), ``versions`` (a module's versions, the active one,
drafts, attestations), ``checks`` (the static checks), ``validation`` (the checks in
the sandbox, ``_validate.py`` being what runs there), ``pipeline`` (``module_pipeline``:
build, write code, repair, validate, install), ``admin`` (``module_admin``: drafts,
diffs, versions, rollbacks, credentials) and ``pack`` (the installed modules, served).
The tools and the validator import the sandbox: import them from their modules.
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
