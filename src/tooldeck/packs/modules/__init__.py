"""Modules (seed 000): tools an agent or a person writes, validates, installs and versions.

This package holds the on-disk model so far: ``versions`` (a module's versions, the
active one, drafts, attestations). The pipeline and admin tools build on it.
"""

from tooldeck.packs.modules.versions import Attestation, ModuleVersions, VersionInfo, content_hash

__all__ = ["Attestation", "ModuleVersions", "VersionInfo", "content_hash"]
