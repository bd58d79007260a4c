r"""The one envelope every tool call returns (ARCHITECTURE.md, "One envelope").

>>> r = ToolResult.ok({"price": 193.12}, source_id="tool:quotes:v1", as_of="2026-01-15")
>>> r.success, r.to_llm()
(True, '{"price":193.12}\\n[source_id: tool:quotes:v1 | as_of: 2026-01-15]')
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

__all__ = [
    "DEFAULT_MAX_LLM_CHARS",
    "ArgumentsEdit",
    "Artifact",
    "ErrorType",
    "ResultMetadata",
    "ToolError",
    "ToolResult",
]

DEFAULT_MAX_LLM_CHARS = 20_000
"""Default cap on the text ``ToolResult.to_llm()`` hands to a model, in characters."""


class ErrorType(StrEnum):
    """Why a call failed. Clients branch on it; REST maps it to an HTTP status."""

    not_found = "not_found"
    validation = "validation"
    timeout = "timeout"
    execution = "execution"
    denied = "denied"
    confirmation_required = "confirmation_required"
    circuit_open = "circuit_open"
    unavailable = "unavailable"
    cancelled = "cancelled"
    """The caller cancelled the call before it answered (what the audit records)."""


class ToolError(BaseModel):
    """What went wrong in a failed call, phrased so a model can act on it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ErrorType
    """Category of the failure."""
    message: str
    """Actionable text: which field, what was expected, which names exist."""
    details: dict[str, Any] | None = None
    """Structured data for clients (field errors, closest names, traceback for audit)."""
    retryable: bool = False
    """Whether calling again with the same arguments may succeed."""

    @property
    def may_have_run(self) -> bool:
        """Whether the failed call may have reached the tool: ``details["may_have_run"]``.

        Set when a call was sent and then the connection was lost. Repeating it may
        repeat a side effect, so only a tool that is ``safe_to_repeat`` is retried
        automatically.
        """
        return bool(self.details and self.details.get("may_have_run"))


class Artifact(BaseModel):
    """A file, image or link a tool produced beside its data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["file", "image", "link"]
    """What the artifact is."""
    uri: str
    """Where it is: a ``file://`` path, an ``http(s)://`` URL or a ``data:`` URI."""
    mime_type: str | None = None
    """Media type, e.g. ``image/png``."""
    name: str | None = None
    """Display name."""


class ArgumentsEdit(BaseModel):
    """Arguments an approver put in place of the ones a caller asked for.

    The confirming provider sets it on the result of a call it ran with edited
    arguments, so the caller (a model) and the audit log know what really ran.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    arguments: dict[str, Any]
    """The arguments the call ran with."""
    by: str | None = None
    """Who edited them (the approver), when known."""


class ResultMetadata(BaseModel):
    """How a call ran: which tool, how long, how many attempts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_name: str | None = None
    """Canonical name of the tool that ran (aliases resolved)."""
    tool_version: str | None = None
    """The tool's declared version."""
    request_id: str | None = None
    """Id of this call: the caller's (e.g. an OpenAI ``tool_call_id``) or generated."""
    duration_ms: float | None = None
    """Wall time of the call in milliseconds, all attempts included."""
    attempts: int = 1
    """Attempts made, retries included."""
    provider: str | None = None
    """Id of the provider that served the call (``local``, an MCP server id, ...)."""
    edited: ArgumentsEdit | None = Field(default=None, exclude_if=lambda value: value is None)
    """Set when an approver edited the arguments: the call ran with ``edited.arguments``,
    not with the ones asked (left out of a dump when None)."""
    replay_of: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """Set when this result is the stored result of an earlier call with the same
    idempotency key (``providers.receipts``): that call's ``request_id``; the tool did
    not run again (left out of a dump when None)."""


