"""Settings of the built-in tools, the ``[builtin]`` section of ``tooldeck.toml``.

Example::

    [builtin]
    roots = ["/srv/project"]          # files, git, python/shell cwd stay inside these
    disabled = ["shell"]              # tools not to register

    [builtin.python]
    timeout_s = 10
    memory_mb = 512

    [builtin.web]
    allow_hosts = ["127.0.0.1"]       # private addresses the fetcher may reach
    [builtin.web.search]
    backend = "searxng"
    url = "http://127.0.0.1:8888"

    [builtin.llm]
    base_url = "http://127.0.0.1:8000/v1"
    model = "gemma-3-270m"
"""

from __future__ import annotations

import pwd
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = [
    "BuiltinConfig",
    "FilesConfig",
    "GitConfig",
    "GitHubConfig",
    "LLMConfig",
    "PythonConfig",
    "SearchConfig",
    "ShellConfig",
    "WebConfig",
]

SEED_MODULES = (
    "os", "sys", "json", "re", "pathlib", "shutil", "subprocess", "datetime", "time",
    "random", "base64", "hashlib", "tempfile", "csv",
)  # fmt: skip
"""Modules every ``python`` call has imported (seed 001 PythonTool)."""
OPTIONAL_MODULES = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot")
"""Imported too when installed (``pd``, ``np``, ``plt``)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PythonConfig(_Section):
    """The ``python`` and ``execute_script`` tools: limits of each run (seed 001)."""

    timeout_s: float = Field(30.0, gt=0)
    """Wall-clock seconds per run; the process group is killed after it."""
    cpu_s: float | None = Field(30.0, gt=0)
    """CPU seconds per run."""
    memory_mb: int | None = Field(1024, gt=0)
    """MiB of address space the code may add to the preloaded modules'."""
    max_output_bytes: int = Field(64_000, gt=0)
    """Bytes of stdout and of stderr returned; the rest is cut with a marker."""
    max_processes: int | None = Field(64, gt=0)
    """Processes the code may start (``RLIMIT_NPROC``; the kernel ignores it for root)."""
    max_file_mb: int | None = Field(100, gt=0)
    """MiB one file the code writes may grow to (``RLIMIT_FSIZE``)."""
    preload: list[str] = Field(default_factory=lambda: [*SEED_MODULES, *OPTIONAL_MODULES])
    """Modules imported once by the fork server; missing ones are skipped."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the code, added to PATH, HOME, LANG and TMPDIR."""
    user: str | None = None
    """Run the code as this user (the server must run as root). None: ``nobody`` when
    the server runs as root, else the server's user; ``"root"`` keeps root (trusted)."""
    isolate: bool = True
    """Each run in its own PID, mount, IPC and network namespaces (Linux; needs root or
    user namespaces, else a warning is logged and runs share the server's)."""
    network: bool = False
    """Let the code reach the network (and so any server on 127.0.0.1, this one too)."""
    spares: int = Field(4, ge=1, le=32)
    """Processes the fork server keeps prepared (forked, isolated, warmed up), so that up
    to this many calls at once (a model's parallel tool calls) do not wait for one.
    Each is one process with ~2.8 MiB of its own (the rest is shared with the server);
    8 parallel calls of ``1 + 1`` take 38 ms with 1, 30 ms with 4, 16 ms with 8
    (``benchmarks/python_exec.py --quick --spares N``)."""

    @field_validator("user")
    @classmethod
    def _user_exists(cls, value: str | None) -> str | None:
        if value is not None and value != "root":
            try:
                pwd.getpwnam(value)
            except KeyError:
                raise ValueError(f"no user named {value!r} on this machine") from None
        return value


class FilesConfig(_Section):
    """The ``files`` tool."""

    max_read_bytes: int = Field(1_000_000, gt=0)
    """Largest file ``read`` returns."""
    max_write_bytes: int = Field(5_000_000, gt=0)
    """Largest content ``write`` accepts."""
    max_results: int = Field(200, gt=0)
    """Entries ``list`` and ``search`` return at most."""


