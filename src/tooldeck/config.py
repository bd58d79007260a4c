"""Settings: ``tooldeck.toml`` plus ``TOOLDECK_*`` environment overrides (pydantic-settings).

Read by entry points only (ARCHITECTURE.md, "Layers"). Every field has a default, so
the embedded default needs no file. Precedence, highest first: arguments to
``load_settings``, environment (``TOOLDECK_SERVER__PORT=9000``; nested fields use
``__``), the TOML file, defaults.

Example ``tooldeck.toml``::

    data_dir = "/var/lib/tooldeck"

    [server]
    port = 8765
    api_key = "change-me"

    [policy]
    timeout_s = 30
    [policy.tools.get_quotes]
    timeout_s = 5
    [policy.providers.time]              # every tool of the MCP server "time"
    max_attempts = 1

    [builtin]                            # the built-in tools
    roots = ["."]                        # what files/git/shell/python may touch
    disabled = ["shell"]

    [mcp_servers.time]                   # the standard mcpServers form
    command = "mcp-server-time"

    [agent]                              # tooldeck chat, /api/chat (absent: intent router)
    base_url = "http://127.0.0.1:8000/v1"
    model = "gemma-3-270m"

    [profiles.support]                   # a filtered + confirming view of all tools
    tools = ["get_*", "search_facts"]    # local tools, names or globs (absent: all)
    mcp_servers = ["time"]               # MCP server ids (absent: all)
    confirm = ["get_transfers"]          # tools needing a human's approval
    [profiles.support.policy.tools.get_quotes]
    timeout_s = 2
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import logging
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from tooldeck.core.private import not_private
from tooldeck.exceptions import ConfigError
from tooldeck.packs.loader import SHIPPED_CONFIGS
from tooldeck.providers.flow import FlowConfig
from tooldeck.providers.mcp_config import MCPServerConfig, load_mcp_servers_file
from tooldeck.providers.openapi_config import OpenAPIConfig
from tooldeck.providers.policy import PolicyConfig, ProfilePolicy

__all__ = [
    "AgentSettings",
    "ApprovalSettings",
    "AuditSettings",
    "ProfileConfig",
    "ReceiptSettings",
    "RunSettings",
    "ServerSettings",
    "Settings",
    "TracingSettings",
    "find_config",
    "load_settings",
    "project_data_dir",
]

log = logging.getLogger("tooldeck.config")

DEFAULT_CONFIG_FILE = Path("tooldeck.toml")


class ServerSettings(BaseModel):
    """The REST server."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    """Interface to bind; 127.0.0.1 unless you mean to expose it."""
    port: int = Field(8765, ge=1, le=65535)
    """TCP port."""
    api_key: SecretStr | None = None
    """When set, ``/api/*``, ``/metrics`` and ``/mcp`` require ``Authorization: Bearer
    <api_key>``. Required to bind a non-loopback address (``serve --insecure`` overrides)."""
    allowed_hosts: list[str] = Field(default_factory=list)
    """Names clients use in ``Host`` besides IP literals, ``localhost`` and ``host``
    (DNS-rebinding protection); ``["*"]`` accepts any."""
    allowed_origins: list[str] = Field(default_factory=list)
    """Browser origins on other sites allowed to call the server, e.g.
    ``https://app.example.com``; absent: same-origin pages only."""
    max_body_bytes: int = Field(1 << 20, gt=0)
    """Largest request body in bytes (413 above it)."""
    trust_user_header: bool = False
    """Take ``X-User`` as the caller's identity. Only behind a proxy that authenticates
    users and sets the header itself; otherwise any caller could claim any name."""
    access_log: bool = True
    """Print a line per request (uvicorn's access log, credentials in URLs redacted).
    Off saves about 50 µs a request (``benchmarks/rest.py``); the audit still records
    every tool call."""
    mcp_search_tools: bool = False
    """Over MCP (``/mcp``, ``tooldeck mcp``), a view of more than ``[agent]
    defer_tools_over`` tools lists ``search_tools`` and the ``always_visible`` tools;
    what a session's searches find is added to its list (``tools/list_changed``), and
    any tool of the view can be called. ``tooldeck mcp --search-tools`` turns it on."""


class AuditSettings(BaseModel):
    """The audit store."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Record every call."""
    url: str | None = None
    """SQLAlchemy URL; default ``sqlite:///<data_dir>/audit.db``."""
    retention_days: float | None = Field(None, gt=0)
    """Prune call records older than this many days (hourly); absent: keep everything.
    The running totals behind ``/metrics`` are kept."""
    durability: Literal["ack", "batch"] = "ack"
    """``ack``: a call is answered once its record is committed (group commit; survives
    the process being killed). ``batch``: records wait up to 200 ms in memory, faster
    for one-by-one callers, lost if the process is killed in that window."""
    fail_closed: Literal["destructive", "all", "none"] = "destructive"
    """Which tools answer ``unavailable`` instead of running while the audit store can
    write nowhere (a full disk): destructive ones, all, or none."""


class TracingSettings(BaseModel):
    """OpenTelemetry spans, one per tool call (GenAI semantic conventions)."""

    model_config = ConfigDict(extra="forbid")

    exporter: Literal["none", "console", "otlp"] = "none"
    """Where spans go. ``none`` still uses a tracer provider the host application
    configured globally before the runtime was built."""
    endpoint: str | None = None
    """OTLP/HTTP traces URL, e.g. ``http://127.0.0.1:4318/v1/traces`` (default: the
    exporter's, or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra OTLP HTTP headers, e.g. an API key."""
    service_name: str = "tooldeck"
    """The ``service.name`` resource attribute."""
    capture_content: bool = False
    """Put arguments (redacted) and result text on spans; off because they may be sensitive."""
    schedule_delay_ms: int = Field(5000, ge=1)
    """Longest time (ms) a finished span waits before it is exported."""


class ProfileConfig(BaseModel):
    """A profile: which tools a caller sees and which need confirmation (seed 002)."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    """What the profile is for."""
    tools: list[str] | None = None
    """Enabled local tools, names or globs; absent: all (seed 002 ``enable_local_tools``)."""
    mcp_servers: list[str] | None = None
    """Enabled MCP server ids; absent: all (seed 002 ``enable_mcp_server_ids``)."""
    confirm: list[str] = Field(default_factory=list)
    """Tools (names or globs) that need a human's approval in this profile."""
    policy: ProfilePolicy = Field(default_factory=ProfilePolicy)
    """Timeouts, retries and confirmation for this profile's calls."""
    delegates: list[str] = Field(default_factory=list)
    """Profiles whose agent this profile's runs may ask (the ``delegate`` tool,
    ``agent.delegate``); each answers with its own view of the tools."""


class ApprovalSettings(BaseModel):
    """Approvals of calls to tools that need confirmation."""

    model_config = ConfigDict(extra="forbid")

    ttl_s: float = Field(600.0, gt=0)
    """Seconds a pending request or an approval stays valid."""
    persist: bool = True
    """Keep approvals in ``<data_dir>/approvals.db``, shared by every tooldeck process
    of this data dir (``tooldeck approvals`` in a terminal decides what a stdio MCP
    session asked) and kept over a restart; false: in this process's memory only."""
    console_url: str | None = None
    """Where a person opens the console to decide an approval, for MCP clients that
    can open a page for their user (URL-mode elicitation); default
    ``http://127.0.0.1:<server.port>`` (a ``tooldeck serve`` of this project)."""
    url: str | None = Field(None, pattern=r"^postgres(ql)?://")
    """A PostgreSQL URL shared by every replica (an approval given on one executes on
    another); default ``[store] url``, else ``<data_dir>/approvals.db``."""
    approvers: list[str] = Field(default_factory=list)
    """Principals (``X-User`` behind an authenticating proxy) who may decide any
    pending approval through ``/api/approvals``; everyone else decides only their own
    calls' approvals, on the channel the call came through."""


class StoreSettings(BaseModel):
    """Where state shared by every replica lives (docs/deploy.md).

    Unset, each store is a SQLite file in the data dir, shared by this machine's
    processes. Set, the audit, approvals, receipts and schedules all live in one
    PostgreSQL database (tooldeck's own tables in its schema ``tooldeck``, the audit's
    in the URL's default schema), so N ``tooldeck serve`` replicas and ``tooldeck
    worker`` processes see the same history, approvals and schedules. A store's own
    ``url`` (``[audit] url``, ``[receipts] url``, ``[approvals] url``) wins over this one.
    """

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(None, pattern=r"^postgres(ql)?://")
    """A ``postgresql://user@host:port/db`` URL (``TOOLDECK_STORE__URL``); tables are
    created and migrated at start-up (Alembic, under an advisory lock)."""


class ReceiptSettings(BaseModel):
    """Receipts of calls with side effects, so a repeated idempotency key runs nothing twice.

    Kept in ``<data_dir>/receipts.db`` (``providers.receipts``, docs/exactly-once.md).
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Keep receipts; false: an idempotency key is passed to tools but never checked
    (a retried call runs again)."""
    url: str | None = Field(None, pattern=r"^postgres(ql)?://")
    """A PostgreSQL URL shared by every replica (``TOOLDECK_RECEIPTS__URL``); None: the
    SQLite file ``<data_dir>/receipts.db``, shared by this machine's processes."""
    keep_s: float = Field(86_400.0, gt=0)
    """Seconds a receipt is kept; a key repeated later runs the call again."""
    lease_s: float = Field(30.0, gt=0)
    """Seconds a running call counts as alive unless its process extends it; past it, a
    repeated key is told the first call's outcome is unknown."""
    wait_s: float = Field(30.0, ge=0)
    """Seconds a repeated key waits for the first call, still running, to finish."""


class RunSettings(BaseModel):
    """Where chat runs execute: in this process, or as Temporal workflows (docs/deploy.md).

    With ``engine = "temporal"``, a run is a workflow on the Temporal service at
    ``address``: its tool calls are activities run by ``tooldeck worker`` processes
    (which share this configuration), a confirmation is a workflow update, so a run
    can wait for days and outlive every process; ``tooldeck serve`` starts, follows,
    confirms and cancels runs through the Temporal client.
    """

    model_config = ConfigDict(extra="forbid")

    engine: Literal["embedded", "temporal"] = "embedded"
    """``embedded``: the in-process run manager (runs end with the process);
    ``temporal``: durable runs on a Temporal service (``pip install temporalio``)."""
    address: str = Field("127.0.0.1:7233", pattern=r"^[A-Za-z0-9.\-\[\]:]+:\d+$")
    """The Temporal frontend, ``host:port``."""
    namespace: str = Field("default", pattern=r"^[A-Za-z0-9._-]{1,200}$")
    """The Temporal namespace of the runs."""
    task_queue: str = Field("tooldeck", pattern=r"^[A-Za-z0-9._-]{1,200}$")
    """The task queue the workers poll; one per deployment of the same tools."""
    heartbeat_s: float = Field(15.0, ge=1)
    """A worker running a tool call reports it is alive every third of this; silent
    this long, it counts as dead and the call moves to another worker (where its
    receipt answers instead of running a tool with side effects twice)."""
    lease_s: float = Field(30.0, ge=1)
    """Embedded engine: a process renews the lease of each run it runs every third of
    this; a run whose lease is older (its process was killed) is failed by any process
    sharing the store. Replicas on ``[store] url`` serve each other's runs."""
    worker_in_server: bool = False
    """``tooldeck serve`` also runs a worker (one process for a small setup); false:
    start ``tooldeck worker`` processes."""


class CredentialSettings(BaseModel):
    """The credential store: users' secrets for modules, sources and upstream servers.

    Encrypted in ``<data_dir>/credentials.db`` (``providers.credentials``).
    """

    model_config = ConfigDict(extra="forbid")

    key: SecretStr | None = None
    """The encryption key, URL-safe base64 of 32 bytes (``TOOLDECK_CREDENTIALS__KEY``);
    None: the OS keyring's, else ``<data_dir>/credentials.key`` (made 0600)."""
    use_keyring: bool = True
    """Keep the key in the OS keyring where one works (macOS Keychain, Windows
    Credential Locker, the Secret Service); false: always the key file."""


class AgentSettings(BaseModel):
    """The chat agent (``tooldeck chat``, ``/api/chat``).

    With a ``model``, a tool-calling loop against any OpenAI-compatible endpoint
    (the ``openai`` package, ``tooldeck[builtin]``); without one, the deterministic
    intent router of the brokerage pack (no model, no network).
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    """Model name; None: the intent router answers."""
    base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``; None: OpenAI's."""
    api_key: SecretStr | None = None
    """API key, if the endpoint needs one."""
    max_steps: int = Field(6, ge=1, le=50)
    """Model turns per run (each may make several tool calls) before giving up."""
    temperature: float = Field(0.0, ge=0, le=2)
    """Sampling temperature."""
    max_tokens: int = Field(1024, gt=0)
    """Longest completion per turn."""
    timeout_s: float = Field(60.0, gt=0)
    """Seconds per model request."""
    strict_tools: bool = False
    """Send tool schemas in OpenAI strict mode (endpoints that support it)."""
    max_runs_in_memory: int = Field(256, ge=1)
    """Finished runs kept in memory for fast replay; older ones are read from the
    database."""
    defer_tools_over: int = Field(40, ge=0)
    """With more tools than this in a run's view, the model is sent ``search_tools`` and
    the ``always_visible`` tools instead of every definition; the tools its searches
    find are sent for the rest of the run (``core.tool_search``). 0: always send all.
    Also applies over MCP with ``[server] mcp_search_tools``."""
    always_visible: list[str] = Field(default_factory=list)
    """Tools sent even when the others are deferred: names or ``fnmatch`` patterns
    (``get_*``)."""


class Settings(BaseSettings):
    """All of tooldeck's configuration.

    The shipped packs' tables (``[builtin]``, ``[brokerage]``, ``[knowledge]``,
    ``[context]``) are fields too, added from ``packs.loader.SHIPPED_CONFIGS`` by
    ``load_settings`` (``with_pack_tables``): this module names no pack. Read one with
    ``settings.pack_table(name)``.
    """

    model_config = SettingsConfigDict(
        env_prefix="TOOLDECK_", env_nested_delimiter="__", extra="forbid", toml_file=None
    )

    _config_file: Path | None = PrivateAttr(None)
    _toml_data: dict[str, Any] = PrivateAttr(default_factory=dict)
    """The file's tables as read (for ``origin``)."""

    data_dir: Path = Field(default_factory=lambda: project_data_dir())
    """Where the audit database, approvals and other state live; default: see
    ``project_data_dir`` (``load_settings``: ``.tooldeck/`` beside the config file)."""
    server: ServerSettings = Field(default_factory=ServerSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)
    receipts: ReceiptSettings = Field(default_factory=ReceiptSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    credentials: CredentialSettings = Field(default_factory=CredentialSettings)
    flow: FlowConfig = Field(default_factory=FlowConfig)
    """Data-flow labels: a run that read private data asks before it sends data out
    (``providers.flow``, docs/security.md)."""
    agent: AgentSettings = Field(default_factory=AgentSettings)
    runs: RunSettings = Field(default_factory=RunSettings)
    tools: list[str] = Field(default_factory=list)
    """Your own tools: files (``./tools.py``, relative to this file), modules
    (``mypkg.tools``) or objects (``mypkg.tools:registry``); see ``packs.loader``."""
    packs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Installed packs' tables (``[packs.weather]``), by pack name; each is validated by
    its pack's ``config_model`` when the runtime is built (an unknown name is an error
    listing the loaded packs)."""
    mcp_servers: dict[str, MCPServerConfig] = Field(default_factory=dict)
    """MCP servers to connect, by id (the standard ``mcpServers`` form)."""
    mcp_config: Path | None = None
    """An MCP client's JSON file (``{"mcpServers": {...}}``) whose servers are added."""
    openapi: dict[str, OpenAPIConfig] = Field(default_factory=dict)
    """HTTP APIs whose OpenAPI documents' operations become tools, by name
    (``[openapi.<name>] spec = "..." base_url = "..."``; ``providers.openapi``)."""
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict)
    """Named views of the tools; callers pick one with ``--profile`` / ``?profile=``."""

    _servers: dict[str, MCPServerConfig] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_references(self) -> Settings:
        servers = self._servers = self._merge_mcp_servers()  # the file is read once
        if self.approvals.approvers and not self.server.trust_user_header:
            raise ValueError(
                "approvals.approvers names principals, but server.trust_user_header is "
                "false, so no caller has a verified name; set it (behind a proxy that "
                "authenticates users and sets X-User) or remove approvers"
            )
        for name, profile in self.profiles.items():
            unknown = sorted(set(profile.mcp_servers or ()) - set(servers))
            if unknown:
                raise ValueError(
                    f"profiles.{name}.mcp_servers names unknown server(s) {unknown}; "
                    f"configured: {sorted(servers) or 'none'}"
                )
        return self

    def all_mcp_servers(self) -> dict[str, MCPServerConfig]:
        """``mcp_servers`` plus the servers of ``mcp_config`` (read when settings load).

        Raises:
            ValueError: the file cannot be read, or it repeats an id from ``mcp_servers``
                (only for settings built without validation; loading reports it first).
        """
        return dict(self._servers) if self._servers is not None else self._merge_mcp_servers()

    def _merge_mcp_servers(self) -> dict[str, MCPServerConfig]:
        if self.mcp_config is None:
            return dict(self.mcp_servers)
        imported = load_mcp_servers_file(self.mcp_config)
        clash = sorted(set(imported) & set(self.mcp_servers))
        if clash:
            raise ValueError(
                f"MCP server id(s) {clash} are in both mcp_servers and {self.mcp_config}; "
                "rename one"
            )
        return {**self.mcp_servers, **imported}

    def pack_table(self, name: str) -> Any:
        """A pack's table: a shipped pack's validated model, else ``[packs.<name>]``.

        An installed pack's table is returned as written (its pack's ``config_model``
        validates it when the runtime is built), ``{}`` when absent.
        """
        if name in SHIPPED_CONFIGS and name in type(self).model_fields:
            return getattr(self, name)
        return self.packs.get(name, {})

    def policy_config(self) -> PolicyConfig:
        """``policy`` with each profile's ``policy`` layer added under ``profiles``."""
        layers = {n: p.policy for n, p in self.profiles.items() if p.policy.model_fields_set}
        return self.policy.model_copy(update={"profiles": {**self.policy.profiles, **layers}})

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then environment, then the TOML file named in ``model_config``."""
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

    def origin(self, *path: str) -> str:
        """Where the value at ``path`` (``"policy", "timeout_s"``) was set.

        Returns:
            ``environment TOOLDECK_POLICY__TIMEOUT_S``, ``<file> [policy]`` (the TOML
            table that sets it), or ``default`` when neither does.
        """
        env = "TOOLDECK_" + "__".join(path).upper()
        if env in os.environ:
            return f"environment {env}"
        node: Any = self._toml_data
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return f"{self._config_file} [{'.'.join(path[:-1])}]"
        return "default"

    @property
    def config_file(self) -> Path | None:
        """The TOML file the settings were read from, if any."""
        return self._config_file

    @property
    def audit_url(self) -> str:
        """The audit store's SQLAlchemy URL: ``[audit] url``, ``[store] url`` or the data dir's."""
        if self.audit.url:
            return self.audit.url
        if self.store.url:
            return "postgresql+psycopg://" + self.store.url.split("://", 1)[1]
        return f"sqlite:///{self.data_dir / 'audit.db'}"

    @property
    def receipts_url(self) -> str | None:
        """The receipts' PostgreSQL URL (``[receipts] url`` or ``[store] url``); None: SQLite."""
        return self.receipts.url or self.store.url

    @property
    def approvals_url(self) -> str | None:
        """The approvals' PostgreSQL URL (``[approvals] url`` or ``[store] url``); None: SQLite."""
        return self.approvals.url or self.store.url


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``tooldeck.toml`` in ``start`` (default: the current folder) or above.

    Semantics:
        A ``tooldeck.toml`` names code to import and commands to run, so it is read only
        from places the user controls (git's ``safe.directory`` reasoning): the search
        stops at the first folder, and skips a file, that is owned by another user
        than the current one or root, or that others may write (``/tmp``,
        ``/var/tmp``); and it never looks above the home folder when it starts inside
        it. What it stopped at is logged (``tooldeck.config``); a file named with
        ``--config`` or ``$TOOLDECK_CONFIG`` is the user's explicit choice and is read.
    """
    folder = (start or Path.cwd()).resolve()
    home = _home()
    for candidate in (folder, *folder.parents):
        path = candidate / DEFAULT_CONFIG_FILE.name
        where, unsafe = candidate, _unsafe(candidate)
        if not unsafe and path.is_file():
            where, unsafe = path, _unsafe(path)
        if unsafe:
            skipped = next(
                (p for c in (candidate, *candidate.parents) if (p := c / path.name).is_file()),
                None,
            )
            if skipped is not None:  # say so only when a file was passed over
                log.warning(
                    "config: ignored %s: %s is %s (use --config to read it)", skipped, where, unsafe
                )
            return None
        if path.is_file():
            return path
        if candidate == home:
            return None
    return None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no HOME and no passwd entry
        return None


def _unsafe(path: Path) -> str | None:
    """Why ``path`` (a folder or a file) may hold what another user wrote, or None."""
    try:
        info = path.stat()
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # no POSIX owners (Windows)
        return None
    if info.st_uid not in (getuid(), 0):
        return f"owned by another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return "writable by every user"
    return None


def _read_toml(toml_file: Path | None) -> dict[str, Any]:
    if toml_file is None:
        return {}
    try:
        with toml_file.open("rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError):
        return {}  # the settings source reads it again and reports the problem


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _known_keys(error: Any) -> str:
    """For an unknown key (``extra_forbidden``): the keys that table has, closest first."""
    if error["type"] != "extra_forbidden":
        return ""
    from tooldeck.core.names import closest_names

    node: Any = with_pack_tables()
    for part in error["loc"][:-1]:
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            node = None if field is None else field.annotation
        else:  # a table of tables (profiles.<name>): the key names one of them
            node = get_args(node)[-1] if get_origin(node) is dict else None
        if get_origin(node) is not dict:  # Optional[Model] → Model
            node = next((t for t in (node, *get_args(node)) if _is_model(t)), None)
        if node is None:
            return ""
    if not _is_model(node):
        return ""
    model: type[BaseModel] = node
    names = sorted(model.model_fields)
    near = closest_names(str(error["loc"][-1]), names)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"{hint} (keys: {', '.join(names)})"


def project_data_dir(folder: Path | None = None) -> Path:
    """The data dir of a project that has no config file: one per folder, never shared.

    ``<folder>/.tooldeck`` when it exists (and is this user's, not writable by others);
    else ``<user data folder>/projects/<folder name>-<8 hex of its path's SHA-256>``
    (``~/.local/share/tooldeck/projects/shop-1a2b3c4d`` on Linux), so two checkouts
    never see each other's history and the checkout itself is not written to.

    Args:
        folder: The project's folder; None: the current one.
    """
    folder = (folder or Path.cwd()).resolve()
    own = folder / ".tooldeck"
    with contextlib.suppress(OSError):
        if own.is_dir() and not_private(own) is None:  # what approvals.db needs, too
            return own
    digest = hashlib.sha256(str(folder).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", folder.name) or "root"
    return Path(platformdirs.user_data_dir("tooldeck")) / "projects" / f"{name}-{digest}"


def keep_out_of_git(data_dir: Path) -> None:
    """Create a project's ``.tooldeck/`` with a ``.gitignore`` of ``*`` in it (issue 55).

    The folder holds the history, uploaded documents, approvals and credentials: a
    ``git add .`` in a project the README has the user ``git init`` must not take them,
    as a virtual environment keeps itself out. Only a folder named ``.tooldeck`` (a
    ``data_dir`` of the user's own naming may hold files they track); an existing
    ``.gitignore`` is left as it is; a folder that cannot be written is left alone.
    """
    if data_dir.name != ".tooldeck":
        return
    with contextlib.suppress(OSError):
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        ignore = data_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# tooldeck's state: history, documents, approvals, keys\n*\n")


@functools.cache
def with_pack_tables() -> type[Settings]:
    """``Settings`` with a field per shipped pack's table, typed by its config model.

    The models are named in ``packs.loader.SHIPPED_CONFIGS`` (``module:Model``) and
    imported here, once: a table is validated like any other (unknown keys name the
    closest, environment overrides such as ``TOOLDECK_BUILTIN__ENABLED`` apply).
    """
    fields: dict[str, Any] = {}
    for name, spec in SHIPPED_CONFIGS.items():
        module, _, attr = spec.partition(":")
        model = getattr(importlib.import_module(module), attr)
        fields[name] = (model, Field(default_factory=model))
    made: type[Settings] = create_model(
        "Settings", __base__=Settings, __module__=__name__, **fields
    )
    return made


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Load settings from a TOML file and the environment (``TOOLDECK_*``).

    Semantics:
        The file is ``config_file``, else ``$TOOLDECK_CONFIG``, else the nearest
        ``tooldeck.toml`` in the current folder or above (``find_config``), else none.
        With a file, the data (audit, runs) live in ``.tooldeck/`` beside it unless
        ``data_dir`` is set, so that each project has its own history; without one,
        ``project_data_dir()`` (one per folder, in the user data folder).

    Raises:
        ConfigError: the file named does not exist, is not TOML, or a value is invalid;
            the message names the file and each bad field.
    """
    if config_file is None and os.environ.get("TOOLDECK_CONFIG"):
        config_file = os.environ["TOOLDECK_CONFIG"]
    toml_file = Path(config_file) if config_file is not None else find_config()
    if toml_file is not None and not toml_file.is_file():
        raise ConfigError(f"config file {toml_file} does not exist")
    toml_data = _read_toml(toml_file)
    if (
        toml_file is not None
        and "data_dir" not in overrides
        and "data_dir" not in toml_data
        and "TOOLDECK_DATA_DIR" not in os.environ
    ):
        overrides["data_dir"] = toml_file.parent / ".tooldeck"  # this project's own

    class _Settings(with_pack_tables()):  # type: ignore[misc]
        model_config = SettingsConfigDict(toml_file=toml_file)

    try:
        settings = _Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}{_known_keys(e)}"
            for e in exc.errors(include_url=False)
        )
        raise ConfigError(
            f"invalid configuration ({toml_file or 'defaults + environment'}): {problems}"
        ) from None
    except ValueError as exc:  # TOML syntax errors
        raise ConfigError(f"cannot read config file {toml_file}: {exc}") from None
    settings._config_file, settings._toml_data = toml_file, toml_data
    return settings