class ToolResult(BaseModel):
    """The envelope of one tool call, success or failure.

    Semantics:
        ``status == "error"`` if and only if ``error`` is set; ``success`` is derived
        from ``status``. ``data`` is JSON-able (a tool's ``ResponseModel`` is dumped in
        JSON mode). ``source_id`` and ``as_of`` carry provenance (seed 004) so an answer
        can cite the data behind it. Layers never mutate a result; they derive a new one
        with ``model_copy(update=...)``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["success", "error"]
    """Outcome of the call."""
    data: Any = None
    """The typed payload, as JSON-able data."""
    output: str | None = None
    """Text for the model when the tool provides its own; else rendered from ``data``."""
    error: ToolError | None = None
    """Set when ``status == "error"``."""
    source_id: str | None = None
    """Provenance, ``tool:<domain>:v<N>``."""
    as_of: str | None = None
    """Freshness of the data, ISO 8601 date or date-time."""
    artifacts: list[Artifact] = Field(default_factory=list)
    """Files, images or links produced."""
    metadata: ResultMetadata = Field(default_factory=ResultMetadata)
    """Tool name, version, request id, duration, attempts, provider."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success(self) -> bool:
        """True when ``status == "success"``."""
        return self.status == "success"

    @model_validator(mode="before")
    @classmethod
    def _accept_dumped_success(cls, values: Any) -> Any:
        # A dump carries the derived ``success``; accept it back when it agrees.
        if isinstance(values, dict) and "success" in values:
            values = dict(values)
            success = values.pop("success")
            if success != (values.get("status") == "success"):
                raise ValueError(f"success={success!r} contradicts status={values.get('status')!r}")
        return values

    @model_validator(mode="after")
    def _error_matches_status(self) -> ToolResult:
        if (self.status == "error") != (self.error is not None):
            raise ValueError("error must be set exactly when status is 'error'")
        return self

    @classmethod
    def ok(
        cls,
        data: Any = None,
        *,
        output: str | None = None,
        source_id: str | None = None,
        as_of: str | None = None,
        artifacts: list[Artifact] | None = None,
        metadata: ResultMetadata | None = None,
    ) -> ToolResult:
        """Build a success result (validated)."""
        return cls(
            status="success",
            data=data,
            output=output,
            source_id=source_id,
            as_of=as_of,
            artifacts=artifacts or [],
            metadata=metadata or ResultMetadata(),
        )

    @classmethod
    def fail(
        cls,
        type: ErrorType | str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retryable: bool = False,
        metadata: ResultMetadata | None = None,
    ) -> ToolResult:
        """Build an error result (validated).

        Args:
            type: One of ``ErrorType``.
            message: Actionable text for the model.
            details: Structured data for clients.
            retryable: Whether the same call may succeed later.
            metadata: Call metadata, if known.
        """
        return cls(
            status="error",
            error=ToolError(
                type=ErrorType(type), message=message, details=details, retryable=retryable
            ),
            metadata=metadata or ResultMetadata(),
        )

    def with_metadata(self, **updates: Any) -> ToolResult:
        """Derive a copy whose metadata has ``updates`` applied."""
        return self.model_copy(update={"metadata": self.metadata.model_copy(update=updates)})

    def llm_body(self) -> str:
        """The whole text ``to_llm`` shows of a success, before any cut.

        ``output``, else ``data`` itself when it is text, else compact JSON of ``data``:
        the text whose character offsets the marker of a cut result gives.
        """
        if self.output is not None:
            return self.output
        data = self.data
        return data if isinstance(data, str) else _compact_json(data)

    def to_llm(self, max_chars: int = DEFAULT_MAX_LLM_CHARS) -> str:
        """Render the text a model receives for this result.

        Success: the tool's ``output`` if any, else ``data`` (as it is when text, else
        compact JSON: ``llm_body``); followed by
        a provenance line when ``source_id`` or ``as_of`` is set, so the model can cite
        it, and a line with the arguments that ran when an approver edited them. Error:
        ``Error (<type>): <message>`` and a retry hint when retryable.

        Args:
            max_chars: Cap on the body, in characters. Past it the model gets the
                body's head (two thirds) and tail (one third) with a marker between
                them that says which characters were left out and the call's
                ``request_id``: a run's model reads the rest with ``read_result``
                (``agent.pages``), page by page. The full data stays in this result.

        Returns:
            The text, at most ``max_chars`` plus the marker and provenance line.
        """
        if self.error is not None:
            text = f"Error ({self.error.type.value}): {self.error.message}"
            if self.error.retryable:
                text += " This may succeed if retried."
            return text
        body = self.llm_body()
        if len(body) > max_chars:
            head = max_chars * 2 // 3
            tail = max_chars - head
            end = len(body) - tail
            body = (
                f"{body[:head]}\n…[characters {head} to {end} of {len(body)} left out; "
                f"request_id={self.metadata.request_id}]…\n{body[end:]}"
            )
        if self.source_id or self.as_of:
            body += f"\n[source_id: {self.source_id or '-'} | as_of: {self.as_of or '-'}]"
        edited = self.metadata.edited
        if edited is not None:
            body += (
                f"\n[ran with arguments edited by {edited.by or 'the approver'}: "
                f"{_compact_json(edited.arguments)}]"
            )
        return body


