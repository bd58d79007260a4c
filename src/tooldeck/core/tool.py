"""Tools: the ``Tool`` interface and ``BaseTool[TRequest, TResponse]`` (seed 000 lifecycle).

Example::

    class QuoteRequest(BaseModel):
        symbol: str

    class QuoteTool(BaseTool[QuoteRequest, dict]):
        name = "get_quote"
        description = "Latest price of a symbol."
        RequestModel = QuoteRequest
        blocking = False            # pure in-memory work: run inline, no thread hop

        def execute_internal(self, request: QuoteRequest, ctx: ToolContext) -> dict:
            return {"symbol": request.symbol, "price": 193.12}

    result = await QuoteTool().execute('{"symbol": "AAPL"}')
"""

from __future__ import annotations

import inspect
import traceback
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping
from time import perf_counter
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from tooldeck.core.arguments import ArgumentShape
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext, new_request_id
from tooldeck.core.definition import DataLabel, Effect, ToolAnnotations, ToolDefinition
from tooldeck.core.pools import in_thread
from tooldeck.core.result import (
    ResultMetadata,
    ToolError,
    ToolResult,
    _trusted,
    trusted_call_success,
    trusted_metadata,
    trusted_success,
)
from tooldeck.core.schema import model_schema
from tooldeck.core.validation import FieldError, from_pydantic, invalid_arguments
from tooldeck.exceptions import RegistrationError, ToolFailure

__all__ = ["Arguments", "BaseTool", "Tool", "ToolExecutor", "ToolViews", "error_result"]

TRequest = TypeVar("TRequest")
TResponse = TypeVar("TResponse")

Arguments = Mapping[str, Any] | str | bytes | None
"""Arguments of a call: a mapping, or the JSON text a model produced (parsed once)."""


