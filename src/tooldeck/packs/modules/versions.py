"""A module's versions on disk: drafts, attestations, installs and rollbacks (seed 000).

Layout under ``<data_dir>/modules/<module_id>/``::

    versions/<version_id>/...     one folder per installed version, never changed after
    drafts/<draft_id>/...         work in progress (a copy of a version, then edited)
    active                        the active version's id (replaced atomically)
    history.jsonl                 who installed, promoted or rolled back what, and when

A version is installed only with an ``Attestation`` of exactly its content: the SHA-256
of every file's relative path and bytes (``content_hash``), made by a validation. Code
edited after it was validated has another hash and is refused. Switching the active
version is one ``os.replace`` of the ``active`` file: a reader sees the old or the new
id, never neither; loaded code keeps running on the version it was loaded from.

Paths a caller gives (a draft's file) stay inside the draft: absolute paths, ``..``
and links out are refused.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooldeck.exceptions import InvalidArgumentsError

__all__ = ["Attestation", "ModuleVersions", "VersionInfo", "content_hash", "texts"]

_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
"""A module id: what its folder and its tools' prefix are named."""
_SKIPPED = ("__pycache__", ".pytest_cache", ".ruff_cache")
MAX_FILE_BYTES = 256_000
"""Bytes one file of a module may hold."""
MAX_FILES = 100
"""Files a module may have."""
MAX_DRAFTS = 50
"""Drafts a module keeps before one must be deleted."""


@dataclass(frozen=True, kw_only=True)
class Attestation:
    """What a validation vouches for: exactly this content passed these checks."""

    module_id: str
    content_hash: str
    """``content_hash`` of the folder that was validated."""
    checks: Mapping[str, bool]
    """Each check and whether it passed (static checks, import, export, tests, calls)."""
    validated_at: str
    """When (ISO 8601, UTC)."""

    @property
    def passed(self) -> bool:
        """Whether every check passed (and there was at least one)."""
        return bool(self.checks) and all(self.checks.values())


@dataclass(frozen=True, kw_only=True)
class VersionInfo:
    """One installed version."""

    version_id: str
    content_hash: str
    installed_at: str
    installed_by: str
    active: bool


def content_hash(folder: Path) -> str:
    """SHA-256 of every file under ``folder``: sorted relative paths and their bytes.

    Caches (``__pycache__``) are left out; a link is hashed as its target text, so a
    link swapped for another changes the hash.
    """
    digest = hashlib.sha256()
    for path in sorted(_files(folder)):
        relative = path.relative_to(folder).as_posix()
        data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _files(folder: Path) -> Iterator[Path]:
    for path in folder.rglob("*"):
        if any(part in _SKIPPED for part in path.relative_to(folder).parts):
            continue
        if path.is_symlink() or path.is_file():
            yield path


