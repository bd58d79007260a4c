"""Exceptions of tooldeck.

Two families, kept apart on purpose::

    ToolDeckError                 programmer errors, raised to the caller at build time
    ├── RegistrationError         a tool cannot be registered (bad name, bad schema)
    │   └── DuplicateToolError    two tools (or an alias) claim the same name
    ├── ConfigError               tooldeck.toml / environment cannot be used
    ├── DataPackError             a pack's data file is missing or malformed
    ├── ServiceNotFoundError      ServiceContainer.get() for a type never registered
    ├── StoreUnavailableError     a store's database (PostgreSQL) cannot be reached (HTTP 503)
    └── RunError                  an agent run request that cannot be honoured
        ├── RunNotFoundError      no run has that id (HTTP 404)
        ├── RunStateError         the run's state does not allow it (HTTP 409)
        └── RunEngineError        the run engine (Temporal) cannot be reached (HTTP 503)

    ToolFailure                   raised *inside* a tool to choose its error envelope;
    ├── InvalidArgumentsError     never seen by callers, who get ToolResult(status="error")
    ├── TransientToolError
    ├── ToolUnavailableError
    └── ToolDeniedError

Tool-level failures never reach a caller as an exception: every layer turns them
into ``ToolResult(status="error")`` (ARCHITECTURE.md, "One envelope").
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ConfigError",
    "DataPackError",
    "DuplicateToolError",
    "InvalidArgumentsError",
    "RegistrationError",
    "RunEngineError",
    "RunError",
    "RunNotFoundError",
    "RunStateError",
    "ServiceNotFoundError",
    "StoreUnavailableError",
    "ToolDeckError",
    "ToolDeniedError",
    "ToolFailure",
    "ToolUnavailableError",
    "TransientToolError",
]


class ToolDeckError(Exception):
    """Base of the programmer errors tooldeck raises at build or start-up time."""


class RegistrationError(ToolDeckError):
    """A tool cannot be registered: invalid name, unusable schema or signature."""


class DuplicateToolError(RegistrationError):
    """Two tools, or a tool and an alias, claim the same name in one registry."""


class ConfigError(ToolDeckError):
    """Configuration (``tooldeck.toml`` or ``TOOLDECK_*`` variables) is invalid."""


class DataPackError(ToolDeckError):
    """A pack's data file is missing or does not match its schema.

    The message names the file, the section and the field.
    """


class ServiceNotFoundError(ToolDeckError, LookupError):
    """``ServiceContainer.get(T)`` was called for a type that was never registered."""


class RunError(ToolDeckError):
    """A request about an agent run (confirm, cancel, events) that cannot be honoured."""


class RunNotFoundError(RunError, LookupError):
    """No run has the id given."""


class RunStateError(RunError):
    """The run's state does not allow the request (an illegal transition).

    Args:
        run_id: The run.
        state: Its current state.
        action: What was asked, e.g. ``confirm``.
        allowed_in: The states in which ``action`` is allowed.
    """

    def __init__(self, run_id: str, state: str, action: str, allowed_in: list[str]) -> None:
        self.run_id, self.state, self.action, self.allowed_in = run_id, state, action, allowed_in
        super().__init__(
            f"cannot {action} run {run_id}: it is {state}; {action} is allowed only when "
            f"the run is {' or '.join(allowed_in)}"
        )


class StoreUnavailableError(ToolDeckError):
    """A store's database cannot be reached right now (PostgreSQL stopped, network cut).

    Raised by a read or write of a shared store (``[store] url``): approvals,
    schedules, receipts, the audit and its runs. Not a programmer error: the server
    answers it with HTTP 503 and a ``detail`` naming the store, a tool call with an
    ``unavailable`` error envelope, and the next request tries the database again, so
    the service recovers by itself when the database is back.

    Attributes:
        public: What a caller (an HTTP client, a model) is told: the store, not the
            driver's reason, which names the database's host and port.
    """

    def __init__(self, message: str, public: str | None = None) -> None:
        super().__init__(message)
        self.public = public or message

    @classmethod
    def reaching(cls, store: str, cause: BaseException) -> StoreUnavailableError:
        """The error for ``store`` (``audit``, ``approvals``...) given the driver's ``cause``.

        The message (for logs) adds the first line of the driver's reason; ``public``
        leaves it out.
        """
        reason = (str(cause).strip() or type(cause).__name__).splitlines()[0]
        public = f"the {store} store's database cannot be reached"
        return cls(f"the {store} store's database cannot be reached ({reason})", public)


class RunEngineError(RunError):
    """The engine that runs agent runs cannot be reached or answers nothing.

    With ``[runs] engine = "temporal"``: the Temporal service is down, or no
    ``tooldeck worker`` polls the task queue. The message says which and what to start.
    """


class ToolFailure(Exception):
    """Raised inside a tool to return a specific error envelope.

    ``BaseTool.execute`` catches it and returns ``ToolResult(status="error")`` with
    ``error.type = error_type``; any other exception becomes an ``execution`` error.

    Args:
        message: Text the model will read: say what was wrong and how to fix it.
        details: JSON-able data for clients (e.g. ``{"allowed": [...]}``).
        retryable: Whether calling again with the same arguments may succeed.
            Defaults to the class's ``retryable``.
    """

    error_type: ClassVar[str] = "execution"
    retryable: bool = False

    def __init__(
        self, message: str, *, details: dict[str, Any] | None = None, retryable: bool | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if retryable is not None:
            self.retryable = retryable


class InvalidArgumentsError(ToolFailure):
    """Arguments passed the schema but are not acceptable (unknown symbol, bad range)."""

    error_type = "validation"

    @classmethod
    def for_field(cls, field: str, message: str, **details: Any) -> InvalidArgumentsError:
        """The error for one argument, shaped like a schema validation error.

        The message reads ``"<field>: <message>"``; ``details`` holds ``errors``
        (``[{"field", "message"}]``, as schema validation gives) and ``details``.
        """
        return cls(
            f"{field}: {message}",
            details={"errors": [{"field": field, "message": message}], **details},
        )


class TransientToolError(ToolFailure):
    """A failure that may pass on a later attempt; the retry policy retries it."""

    retryable = True


class ToolUnavailableError(ToolFailure):
    """A dependency of the tool (service, server, file) is unavailable right now."""

    error_type = "unavailable"
    retryable = True


class ToolDeniedError(ToolFailure):
    """The call is not allowed (outside allowed roots, forbidden by policy)."""

    error_type = "denied"