class ShellConfig(_Section):
    """The ``shell`` tool."""

    timeout_s: float = Field(30.0, gt=0)
    """Seconds before the command's process group is killed."""
    max_output_bytes: int = Field(64_000, gt=0)
    """Bytes of stdout and of stderr returned."""
    allowed_commands: list[str] | None = None
    """Command names that may run (first word of each pipeline part); None: any."""
    env_allow: list[str] = Field(
        default_factory=lambda: ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "TZ"]
    )
    """Variables of the server's environment passed to the command; the rest is not."""


class SearchConfig(_Section):
    """The search backend of the ``web`` tool."""

    backend: Literal["searxng", "brave"] | None = None
    """None: ``web`` search answers ``unavailable`` with how to configure one."""
    url: str | None = None
    """SearXNG: the instance's base URL (its JSON API must be enabled)."""
    api_key: SecretStr | None = None
    """Brave Search API key."""


class WebConfig(_Section):
    """The ``web`` tool."""

    timeout_s: float = Field(15.0, gt=0)
    """Seconds per HTTP request."""
    max_bytes: int = Field(5_000_000, gt=0)
    """Largest response body read."""
    max_redirects: int = Field(5, ge=0)
    """Redirects followed (each target is checked like the first URL)."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Hosts, IPs or CIDR ranges that may be private, loopback or link-local."""
    user_agent: str = "tooldeck-web/1.0 (+https://github.com/tooldeck)"
    """User-Agent header."""
    search: SearchConfig = Field(default_factory=SearchConfig)
    """Search backend."""


class GitConfig(_Section):
    """The ``git`` tool."""

    timeout_s: float = Field(30.0, gt=0)
    """Seconds per git command."""
    max_output_bytes: int = Field(200_000, gt=0)
    """Bytes of git output returned (diffs, logs)."""


class GitHubConfig(_Section):
    """The ``github`` tool (REST API v3)."""

    base_url: str = "https://api.github.com"
    """API root; GitHub Enterprise: ``https://<host>/api/v3``."""
    token: SecretStr | None = None
    """Personal access or app token; without one only public data is readable."""
    timeout_s: float = Field(15.0, gt=0)
    """Seconds per request."""


class LLMConfig(_Section):
    """The ``llm`` tool: any OpenAI-compatible endpoint (seed 001 LLMTool)."""

    base_url: str | None = None
    """Endpoint, e.g. ``http://127.0.0.1:8000/v1``; None with no ``model``: unconfigured."""
    api_key: SecretStr | None = None
    """API key, if the endpoint needs one."""
    model: str | None = None
    """Model name; a call may pick another."""
    temperature: float = Field(0.2, ge=0, le=2)
    """Default sampling temperature."""
    max_tokens: int = Field(1024, gt=0)
    """Default completion length."""
    timeout_s: float = Field(60.0, gt=0)
    """Seconds per request."""


class BuiltinConfig(_Section):
    """All built-in tools.

    ``python``, ``execute_script``, ``files``, ``shell``, ``web``, ``git``, ``github``,
    ``math``, ``llm``.
    """

    enabled: bool = True
    """Register the built-in tools."""
    disabled: list[str] = Field(default_factory=list)
    """Tools not to register, by name."""
    roots: list[Path] = Field(default_factory=lambda: [Path.cwd()], min_length=1)
    """Directories the tools may touch; paths resolving elsewhere are ``denied``.
    Relative ones are taken from the config file's folder. Unset: the config file's
    folder, else the current folder; a default that is ``/`` or the home folder is
    refused (set it explicitly to mean it)."""
    python: PythonConfig = Field(default_factory=PythonConfig)
    files: FilesConfig = Field(default_factory=FilesConfig)
    shell: ShellConfig = Field(default_factory=ShellConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    git: GitConfig = Field(default_factory=GitConfig)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
