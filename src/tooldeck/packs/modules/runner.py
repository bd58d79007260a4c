"""The sandbox every module's code runs in: its validation, its description and each of its calls.

Installed code never runs in the server (issue 53). ``ModuleSandbox`` owns one
``isolation.Sandbox`` (an unprivileged user, its own PID, mount, IPC and network
namespaces, rlimits, a deadline; ``tooldeck``, ``httpx`` and pydantic preloaded) and
runs a module's files in a fresh process for every use:

- a validation (``_validate.py``, through ``validation.ModuleValidator``);
- a description (``_call.py``, ``op = "describe"``): its tools' definitions and its
  context adapters, read once per installed version and kept beside it
  (``<module>/described/<version>.json``, written by the server only);
- a call (``op = "call"``) or an adapter's fetch (``op = "fetch"``).

The code talks to the server through the sandbox's ``tools`` channel only, which
answers two names: ``http`` (``relay.HttpRelay``: the manifest's hosts, past the
address guard) and ``secret`` (the calling user's own key for this module, read when
asked). Nothing else of the server (credential store, approvals, audit, other tools,
its environment) is reachable from it. Validation and use are the same place, so
code gains nothing by behaving differently there.

Cost (``benchmarks/modules.py``): a warm call is a fork of the prepared process,
the module's files written and imported, one call; see the benchmark for figures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tooldeck.core.credentials import CredentialStore
from tooldeck.isolation.sandbox import Sandbox, SandboxError, SandboxLimits, SandboxOutcome
from tooldeck.packs.modules.manifest import ModuleManifest, read_manifest
from tooldeck.packs.modules.relay import HttpRelay, relay_error
from tooldeck.packs.modules.versions import ModuleVersions, content_hash, texts

__all__ = [
    "Description",
    "InstalledVersion",
    "ModuleSandbox",
    "describe_installed",
    "description_file",
    "keep_description",
    "served_summary",
]

log = logging.getLogger("tooldeck.modules")

CALL_SCRIPT = Path(__file__).with_name("_call.py").read_text(encoding="utf-8")
PRELOAD = (
    "httpx",
    "pydantic",
    "tooldeck",
    "tooldeck.core.context",
    "tooldeck.core.credentials",
    "tooldeck.exporters",
    "tooldeck.packs.loader",
    "tooldeck.packs.modules._inside",
    "tooldeck.packs.modules.loading",
)
"""What the fork server imports once: a module's run starts with these loaded."""
DESCRIBE_LIMITS = SandboxLimits(timeout_s=30.0, cpu_s=30.0)
"""The limits of reading an installed version's tools (an import, no call)."""
WARM_S = 300.0
"""Seconds a process prepared for a version's next call waits for it before it is dropped."""
MAX_WARM = 16
"""Versions that keep a prepared process (the least recently called lose theirs)."""


class _Waiting:
    """A process that loaded a version and waits for its one call (``ModuleSandbox.call``)."""

    def __init__(self) -> None:
        self.task: asyncio.Task[SandboxOutcome] | None = None
        self.asked: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.principal: str | None = None

    def take(self, job: Mapping[str, Any], principal: str | None) -> bool:
        """Hand ``job`` over; False when the process is gone (the caller starts one)."""
        if self.task is None or self.task.done() or self.asked.done():
            return False
        self.principal = principal
        self.asked.set_result(
            {k: job.get(k) for k in ("op", "name", "arguments", "user", "request_id")}
        )
        return True

    async def outcome(self, timeout_s: float) -> SandboxOutcome:
        """The call's outcome, ``timeout_s`` counted from the hand-over."""
        assert self.task is not None
        return await _within(self.task, timeout_s)

    def drop(self) -> None:
        """End the process: a waiting one is told to stop (it exits), a busy one killed."""
        if not self.asked.done():
            self.asked.set_result({"op": "stop"})
        elif self.task is not None and not self.task.done():
            self.task.cancel()


async def _within(task: asyncio.Task[SandboxOutcome], timeout_s: float) -> SandboxOutcome:
    """``task``'s outcome, or a ``timeout`` outcome (the task cancelled) after ``timeout_s``."""
    try:
        return await asyncio.wait_for(task, timeout_s)
    except TimeoutError:
        message = (
            f"the call did not finish within timeout_s={timeout_s:g} s; its process was killed"
        )
        return SandboxOutcome(
            error=SandboxError(kind="timeout", limit="timeout_s", message=message)
        )


