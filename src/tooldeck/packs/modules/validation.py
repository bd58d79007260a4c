"""Validate a module: the static checks, then its code in the sandbox (seed 000: validate).

``ModuleValidator.validate(module_id, folder)`` runs the static checks (``checks.py``:
manifest, parse, imports, calls); when they pass, it sends the module's files to a
sandbox process (``isolation.sandbox``: its own user, namespaces, no network interface,
rlimits, a deadline) that runs ``_validate.py``: import, export to every wire format,
the module's own tests, one call per tool with its example arguments, and an audit hook
that refuses and reports what a module may not do. Code with a failed static check is
not run at all.

The sandbox has no network. A module's HTTP (through httpx) is relayed to this process,
which sends it only to a host the manifest's ``hosts`` declares, and only past the
address guard (``isolation.address_guard``): a declared host that resolves to a private
or loopback address is refused unless ``[packs.modules] allow_hosts`` names it, so a
module cannot declare its way to the cloud's metadata service or this server.

Example::

    validator = ModuleValidator(private=[data_dir])
    checks = await validator.validate("weather", draft_folder)
    attestation = attest("weather", draft_folder, checks)
    await validator.aclose()
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from tooldeck.exceptions import ToolFailure
from tooldeck.isolation.address_guard import AddressGuard
from tooldeck.isolation.sandbox import Sandbox, SandboxLimits
from tooldeck.packs.modules.checks import Check, attest, static_checks
from tooldeck.packs.modules.manifest import read_manifest
from tooldeck.packs.modules.versions import ModuleVersions, texts

__all__ = ["ModuleValidator", "validate_draft"]

_SCRIPT = Path(__file__).with_name("_validate.py")
_PRELOAD = (
    "httpx",
    "tooldeck.core.context",
    "tooldeck.exporters",
    "tooldeck.packs.loader",
    "tooldeck.packs.modules.pack",
)
_DROPPED = {"host", "content-length", "transfer-encoding", "connection", "content-encoding"}
MAX_RESPONSE_BYTES = 5_000_000
"""Bytes of one relayed HTTP response a module gets during validation."""


class ModuleValidator:
    """Runs a module's validation (see the module docstring).

    Args:
        private: Folders the module's code may not read (the data folder with the
            credential store, the configuration's folder); reported as refusals.
        allow_hosts: Host names, IPs or CIDR ranges a declared host may resolve to
            although private or loopback (``[packs.modules] allow_hosts``).
        limits: The limits of the whole sandboxed run (import, tests, calls).
        sandbox: The sandbox to run in; None: one of its own, started on first use
            (``tooldeck`` and ``httpx`` preloaded) and closed by ``aclose``.
    """

    def __init__(
        self,
        *,
        private: Sequence[Path] = (),
        allow_hosts: Sequence[str] = (),
        limits: SandboxLimits | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.private = [str(p) for p in private]
        self.guard = AddressGuard(allow_hosts, setting="[packs.modules] allow_hosts")
        self.limits = limits or SandboxLimits(timeout_s=60.0, cpu_s=60.0)
        self._own = sandbox is None
        self._sandbox = sandbox
        self._client: httpx.AsyncClient | None = None

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox validations run in."""
        if self._sandbox is None:
            self._sandbox = Sandbox(
                preload=_PRELOAD,
                env={"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
                spares=1,
            )
        return self._sandbox

    async def validate(self, module_id: str, folder: Path) -> list[Check]:
        """Every check of the module in ``folder``, static ones first; never raises.

        Returns:
            The checks in order (``manifest``, ``parse``, ``imports``, ``calls``, ``lint`` of the
            source, then ``import``, ``export``, ``tests``, ``tool_calls``, ``fetch`` (a
            context adapter) and ``behaviour`` in the sandbox; or ``sandbox`` when the run itself failed or did not happen).
        """
        checks = static_checks(folder)
        if not all(c.passed for c in checks):
            return [*checks, Check(name="sandbox", passed=False, output=_NOT_RUN)]
        manifest = read_manifest(folder)
        context = {
            "files": texts(folder),
            "module_id": module_id,
            "entry": manifest.entry,
            "kind": manifest.kind,
            "category": manifest.category,
            "private": self.private,
        }
        try:
            outcome = await self.sandbox.run(
                _SCRIPT.read_text(encoding="utf-8"),
                context=context,
                cwd=None,
                limits=self.limits,
                tools=["http"],
                on_call=partial(self._relay, tuple(manifest.hosts)),
            )
        except RuntimeError as exc:  # the sandbox could not start
            return [*checks, Check(name="sandbox", passed=False, output=str(exc))]
        if outcome.error is not None:
            output = "\n".join(
                part
                for part in (outcome.error.message, outcome.error.traceback, outcome.stderr[-2000:])
                if part
            )
            return [*checks, Check(name="sandbox", passed=False, output=output)]
        return [*checks, *(Check(**c) for c in outcome.result["checks"])]

    async def _relay(
        self, hosts: tuple[str, ...], name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """Send one HTTP request of the module's code; a ``ToolResult``-shaped dict."""
        try:
            url = httpx.URL(str(arguments["url"]))
            if not _declared(url, hosts):
                declared = ", ".join(hosts) or "none"
                return _error(
                    "denied",
                    f"{url.host} is not among the hosts module.toml declares ({declared}); "
                    f'add it: hosts = ["{url.host}"]',
                )
            vetted = await self.guard.check(url)
            response = await self._send(url, vetted.address, arguments)
        except ToolFailure as exc:
            return _error(exc.error_type, str(exc))
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            return _error("execution", f"{type(exc).__name__}: {exc}")
        return {"status": "success", "data": response}

    async def _send(
        self, url: httpx.URL, address: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=30.0)
        headers = [(k, v) for k, v in arguments.get("headers", []) if k.lower() not in _DROPPED]
        headers.append(("Host", url.netloc.decode("ascii")))
        request = self._client.build_request(
            str(arguments.get("method", "GET")),
            url.copy_with(host=address),
            headers=headers,
            content=base64.b64decode(arguments.get("body", "")),
            extensions={"sni_hostname": url.host} if url.scheme == "https" else {},
        )
        response = await self._client.send(request, stream=True)
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ValueError(f"the response is over {MAX_RESPONSE_BYTES} bytes")
        finally:
            await response.aclose()
        return {
            "status_code": response.status_code,
            "headers": [[k, v] for k, v in response.headers.multi_items() if k not in _DROPPED],
            "body": base64.b64encode(bytes(body)).decode(),
        }

    async def aclose(self) -> None:
        """Stop the own sandbox and close the HTTP client."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._own and self._sandbox is not None:
            await self._sandbox.aclose()
            self._sandbox = None


_NOT_RUN = "not run: the code runs in the sandbox only once the static checks pass"


def _declared(url: httpx.URL, hosts: Sequence[str]) -> bool:
    """Whether the manifest declares ``url``'s host (``host`` or ``host:port``)."""
    host = url.host.lower().rstrip(".")
    port = url.port or (443 if url.scheme == "https" else 80)
    for item in hosts:
        name, _, wanted = item.lower().partition(":")
        if name.rstrip(".") == host and (not wanted or wanted == str(port)):
            return True
    return False


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"status": "error", "error": {"type": kind, "message": message}}


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
    checks = await validator.validate(module_id, folder)
    attestation = attest(module_id, folder, checks)
    report = [asdict(c) for c in checks]
    versions.keep_validation(module_id, draft_id, attestation, report)
    return {
        "module_id": module_id,
        "draft_id": draft_id,
        "passed": attestation.passed,
        "content_hash": attestation.content_hash,
        "checks": report,
    }