def _compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


# -- trusted construction ------------------------------------------------------------
# The execution path builds results from values it produced itself. Pydantic's
# validating constructor costs ~3 µs for an envelope, more than the whole call budget
# (benchmarks/overhead.py), so these helpers build the same objects without
# re-validating. tests/core/test_result.py checks that they equal validated ones.

_new = object.__new__
# BaseModel's slots, set through their descriptors (~25 ns each, not the ~50 ns of
# object.__setattr__'s lookup): a result and its metadata are eight of them per call.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _trusted(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> Any:
    obj = _new(cls)
    _set_dict(obj, values)
    _set_fields(obj, fields_set)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


_META_SET = {"tool_name", "tool_version", "request_id", "duration_ms", "attempts"}
_OK_SET = {"status", "data", "source_id", "as_of", "metadata"}
_ERR_SET = {"status", "error", "metadata"}


def trusted_metadata(
    tool_name: str | None,
    tool_version: str | None,
    request_id: str | None,
    duration_ms: float | None,
    attempts: int = 1,
    provider: str | None = None,
) -> ResultMetadata:
    """Build ``ResultMetadata`` from trusted values without validation (hot path)."""
    return _trusted(  # type: ignore[no-any-return]
        ResultMetadata,
        {
            "tool_name": tool_name,
            "tool_version": tool_version,
            "request_id": request_id,
            "duration_ms": duration_ms,
            "attempts": attempts,
            "provider": provider,
            "edited": None,
            "replay_of": None,
        },
        _META_SET,
    )


def trusted_call_success(
    data: Any,
    source_id: str | None,
    as_of: str | None,
    tool_name: str,
    tool_version: str,
    request_id: str,
    duration_ms: float,
    provider: str | None,
) -> ToolResult:
    """``trusted_success`` with its metadata, built in one step (the hottest path)."""
    meta = _new(ResultMetadata)
    _set_dict(
        meta,
        {
            "tool_name": tool_name,
            "tool_version": tool_version,
            "request_id": request_id,
            "duration_ms": duration_ms,
            "attempts": 1,
            "provider": provider,
            "edited": None,
            "replay_of": None,
        },
    )
    _set_fields(meta, _META_SET)
    _set_extra(meta, None)
    _set_private(meta, None)
    result = _new(ToolResult)
    _set_dict(
        result,
        {
            "status": "success",
            "data": data,
            "output": None,
            "error": None,
            "source_id": source_id,
            "as_of": as_of,
            "artifacts": [],
            "metadata": meta,
        },
    )
    _set_fields(result, _OK_SET)
    _set_extra(result, None)
    _set_private(result, None)
    return result


def trusted_success(
    data: Any,
    source_id: str | None,
    as_of: str | None,
    metadata: ResultMetadata,
    output: str | None = None,
    artifacts: list[Artifact] | None = None,
) -> ToolResult:
    """Build a success ``ToolResult`` from trusted values without validation (hot path).

    ``data`` must already be JSON-able; callers are the execution path only.
    """
    return _trusted(  # type: ignore[no-any-return]
        ToolResult,
        {
            "status": "success",
            "data": data,
            "output": output,
            "error": None,
            "source_id": source_id,
            "as_of": as_of,
            "artifacts": artifacts if artifacts is not None else [],
            "metadata": metadata,
        },
        _OK_SET,
    )