@dataclass(frozen=True, kw_only=True)
class InstalledVersion:
    """One installed version of a module: what every sandboxed run of it is sent.

    The files are read once, when the version is loaded; a version's folder never
    changes after its install (``versions.py``).
    """

    module_id: str
    version_id: str
    manifest: ModuleManifest
    files: Mapping[str, str]
    """Relative path → text of the version's files."""
    content_hash: str
    """``versions.content_hash`` of the folder (what its description is kept against)."""

    @classmethod
    def read(cls, module_id: str, folder: Path, manifest: ModuleManifest) -> InstalledVersion:
        """The version installed in ``folder``."""
        return cls(
            module_id=module_id,
            version_id=folder.name,
            manifest=manifest,
            files=texts(folder),
            content_hash=content_hash(folder),
        )

    @property
    def version(self) -> str:
        """``<manifest version>+<version id>`` (``0.1.0+v2-3fa2c1d0``): what serves a call."""
        return f"{self.manifest.version}+{self.version_id}"

    def job(self, op: str, **names: Any) -> dict[str, Any]:
        """The names ``_call.py`` is run with (``private`` is added by the sandbox)."""
        return {
            "files": dict(self.files),
            "module_id": self.module_id,
            "entry": self.manifest.entry,
            "kind": self.manifest.kind,
            "category": self.manifest.category,
            "op": op,
            "name": None,
            "arguments": {},
            "user": None,
            "request_id": None,
            **names,
        }


@dataclass(frozen=True, kw_only=True)
class Description:
    """What an installed version offers, as its code said in the sandbox."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    """Each tool's definition as JSON (``ToolDefinition.model_dump``)."""
    adapters: list[dict[str, str]] = field(default_factory=list)
    """Each context adapter's ``category`` and ``platform``."""
    errors: list[str] = field(default_factory=list)
    """Why it could not be loaded (then nothing is served)."""


