"""Validate a module: the static checks, then its code in the sandbox (seed 000: validate).

``ModuleValidator.validate(module_id, folder)`` runs the static checks (``checks.py``:
manifest, parse, imports, calls); when they pass, it sends the module's files to a
sandbox process (``isolation.sandbox``: its own user, namespaces, no network interface,
rlimits, a deadline) that runs ``_validate.py``: import, export to every wire format,
the module's own tests, one call per tool with its example arguments, and an audit hook
that refuses and reports what a module may not do. Code with a failed static check is
not run at all.

The sandbox is the one every use of an installed module runs in (``runner.py``), so a
validation sees the code exactly as its calls will. It has no network: a module's HTTP
(through httpx) is relayed to this process (``relay.HttpRelay``), which sends it only
to a host the manifest's ``hosts`` declares, past the address guard.

Example::

    validator = ModuleValidator(private=[data_dir])
    checks = await validator.validate("weather", draft_folder)
    attestation = attest("weather", draft_folder, checks)
    await validator.aclose()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tooldeck.isolation.sandbox import SandboxLimits
from tooldeck.packs.modules.checks import Check, attest, static_checks
from tooldeck.packs.modules.manifest import read_manifest
from tooldeck.packs.modules.runner import ModuleSandbox, keep_description
from tooldeck.packs.modules.versions import ModuleVersions, texts

__all__ = ["ModuleValidator", "validate_draft"]

_SCRIPT = Path(__file__).with_name("_validate.py").read_text(encoding="utf-8")


class ModuleValidator:
    """Runs a module's validation (see the module docstring).

    Args:
        private: Folders the module's code may not read (the data folder with the
            credential store, the configuration's folder); reported as refusals.
        allow_hosts: Host names, IPs or CIDR ranges a declared host may resolve to
            although private or loopback (``[packs.modules] allow_hosts``).
        limits: The limits of the whole sandboxed run (import, tests, calls).
        sandbox: The module sandbox to run in (the one installed modules' calls run
            in); None: one of its own, closed by ``aclose``.
    """

    def __init__(
        self,
        *,
        private: Sequence[Path] = (),
        allow_hosts: Sequence[str] = (),
        limits: SandboxLimits | None = None,
        sandbox: ModuleSandbox | None = None,
    ) -> None:
        self.limits = limits or SandboxLimits(timeout_s=60.0, cpu_s=60.0)
        self._own = sandbox is None
        self.modules = sandbox or ModuleSandbox(private=private, allow_hosts=allow_hosts)

    async def validate(self, module_id: str, folder: Path) -> list[Check]:
        """Every check of the module in ``folder``, static ones first; never raises.

        Returns:
            The checks in order (``manifest``, ``parse``, ``imports``, ``calls``, ``lint`` of the
            source, then ``import``, ``export``, ``tests``, ``tool_calls``, ``fetch`` (a
            context adapter) and ``behaviour`` in the sandbox; or ``sandbox`` when the run itself failed or did not happen).
        """
        return (await self.examine(module_id, folder))[0]

    async def examine(
        self, module_id: str, folder: Path
    ) -> tuple[list[Check], dict[str, Any] | None]:
        """``validate``'s checks, and what the code offers when it loaded (or None).

        What it offers is ``runner.Description``'s fields; kept by ``validate_draft``, an
        install serves it without describing the code again.
        """
        checks = static_checks(folder)
        if not all(c.passed for c in checks):
            return [*checks, Check(name="sandbox", passed=False, output=_NOT_RUN)], None
        manifest = read_manifest(folder)
        job = {
            "files": texts(folder),
            "module_id": module_id,
            "entry": manifest.entry,
            "kind": manifest.kind,
            "category": manifest.category,
        }
        try:
            outcome = await self.modules.run(_SCRIPT, job, hosts=manifest.hosts, limits=self.limits)
        except RuntimeError as exc:  # the sandbox could not start
            return [*checks, Check(name="sandbox", passed=False, output=str(exc))], None
        if outcome.error is not None:
            output = "\n".join(
                part
                for part in (outcome.error.message, outcome.error.traceback, outcome.stderr[-2000:])
                if part
            )
            return [*checks, Check(name="sandbox", passed=False, output=output)], None
        checks += [Check(**c) for c in outcome.result["checks"]]
        return checks, outcome.result.get("described")

    async def aclose(self) -> None:
        """Stop the own module sandbox."""
        if self._own:
            await self.modules.aclose()


_NOT_RUN = "not run: the code runs in the sandbox only once the static checks pass"


async def validate_draft(
    versions: ModuleVersions, validator: ModuleValidator, module_id: str, draft_id: str
) -> dict[str, Any]:
    """Validate a draft and keep its attestation and report beside it.

    Returns:
        ``{module_id, draft_id, passed, content_hash, checks: [{name, passed, output}]}``;
        ``content_hash`` is what ``install``/``promote_draft`` will accept.

    Raises:
        InvalidArgumentsError: no such module or draft.
    """
    folder = versions.draft_path(module_id, draft_id)
    checks, described = await validator.examine(module_id, folder)
    attestation = attest(module_id, folder, checks)
    report = [asdict(c) for c in checks]
    versions.keep_validation(module_id, draft_id, attestation, report)
    if attestation.passed and described is not None:  # an install serves it at once
        keep_description(versions.root, module_id, attestation.content_hash, described)
    return {
        "module_id": module_id,
        "draft_id": draft_id,
        "passed": attestation.passed,
        "content_hash": attestation.content_hash,
        "checks": report,
    }
