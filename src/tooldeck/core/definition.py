"""What a tool is, as every exporter and wrapper provider reads it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DataLabel", "Effect", "ToolAnnotations", "ToolDefinition"]

DataLabel = Literal["private", "untrusted", "public"]
"""What a tool's results are (data-flow labels): ``private`` (the user's own data:
statements, notes, files, holdings), ``untrusted`` (content someone else wrote: web
pages, uploaded documents, MCP results), ``public``."""

Effect = Literal["egress", "destructive"]
"""What a tool does with its arguments: ``egress`` (sends them outside: a web fetch,
an issue on GitHub, a remote model), ``destructive`` (changes things)."""


class ToolAnnotations(BaseModel):
    """Behaviour hints (MCP ``ToolAnnotations``: readOnlyHint, destructiveHint, ...).

    None means "not stated"; exporters omit unstated hints.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str | None = None
    """Human-readable title."""
    read_only: bool | None = None
    """The tool does not modify its environment."""
    destructive: bool | None = None
    """The tool may perform destructive updates."""
    idempotent: bool | None = None
    """Repeating a call with the same arguments has no additional effect."""
    open_world: bool | None = None
    """The tool interacts with an open world of external entities (web, APIs)."""


class ToolDefinition(BaseModel):
    """A tool's description for models, clients and wrapper providers.

    Semantics:
        ``input_schema`` is a JSON Schema (draft 2020-12) object schema; it is what a
        model sees, and what arguments are validated against. ``aliases`` are other
        names the same tool answers to (registration aliases and the format-safe name
        of ``core.names.safe_tool_name``). ``timeout_s`` None means "the policy default".
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Canonical, unique name."""
    description: str
    """What the tool does and when to use it, for the model."""
    input_schema: dict[str, Any]
    """JSON Schema of the arguments."""
    output_schema: dict[str, Any] | None = None
    """JSON Schema of ``ToolResult.data`` on success, when known."""
    version: str = "1.0.0"
    """The tool's version, reported in result metadata."""
    tags: tuple[str, ...] = ()
    """Free-form labels for grouping and filtering."""
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    """Behaviour hints."""
    requires_confirmation: bool = False
    """A human must approve each call."""
    confirm_actions: tuple[str, ...] = ()
    """For a tool with an ``action`` argument (``CompositeTool``): the actions a human
    must approve, when not every call needs it (e.g. ``files`` write, not read)."""
    timeout_s: float | None = None
    """Per-call timeout in seconds; None uses the policy default."""
    source_id: str | None = None
    """Provenance id the tool's results carry, e.g. ``tool:positions:v1``."""
    provider: str | None = None
    """Id of the provider serving the tool (``local``, an MCP server id)."""
    server_id: str | None = None
    """The MCP server the tool comes from; None for tools that are not MCP tools."""
    aliases: tuple[str, ...] = ()
    """Other names this tool answers to."""
    labels: tuple[DataLabel, ...] | None = Field(None, exclude_if=lambda value: value is None)
    """What its results are (``DataLabel``); None: not declared, read from the
    annotations (``providers.flow``)."""
    effects: tuple[Effect, ...] | None = Field(None, exclude_if=lambda value: value is None)
    """What it does with its arguments (``Effect``); None: not declared, read from the
    annotations (``open_world``: egress, ``destructive``)."""

    @property
    def safe_to_repeat(self) -> bool:
        """Whether a call that may have run can be sent again.

        True when the tool is annotated read-only or idempotent (the one retry rule;
        see ``providers.policy``).
        """
        return bool(self.annotations.read_only or self.annotations.idempotent)