class ModuleSandbox:
    """Runs a module's code in the sandbox (see the module docstring).

    Args:
        private: Folders the code may not read (the data folder with the credential
            store, the configuration's folder); refusals are named in reports.
        allow_hosts: ``[packs.modules] allow_hosts`` (``relay.HttpRelay``).
        credentials: Opens the credential store, for ``tools.secret`` (the caller's key
            for ``module:<id>``); None: every caller has none.
        sandbox: The sandbox to run in; None: one of its own, started on first use and
            stopped by ``aclose``.
    """

    def __init__(
        self,
        *,
        private: Sequence[Path] = (),
        allow_hosts: Sequence[str] = (),
        credentials: Callable[[], CredentialStore] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.private = [str(p) for p in private]
        self.relay = HttpRelay(allow_hosts)
        self.credentials = credentials
        self._own = sandbox is None
        self._sandbox = sandbox
        self._warm: OrderedDict[tuple[str, str, str], _Waiting] = OrderedDict()

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox module code runs in."""
        if self._sandbox is None:
            self._sandbox = Sandbox(
                preload=PRELOAD,
                env={"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
                spares=2,
            )
        return self._sandbox

    async def run(
        self,
        script: str,
        job: Mapping[str, Any],
        *,
        hosts: Sequence[str],
        limits: SandboxLimits,
        principal: str | None = None,
    ) -> SandboxOutcome:
        """Run ``script`` with the names of ``job`` in a fresh sandboxed process.

        Args:
            script: ``_call.py`` or ``_validate.py``'s text.
            job: The names it is run with (``module_id`` among them).
            hosts: The manifest's hosts (the only ones ``tools.http`` reaches).
            limits: The run's limits.
            principal: The caller, whose key ``tools.secret`` gives; None: no key.

        Raises:
            RuntimeError: the sandbox cannot start.
        """
        return await self._launch(script, job, tuple(hosts), limits, lambda: principal)

    async def call(
        self,
        version: InstalledVersion,
        job: Mapping[str, Any],
        *,
        limits: SandboxLimits,
        principal: str | None,
    ) -> SandboxOutcome:
        """One use of ``version``, in a process that loaded the module ahead of it if one waits.

        ``job`` holds ``op``, ``name``, ``arguments``, ``user`` and ``request_id``. After
        each use a process is prepared for the version's next one (``op = "wait"``:
        unpacked, imported, waiting on ``tools.next``), so a warm call pays the call, not
        the import. A prepared process serves one call and is dropped
        after ``WARM_S`` idle; ``MAX_WARM`` versions keep one. ``limits.timeout_s`` is
        held here, from the hand-over.
        """
        key = (version.module_id, version.version_id, version.content_hash)
        warm = self._warm.pop(key, None)
        if warm is not None and warm.take(job, principal):
            outcome = await warm.outcome(limits.timeout_s)
        else:
            if warm is not None:
                warm.drop()
            names = version.job(**job)
            task = asyncio.ensure_future(self._start(version, names, limits, lambda: principal))
            outcome = await _within(task, limits.timeout_s)
        self._prepare(key, version, limits)
        return outcome

    def _start(
        self,
        version: InstalledVersion,
        names: Mapping[str, Any],
        limits: SandboxLimits,
        principal: Callable[[], str | None],
        waiting: _Waiting | None = None,
    ) -> Coroutine[Any, Any, SandboxOutcome]:
        """A run of ``_call.py`` for ``version``."""
        hosts = tuple(version.manifest.hosts)
        return self._launch(CALL_SCRIPT, names, hosts, limits, principal, waiting)

    async def _launch(
        self,
        script: str,
        names: Mapping[str, Any],
        hosts: tuple[str, ...],
        limits: SandboxLimits,
        principal: Callable[[], str | None],
        waiting: _Waiting | None = None,
    ) -> SandboxOutcome:
        """``script`` in a fresh sandboxed process, its ``tools`` answered here.

        ``http`` and ``secret`` by ``_serve``, for ``principal()``; ``tools.next`` by
        ``waiting``, for a process prepared ahead of its call.
        """
        scope = f"module:{names['module_id']}"

        async def serve(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name == "next" and waiting is not None:
                return {"status": "success", "data": await waiting.asked}
            return await self._serve(hosts, scope, principal(), name, arguments)

        return await self.sandbox.run(
            script,
            context={**names, "private": self.private},
            cwd=None,
            limits=limits,
            tools=["http", "secret", "next"] if waiting is not None else ["http", "secret"],
            on_call=serve,
        )

    def _prepare(
        self, key: tuple[str, str, str], version: InstalledVersion, limits: SandboxLimits
    ) -> None:
        """A process for ``version``'s next use, loaded and waiting (see ``call``)."""
        if key in self._warm:
            return
        waiting = _Waiting()
        held = replace(limits, timeout_s=WARM_S + limits.timeout_s)
        started = self._start(
            version, version.job("wait"), held, lambda: waiting.principal, waiting
        )
        waiting.task = asyncio.ensure_future(started)
        self._warm[key] = waiting
        while len(self._warm) > MAX_WARM:
            _, oldest = self._warm.popitem(last=False)
            oldest.drop()

    async def _serve(
        self,
        hosts: tuple[str, ...],
        scope: str,
        principal: str | None,
        name: str,
        arguments: dict[str, Any],
    ) -> dict[str, Any]:
        """One ``tools.<name>`` call of the code: ``http`` or ``secret``, nothing else."""
        if name == "http":
            return await self.relay.send(hosts, arguments)
        if name == "secret":
            if principal is None or self.credentials is None:
                return {"status": "success", "data": None}
            store = self.credentials()
            secret = await asyncio.to_thread(store.get, principal, scope)
            return {"status": "success", "data": secret and secret.get_secret_value()}
        return relay_error("not_found", f"no tool {name!r} here: a module has http and secret")

    async def describe(self, version: InstalledVersion) -> Description:
        """What ``version``'s code offers (its tools and adapters), read in the sandbox."""
        outcome = await self.run(
            CALL_SCRIPT, version.job("describe"), hosts=(), limits=DESCRIBE_LIMITS
        )
        if outcome.error is not None:
            trace = outcome.error.traceback or ""
            return Description(errors=[f"{outcome.error.message}\n{trace}".strip()])
        answer = outcome.result if isinstance(outcome.result, dict) else {}
        errors = [str(e) for e in answer.get("errors") or []]
        if errors:
            return Description(errors=errors)
        return Description(tools=list(answer["tools"]), adapters=list(answer["adapters"]))

    async def aclose(self) -> None:
        """Drop the waiting processes, stop the own sandbox and close the HTTP client."""
        tasks = [w.task for w in self._warm.values() if w.task is not None]
        for waiting in self._warm.values():
            waiting.drop()
        self._warm.clear()
        await asyncio.gather(*tasks, return_exceptions=True)  # each process killed
        await self.relay.aclose()
        if self._own and self._sandbox is not None:
            await self._sandbox.aclose()
            self._sandbox = None