class Tool(ABC):
    """Anything a ``ToolRegistry`` can run: a definition and an ``execute`` that never raises."""

    @property
    @abstractmethod
    def definition(self) -> ToolDefinition:
        """The tool's definition, as exporters and providers read it."""

    @abstractmethod
    async def execute(
        self, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run one call and return its envelope; tool failures are results, never raised."""


class ToolExecutor(Protocol):
    """Anything that executes tools by name: a registry or a provider stack."""

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run the named tool; never raises for tool failures."""
        ...


class ToolViews(ABC):
    """Service for tools that call other tools (seed 002 ``execute_script``).

    Registered in the ``ServiceContainer`` by the runtime, so a tool reaches the same
    provider stack as its caller's profile (filter, confirmation, policies, audit)
    rather than the unfiltered root.
    """

    @abstractmethod
    def view(self, profile: str | None) -> ToolExecutor:
        """The stack a caller of ``profile`` goes through (None: every tool)."""

    @abstractmethod
    async def names(self, profile: str | None) -> list[str]:
        """Names of the tools ``profile`` sees, sorted."""

    @abstractmethod
    async def definitions(self, profile: str | None) -> list[ToolDefinition]:
        """The definitions of the tools ``profile`` sees (to check a call before it runs)."""

    def observed(self, tools: ToolExecutor) -> ToolExecutor:
        """``tools`` behind the same audit and tracing as the views.

        For tools a caller answers itself, outside any view (the model agent's
        ``search_tools``, ``read_result`` and ``delegate``, through ``RunTools``), so
        that their calls are recorded like every other. This base returns ``tools``
        unchanged (nothing to record with).
        """
        return tools


def error_result(
    type: str,
    message: str,
    metadata: ResultMetadata,
    *,
    details: dict[str, Any] | None = None,
    retryable: bool = False,
) -> ToolResult:
    """An error ``ToolResult`` with trusted metadata (used on the execution path)."""
    error = ToolError(type=type, message=message, details=details, retryable=retryable)
    return _trusted(  # type: ignore[no-any-return]
        ToolResult,
        {
            "status": "error",
            "data": None,
            "output": None,
            "error": error,
            "source_id": None,
            "as_of": None,
            "artifacts": [],
            "metadata": metadata,
        },
        {"status", "error", "metadata"},
    )


class BaseTool(Tool, Generic[TRequest, TResponse]):
    """A tool with typed input and output: ``validate_input → execute_internal → format_output``.

    Class attributes describe the tool (an instance may override them):
    ``name``, ``description``, ``version``, ``RequestModel`` (Pydantic, required unless
    ``validate_input`` is overridden), ``ResponseModel`` (optional, gives the output
    schema), ``source_id`` (provenance, ``tool:<domain>:v<N>``), ``tags``,
    ``annotations``, ``requires_confirmation``, ``confirm_actions``, ``timeout_s``,
    ``labels`` and ``effects`` (data flow, ``providers.flow``), ``input_schema`` (a
    hand-written JSON Schema; it wins over the generated one, seed 000 decision 3).

    Semantics:
        ``execute_internal`` may be ``async def`` or plain ``def``. A plain one runs in
        a worker thread so it never blocks the event loop, unless the tool sets
        ``blocking = False`` (pure computation on small in-memory data), in which case
        it runs inline and skips the 50–200 µs thread hop. The thread comes from the
        bounded pool of the tool's ``pool`` family (its name by default; see
        ``core.pools``), so one tool's stuck calls cannot starve another's.
        ``execute`` never raises:
        Pydantic errors become ``validation``, a ``ToolFailure`` its own type, any
        other exception ``execution`` (with the traceback in ``error.details`` for the
        audit log, not in the model's text). The default ``format_output`` dumps a
        ``ResponseModel`` in JSON mode into ``data``, takes ``as_of`` from a top-level
        ``as_of`` of the data, and ``source_id`` from the class; a ``ToolResult``
        returned by ``execute_internal`` is kept as is, but for a success without a
        ``source_id``, which gets the tool's.
    """

    name: str = ""
    description: str = ""
    version: str = "1.0.0"
    RequestModel: type[BaseModel] | None = None
    ResponseModel: type[BaseModel] | None = None
    source_id: str | None = None
    tags: tuple[str, ...] = ()
    annotations: ToolAnnotations = ToolAnnotations()
    requires_confirmation: bool = False
    confirm_actions: tuple[str, ...] = ()
    timeout_s: float | None = None
    labels: tuple[DataLabel, ...] | None = None
    effects: tuple[Effect, ...] | None = None
    blocking: bool = True
    pool: str | None = None
    """Thread-pool family of a blocking tool; None: the tool's own (``core.pools``)."""
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None

    _is_async: bool = False
    provider_id: str | None = None
    """Id of the provider that registered the tool (set by ``ToolRegistry.register``)."""
    _custom_format: bool = False
    """``execute`` calls ``format_output`` (set per class when it is overridden; a tool
    whose instances differ sets it on the instance). False: the direct path."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._is_async = inspect.iscoroutinefunction(cls.execute_internal)
        cls._custom_format = cls.format_output is not BaseTool.format_output

    # -- description ------------------------------------------------------------------

    def build_input_schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments: the hand-written one, else ``RequestModel``'s.

        Raises:
            RegistrationError: neither is given.
        """
        if self.input_schema is not None:
            return dict(self.input_schema)
        if self.RequestModel is None:
            raise RegistrationError(
                f"tool {self.name!r} ({type(self).__name__}) has no RequestModel and no "
                "input_schema; set one of them"
            )
        return model_schema(self.RequestModel)

    def build_output_schema(self) -> dict[str, Any] | None:
        """JSON Schema of ``ToolResult.data``: the hand-written one, else ``ResponseModel``'s."""
        if self.output_schema is not None:
            return dict(self.output_schema)
        return model_schema(self.ResponseModel) if self.ResponseModel else None

    @property
    def definition(self) -> ToolDefinition:
        """The tool's definition (built once, then cached on the instance)."""
        cached: ToolDefinition | None = self.__dict__.get("_definition")
        if cached is None:
            if not self.name:
                raise RegistrationError(
                    f"{type(self).__name__} has no name; set the name attribute"
                )
            cached = ToolDefinition(
                name=self.name,
                description=self.description or (inspect.getdoc(type(self)) or "").strip(),
                input_schema=self.build_input_schema(),
                output_schema=self.build_output_schema(),
                version=self.version,
                tags=tuple(self.tags),
                annotations=self.annotations,
                requires_confirmation=self.requires_confirmation,
                confirm_actions=tuple(self.confirm_actions),
                timeout_s=self.timeout_s,
                source_id=self.source_id,
                labels=self.labels,
                effects=self.effects,
            )
            self.__dict__["_definition"] = cached
        return cached

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def argument_shape(self) -> ArgumentShape:
        """The shape of the tool's arguments (``core.arguments``), compiled once."""
        shape: ArgumentShape | None = self.__dict__.get("_argument_shape")
        if shape is None:
            shape = self.__dict__["_argument_shape"] = ArgumentShape.of(
                self.definition.input_schema
            )
        return shape

    def validate_input(self, arguments: Arguments) -> TRequest:
        """Parse and validate raw arguments into the typed request.

        Semantics:
            The arguments go through the tool's ``argument_shape`` first: a ``null``
            for an argument that does not allow null (what OpenAI strict mode makes a
            model send for "not given") is dropped, a map sent as ``{key, value}``
            pairs is restored, and an argument the schema does not declare is an error
            with a did-you-mean. Then ``RequestModel`` validates them. A call that
            needs none of this is validated in one pass (``_fast_model``).

        Raises:
            InvalidArgumentsError: not a JSON object, or undeclared arguments (with
                the other errors of the call).
            pydantic.ValidationError: the arguments do not fit ``RequestModel``.
        """
        fast = self.__dict__.get("_fast_model", _UNSET)
        if fast is _UNSET:
            fast = self.__dict__["_fast_model"] = _fast_model(
                self._required_model(), self.argument_shape
            )
        if fast is not None:  # one pass in pydantic-core; anything odd takes the full path
            try:
                if isinstance(arguments, _TEXT):
                    return fast.model_validate_json(arguments or "{}")  # type: ignore[no-any-return]
                return fast.model_validate({} if arguments is None else arguments)  # type: ignore[no-any-return]
            except ValidationError:
                pass
        model = self._required_model()
        prepared, unexpected = self.argument_shape.prepare(self.name, arguments)
        if not unexpected:
            return model.model_validate(prepared)  # type: ignore[return-value]
        try:
            model.model_validate(prepared)
        except ValidationError as exc:
            unexpected += from_pydantic(exc)
        raise invalid_arguments(self.name, unexpected, self.definition.input_schema)

    def _required_model(self) -> type[BaseModel]:
        model = self.RequestModel
        if model is None:
            raise RegistrationError(f"tool {self.name!r} has no RequestModel")
        return model

    @abstractmethod
    def execute_internal(
        self, request: TRequest, ctx: ToolContext
    ) -> TResponse | Awaitable[TResponse]:
        """The tool's work on a validated request. May be sync or async.

        Raise ``ToolFailure`` subclasses (``InvalidArgumentsError``,
        ``TransientToolError``, ...) to choose the error envelope.
        """

    def format_output(self, response: TResponse) -> ToolResult:
        """Wrap the response in a ``ToolResult`` (metadata is filled in by ``execute``)."""
        if isinstance(response, ToolResult):
            return response
        data, as_of = _jsonable(response)
        return trusted_success(data, self.source_id, as_of, _NO_METADATA)

    async def execute(
        self, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run one call through the lifecycle; never raises (see the class docstring)."""
        if ctx is None:
            ctx = EMPTY_CONTEXT
        start = perf_counter()
        try:
            request = self.validate_input(arguments)
            if self._is_async:
                response = await self.execute_internal(request, ctx)  # type: ignore[misc]
            elif self.blocking:
                response = await in_thread(
                    self.pool or self.name, self.execute_internal, request, ctx
                )
            else:
                response = self.execute_internal(request, ctx)
            if self._custom_format or (
                type(response) is not dict and isinstance(response, ToolResult)
            ):
                result = self.format_output(response)
                fields = {**result.__dict__, "metadata": self._metadata(ctx, start)}
                if fields["source_id"] is None and result.success:  # the declared provenance
                    fields["source_id"] = self.source_id
                return _trusted(  # type: ignore[no-any-return]
                    ToolResult, fields, {*result.__pydantic_fields_set__, "metadata", "source_id"}
                )
            data, as_of = _jsonable(response)
            return trusted_call_success(
                data,
                self.source_id,
                as_of,
                self.name,
                self.version,
                ctx.request_id or new_request_id(),
                (perf_counter() - start) * 1000,
                self.provider_id,
            )
        except ValidationError as exc:
            return self.invalid_arguments(from_pydantic(exc), self._metadata(ctx, start))
        except RecursionError:  # a structure too deep for validation, not a tool failure
            return error_result(
                "validation",
                f"Invalid arguments for {self.name}: arguments are nested too deeply.",
                self._metadata(ctx, start),
            )
        except ToolFailure as exc:
            return error_result(
                exc.error_type,
                exc.message,
                self._metadata(ctx, start),
                details=exc.details,
                retryable=exc.retryable,
            )
        except Exception as exc:
            return error_result(
                "execution",
                f"{self.name} failed: {type(exc).__name__}: {exc}",
                self._metadata(ctx, start),
                details={"exception": type(exc).__name__, "traceback": traceback.format_exc()},
            )

    # -- helpers --------------------------------------------------------------------------

    def invalid_arguments(self, errors: list[FieldError], metadata: ResultMetadata) -> ToolResult:
        """The ``validation`` result for ``errors``, naming each field and the arguments."""
        exc = invalid_arguments(self.name, errors, self.definition.input_schema)
        return error_result("validation", exc.message, metadata, details=exc.details)

    def _metadata(self, ctx: ToolContext, start: float) -> ResultMetadata:
        return trusted_metadata(
            self.name,
            self.version,
            ctx.request_id or new_request_id(),
            (perf_counter() - start) * 1000,
            1,
            self.provider_id,
        )


_NO_METADATA = ResultMetadata()
_TEXT = (str, bytes)
_UNSET: Any = object()


def _fast_model(model: type[BaseModel], shape: ArgumentShape) -> type[BaseModel] | None:
    """A model that validates arguments needing no preparation in one pydantic pass.

    When the arguments have no nested objects to prepare (``ArgumentShape.flat``), a
    call that passes ``model`` with undeclared names refused (``extra="forbid"``) is
    exactly what the full path would accept, so the common call skips it: nulls,
    ``{key, value}`` pairs and typos fail this pass and take the full path. None when
    the shape has nested objects.
    """
    if not shape.flat:
        return None
    if model.model_config.get("extra") in ("forbid", "allow") or not shape.closed:
        return model
    config = {**model.model_config, "extra": "forbid"}
    return type(model.__name__, (model,), {"model_config": config, "__module__": model.__module__})


def _jsonable(response: Any) -> tuple[Any, str | None]:
    """JSON-able data of a response, and its top-level ``as_of`` if it has one."""
    if type(response) is not dict and isinstance(response, BaseModel):
        response = response.model_dump(mode="json")
    if isinstance(response, dict):
        as_of = response.get("as_of")
        return response, as_of if isinstance(as_of, str) else None
    return response, None