class ModuleVersions:
    """The versions, drafts and active version of the modules under ``root``.

    Args:
        root: ``<data_dir>/modules`` (made 0700 when missing).

    Errors a caller (a person, a model) can fix are ``InvalidArgumentsError`` naming
    the argument and what exists; they become ``validation`` results in a tool.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(mode=0o700, parents=True, exist_ok=True)

    # -- reading --------------------------------------------------------------------------

    def modules(self) -> list[str]:
        """The ids of the modules with at least one version or draft."""
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _ID.match(p.name))

    def active(self, module_id: str) -> str | None:
        """The active version's id, or None (no such module, not installed, disabled)."""
        if not isinstance(module_id, str) or not _ID.match(module_id):
            return None
        if not (self.root / module_id).is_dir():  # one stat, not a listing of every module
            return None
        try:
            return (self._module(module_id) / "active").read_text().strip() or None
        except FileNotFoundError:
            return None

    def active_path(self, module_id: str) -> Path | None:
        """The folder of the active version (what the loader imports), or None."""
        version = self.active(module_id)
        return None if version is None else self._module(module_id) / "versions" / version

    def versions(self, module_id: str) -> list[VersionInfo]:
        """Every installed version, oldest first, the active one marked."""
        active = self.active(module_id)
        installed = {
            e["version_id"]: e for e in self.history(module_id) if e["action"] == "install"
        }
        folder = self._module(module_id) / "versions"
        names = (
            [p.name for p in folder.iterdir() if not p.name.startswith(".")]
            if folder.is_dir()
            else []
        )
        found = sorted(names, key=_version_number)
        return [
            VersionInfo(
                version_id=v,
                content_hash=installed.get(v, {}).get("content_hash", ""),
                installed_at=installed.get(v, {}).get("at", ""),
                installed_by=installed.get(v, {}).get("by", ""),
                active=v == active,
            )
            for v in found
        ]

    def history(self, module_id: str) -> list[dict[str, Any]]:
        """Who installed, rolled back, disabled or enabled what, oldest first."""
        try:
            lines = (self._module(module_id) / "history.jsonl").read_text().splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]

    # -- drafts ---------------------------------------------------------------------------

    def create_draft(self, module_id: str, files: Mapping[str, str] | None = None) -> str:
        """A new draft: a copy of the active version, or ``files`` for a new module.

        Returns the draft's id.

        Raises:
            InvalidArgumentsError: a bad module id, or nothing to start from.
        """
        module = self._module(module_id, create=True)
        drafts = module / "drafts"
        if drafts.is_dir() and sum(1 for _ in drafts.iterdir()) >= MAX_DRAFTS:
            raise InvalidArgumentsError(
                f"module {module_id!r} has {MAX_DRAFTS} drafts, the most it keeps; "
                "delete one first (delete_draft)"
            )
        draft_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"
        draft = module / "drafts" / draft_id
        source = self.active_path(module_id)
        if source is not None:
            shutil.copytree(source, draft, ignore=shutil.ignore_patterns(*_SKIPPED))
        elif files:
            draft.mkdir(parents=True)
        else:
            raise InvalidArgumentsError(
                f"module {module_id!r} has no installed version to copy; give its files"
            )
        for relative, text in (files or {}).items():
            self.edit_draft(module_id, draft_id, relative, text)
        return draft_id

    def draft_path(self, module_id: str, draft_id: str) -> Path:
        """The folder of a draft.

        Raises:
            InvalidArgumentsError: no such draft (the message lists the module's drafts).
        """
        drafts = self._module(module_id) / "drafts"
        path = drafts / draft_id
        if not re.fullmatch(r"[0-9A-Za-z-]{1,64}", draft_id) or not path.is_dir():
            known = sorted(p.name for p in drafts.iterdir()) if drafts.is_dir() else []
            raise InvalidArgumentsError(
                f"module {module_id!r} has no draft {draft_id!r}; drafts: "
                f"{', '.join(known) or 'none'}"
            )
        return path

    def edit_draft(self, module_id: str, draft_id: str, file_path: str, content: str) -> None:
        """Write ``content`` to ``file_path`` inside the draft (folders made as needed).

        Raises:
            InvalidArgumentsError: no such draft, or a path that leaves the draft
                (absolute, ``..``, through a link).
        """
        draft = self.draft_path(module_id, draft_id)
        target = _inside(draft, file_path)
        size = len(content.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise InvalidArgumentsError.for_field(
                "content", f"{size} bytes; a module's file holds at most {MAX_FILE_BYTES}"
            )
        if not target.exists() and sum(1 for _ in _files(draft)) >= MAX_FILES:
            raise InvalidArgumentsError.for_field(
                "file_path", f"the draft has {MAX_FILES} files already, the most a module has"
            )
        self._attestation_file(module_id, draft_id).unlink(missing_ok=True)  # it no longer holds
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")

    def delete_draft(self, module_id: str, draft_id: str) -> None:
        """Delete a draft and its validation.

        Raises:
            InvalidArgumentsError: no such draft.
        """
        shutil.rmtree(self.draft_path(module_id, draft_id))
        self._attestation_file(module_id, draft_id).unlink(missing_ok=True)

    def keep_validation(
        self, module_id: str, draft_id: str, attestation: Attestation, report: list[Any]
    ) -> None:
        """Keep a draft's attestation and report beside it; an edit of the draft drops them.

        Beside, not inside: inside they would change the content they vouch for.
        """
        path = self._attestation_file(module_id, draft_id)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        path.write_text(json.dumps({**asdict(attestation), "report": report}))

    def validation(self, module_id: str, draft_id: str) -> tuple[Attestation, list[Any]]:
        """The draft's attestation and report, as ``keep_validation`` kept them.

        Raises:
            InvalidArgumentsError: no such draft, or it was not validated since its
                last edit.
        """
        self.draft_path(module_id, draft_id)
        try:
            kept = json.loads(self._attestation_file(module_id, draft_id).read_text())
        except FileNotFoundError:
            raise InvalidArgumentsError(
                f"draft {draft_id!r} of {module_id!r} was not validated since its last edit: "
                "validate it first"
            ) from None
        report = kept.pop("report", [])
        return Attestation(**kept), report

    def drafts(self, module_id: str) -> list[str]:
        """The module's draft ids, oldest first."""
        folder = self._module(module_id) / "drafts"
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def latest_draft(self, module_id: str) -> str:
        """The id of the module's newest draft.

        Raises:
            InvalidArgumentsError: no such module, or it has no draft.
        """
        found = self.drafts(module_id)
        if not found:
            raise InvalidArgumentsError(
                f"module {module_id!r} has no draft; build it or create a draft first"
            )
        return found[-1]

    def _attestation_file(self, module_id: str, draft_id: str) -> Path:
        return self._module(module_id) / "attestations" / f"{draft_id}.json"

    def diff_draft(self, module_id: str, draft_id: str) -> str:
        """Unified diff from the active version (or nothing) to the draft."""
        draft = self.draft_path(module_id, draft_id)
        base = self.active_path(module_id)
        old = texts(base) if base is not None else {}
        new = texts(draft)
        lines: list[str] = []
        for name in sorted(old.keys() | new.keys()):
            lines += difflib.unified_diff(
                old.get(name, "").splitlines(keepends=True),
                new.get(name, "").splitlines(keepends=True),
                f"a/{name}" if name in old else "/dev/null",
                f"b/{name}" if name in new else "/dev/null",
            )
        return "".join(lines)

    # -- installing -----------------------------------------------------------------------

    def promote(self, module_id: str, draft_id: str, attestation: Attestation, by: str) -> str:
        """Install the draft as a new version and make it active; returns its id.

        Raises:
            InvalidArgumentsError: no such draft; the attestation is for another module,
                did not pass, or vouches for other content (the draft changed after it
                was validated: validate it again).
        """
        draft = self.draft_path(module_id, draft_id)
        if attestation.module_id != module_id:
            raise InvalidArgumentsError(
                f"the attestation is for module {attestation.module_id!r}, not {module_id!r}"
            )
        if not attestation.passed:
            failed = [name for name, ok in attestation.checks.items() if not ok]
            raise InvalidArgumentsError(
                f"the validation did not pass ({', '.join(failed) or 'no checks ran'}); "
                "fix the draft and validate it again"
            )
        versions = self._module(module_id) / "versions"
        versions.mkdir(exist_ok=True)
        staged = versions / f".staged-{draft_id}"
        draft.rename(staged)  # out of reach of edits first, then hashed: what was checked
        actual = content_hash(staged)  # is exactly what is installed
        if actual != attestation.content_hash:
            staged.rename(draft)
            raise InvalidArgumentsError(
                f"draft {draft_id!r} changed after it was validated (content {actual[:12]}, "
                f"validated {attestation.content_hash[:12]}); validate it again"
            )
        count = sum(1 for p in versions.iterdir() if not p.name.startswith("."))
        version_id = f"v{count + 1}-{actual[:8]}"
        staged.rename(versions / version_id)
        self._activate(module_id, version_id)
        self._log(module_id, "install", by, version_id=version_id, content_hash=actual,
                  attestation=asdict(attestation))  # fmt: skip
        return version_id

    def install_validated(
        self, module_id: str, draft_id: str, by: str, content_hash: str | None = None
    ) -> str:
        """Install the draft with the attestation its last validation kept; the version id.

        Args:
            module_id: The module.
            draft_id: The draft.
            by: Who installs it (``history.jsonl``).
            content_hash: When given, the hash the caller was shown by that validation:
                a different one is refused (the draft was validated again since).

        Raises:
            InvalidArgumentsError: not validated since its last edit, another hash, or
                what ``promote`` refuses.
        """
        attestation, _report = self.validation(module_id, draft_id)
        if content_hash is not None and content_hash != attestation.content_hash:
            raise InvalidArgumentsError.for_field(
                "content_hash",
                f"the last validation of {draft_id!r} attested {attestation.content_hash[:12]}..., "
                "not this one; validate again and install what it returns",
            )
        return self.promote(module_id, draft_id, attestation, by=by)

    def rollback(self, module_id: str, version_id: str, by: str) -> None:
        """Make an installed version the active one again.

        Raises:
            InvalidArgumentsError: no such version (the message lists them).
        """
        known = [v.version_id for v in self.versions(module_id)]
        if version_id not in known:
            raise InvalidArgumentsError(
                f"module {module_id!r} has no version {version_id!r}; versions: "
                f"{', '.join(known) or 'none'}"
            )
        self._activate(module_id, version_id)
        self._log(module_id, "rollback", by, version_id=version_id)

    def disable(self, module_id: str, by: str) -> bool:
        """Stop serving the module (its versions stay, for ``enable`` or a rollback).

        Returns whether it was being served.
        """
        if self.active(module_id) is None:
            return False
        self._activate(module_id, "")
        self._log(module_id, "disable", by)
        return True

    def enable(self, module_id: str, by: str) -> str:
        """Serve the module again: the version active before it was disabled, else the newest.

        Returns the version now active.

        Raises:
            InvalidArgumentsError: no such module, or it has no installed version.
        """
        known = [v.version_id for v in self.versions(module_id)]
        if not known:
            raise InvalidArgumentsError(f"module {module_id!r} has no installed version")
        served = [e.get("version_id") for e in self.history(module_id) if e.get("version_id")]
        version_id = next((v for v in reversed(served) if v in known), known[-1])
        self._activate(module_id, version_id)
        self._log(module_id, "enable", by, version_id=version_id)
        return version_id

    def uninstall(self, module_id: str) -> None:
        """Remove the module: its versions, drafts, validations and history.

        The folder is first moved aside (one rename: a reader finds the module or
        nothing), then deleted.

        Raises:
            InvalidArgumentsError: no such module.
        """
        folder = self._module(module_id)
        gone = self.root / f".removed-{module_id}-{secrets.token_hex(4)}"
        folder.rename(gone)
        shutil.rmtree(gone, ignore_errors=True)

    # -- internals ------------------------------------------------------------------------

    def _module(self, module_id: str, create: bool = False) -> Path:
        if not isinstance(module_id, str) or not _ID.match(module_id):
            raise InvalidArgumentsError(
                f"module id {module_id!r}: lower-case letters, digits and _ , starting with "
                "a letter, at most 63 characters"
            )
        path = self.root / module_id
        if create:
            path.mkdir(mode=0o700, exist_ok=True)
        elif not path.is_dir():
            raise InvalidArgumentsError(
                f"no module {module_id!r}; modules: {', '.join(self.modules()) or 'none'}"
            )
        return path

    def _activate(self, module_id: str, version_id: str) -> None:
        module = self._module(module_id)
        pending = module / f".active-{secrets.token_hex(4)}"
        pending.write_text(version_id + "\n")
        os.replace(pending, module / "active")

    def _log(self, module_id: str, action: str, by: str, **fields: Any) -> None:
        entry = {"at": datetime.now(UTC).isoformat(), "action": action, "by": by, **fields}
        with (self._module(module_id) / "history.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")


def _version_number(version_id: str) -> int:
    """``v12-3fa2c1d0`` → 12: versions sort by number, not as text (v10 after v9)."""
    number = version_id[1:].split("-", 1)[0]
    return int(number) if number.isdigit() else 0


def _inside(folder: Path, relative: str) -> Path:
    """``folder / relative``, refused when it would leave ``folder``."""
    if not relative or Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise InvalidArgumentsError(
            f"file_path {relative!r} must be a relative path inside the draft (no leading /, no ..)"
        )
    target = folder / relative
    resolved = target.resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise InvalidArgumentsError(f"file_path {relative!r} leads out of the draft (a link)")
    return target


def texts(folder: Path) -> dict[str, str]:
    """Relative path → text of every file under ``folder`` (links and caches left out)."""
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in _files(folder)
        if not p.is_symlink()
    }