def description_file(versions_root: Path, module_id: str, content: str) -> Path:
    """Where the description of a module's content (by ``content_hash``) is kept."""
    return versions_root / module_id / "described" / f"{content}.json"


def served_summary(root: Path, module_id: str) -> tuple[str, list[str]]:
    """What a person sees of a module: its active version's description and tool names.

    The description is ``module.toml``'s; the tools are as kept when the version was
    described (``keep_description``), before its first load: none. ``("", [])`` when no
    version is active; ``("(not read: <why>)", [])`` when its files cannot be read.
    """
    folder = ModuleVersions(root).active_path(module_id)
    if folder is None:
        return "", []
    try:
        manifest = read_manifest(folder)
        kept = description_file(root, module_id, content_hash(folder))
        tools = json.loads(kept.read_text(encoding="utf-8"))["tools"] if kept.is_file() else []
        return manifest.description, [str(t["name"]) for t in tools]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"(not read: {exc})", []


def keep_description(
    versions_root: Path, module_id: str, content: str, described: Mapping[str, Any]
) -> None:
    """Keep what the code of ``content`` (its ``content_hash``) offers, for its loads."""
    path = description_file(versions_root, module_id, content)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = {"content_hash": content, "tools": described["tools"], "adapters": described["adapters"]}
    path.write_text(json.dumps(kept), encoding="utf-8")


def describe_installed(
    versions: Sequence[InstalledVersion], versions_root: Path, private: Sequence[Path]
) -> list[Description]:
    """Each version's description: the one kept beside it, else read now in a sandbox.

    Called where modules load (start-up, a reload), which is not async. A validation
    keeps the description of the content it passed (``keep_description``), so an
    install through ``module_admin`` or ``module_pipeline`` finds it; a version without
    one (installed otherwise, or before descriptions were kept) is described in a
    sandbox of its own, on a thread with its own event loop (~0.3 s to start it), and
    its description kept (``keep_description``) for the next load.
    """
    found: dict[int, Description] = {}
    missing = []
    for index, version in enumerate(versions):
        path = description_file(versions_root, version.module_id, version.content_hash)
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if isinstance(stored, dict) and stored.get("content_hash") == version.content_hash:
            found[index] = Description(tools=stored["tools"], adapters=stored["adapters"])
        else:
            missing.append(index)
    if missing:
        fresh = _in_own_sandbox([versions[i] for i in missing], private)
        for index, description in zip(missing, fresh, strict=True):
            found[index] = description
            if not description.errors:
                version = versions[index]
                keep_description(
                    versions_root, version.module_id, version.content_hash, asdict(description)
                )
    return [found[i] for i in range(len(versions))]


def _in_own_sandbox(
    versions: Sequence[InstalledVersion], private: Sequence[Path]
) -> list[Description]:
    """Describe ``versions`` in a sandbox started for it, on a thread of its own."""
    out: list[Description] = []

    async def describe_all() -> None:
        sandbox = ModuleSandbox(private=private)
        try:
            for version in versions:
                out.append(await sandbox.describe(version))
        finally:
            await sandbox.aclose()

    def work() -> None:
        try:
            asyncio.run(describe_all())
        except RuntimeError as exc:  # the sandbox could not start
            log.warning("modules not described: %s", exc)

    thread = threading.Thread(target=work, name="tooldeck-describe-modules")
    thread.start()
    thread.join()
    out += [Description(errors=["the sandbox could not start"])] * (len(versions) - len(out))
    return out
