"""Tools from plain typed functions: ``@tool`` and ``FunctionTool``.

Example::

    @tool(source_id="tool:fx:v1")
    async def convert(amount: float, currency: str = "EUR", ctx: ToolContext | None = None) -> dict:
        \"\"\"Convert US dollars to another currency.

Args:
            amount: Amount in US dollars.
            currency: ISO 4217 code of the target currency.
        \"\"\"

The schema has ``amount`` (required) and ``currency``, with the docstring's
descriptions; ``ctx`` is injected by tooldeck and hidden from the model.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import DataLabel, Effect, ToolAnnotations
from tooldeck.core.schema import model_schema, strip_titles
from tooldeck.core.signature_schema import REQUIRED, Parameter, signature_schema
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import RegistrationError

__all__ = ["FunctionTool", "tool"]

F = TypeVar("F", bound=Callable[..., Any])


def _output_schema(returns: Any) -> Any:
    """The JSON Schema of a return annotation that is not a model; None if it has none.

    Computed once per annotation (``dict[str, Any]`` is most tools' return): Pydantic
    takes ~80 µs for it, a tenth of a tool's registration.
    """
    try:
        text = _output_schema_json(returns)
    except TypeError:  # an unhashable annotation: computed each time
        return _schema_of(returns)
    return json.loads(text)


@lru_cache(maxsize=256)
def _output_schema_json(returns: Any) -> str:
    return json.dumps(_schema_of(returns))


def _schema_of(returns: Any) -> Any:
    try:
        return strip_titles(TypeAdapter(returns).json_schema())
    except Exception:
        return None


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(a is ToolContext for a in typing.get_args(annotation))
    return False


_SECTION_LINE = re.compile(r"^\s*[:@]|:\s*$|^\s*[-=]{3,}\s*$", re.MULTILINE)


def _read_docstring(text: str) -> tuple[str, dict[str, str | None]]:
    """A docstring's description and its parameters' descriptions (by name).

    ``docstring_parser`` reads Google, NumPy, reST and Epydoc sections by parsing the
    text once per style (about 20 µs). A docstring with no line that could open a
    section (``Args:``, ``:param``, ``@param``, an underline) has no parameters, and
    its description is its text as ``docstring_parser`` would give it: the first line,
    a blank line, the rest (tests/core/test_function_tool.py compares the two on the
    standard library's docstrings).
    """
    if not _SECTION_LINE.search(text):
        first, _, rest = text.partition("\n")
        return "\n\n".join(p for p in (first, rest.strip()) if p), {}
    doc = docstring_parser.parse(text)
    summary = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    return summary, {p.arg_name: p.description for p in doc.params}


def _fields(parameters: list[Parameter]) -> dict[str, Any]:
    """``create_model``'s fields: each parameter's annotation and ``Field``."""
    fields: dict[str, Any] = {}
    for name, annotation, default, description in parameters:
        if isinstance(default, FieldInfo):  # ``x: str = Field(examples=[...])``
            if default.description is None and description is not None:
                default = FieldInfo.merge_field_infos(default, description=description)
            fields[name] = (annotation, default)
        else:
            required = default is REQUIRED
            fields[name] = (
                annotation,
                Field(... if required else default, description=description),
            )
    return fields


class FunctionTool(BaseTool[BaseModel, Any]):
    """A tool made from a typed Python function (sync or async).

    Semantics:
        The request model is built from the signature: each parameter becomes an
        argument with its annotation (``Any`` when missing) and its default; unknown
        arguments are rejected. Descriptions come from the docstring (Google, NumPy,
        Sphinx or Epydoc style, parsed by ``docstring_parser``): the summary and body
        describe the tool, each parameter entry its argument. A parameter annotated
        ``ToolContext`` receives the call's context and is not part of the schema. A
        return annotation that is a Pydantic model, or any type Pydantic can describe,
        gives the output schema. For the common types the input schema is written
        directly (``core.signature_schema``, equal to Pydantic's) and the request model
        is built at the first call: registering 10,000 tools takes 1.8 s instead of
        19 s (``benchmarks/exporters.py``).

    Args:
        function: The function to wrap.
        name: Tool name; defaults to the function's ``__name__``.
        description: Overrides the docstring's description.
        blocking: For a sync function, whether it may block (True: run in a worker
            thread) or is pure in-memory computation (False: run inline).
        source_id, version, tags, annotations, requires_confirmation, timeout_s, labels,
            effects: as on ``BaseTool``.

    Raises:
        RegistrationError: the function takes ``*args``/``**kwargs`` or a parameter's
            annotation cannot be turned into a schema.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        blocking: bool = True,
        source_id: str | None = None,
        version: str = "1.0.0",
        tags: tuple[str, ...] = (),
        annotations: ToolAnnotations | None = None,
        requires_confirmation: bool = False,
        timeout_s: float | None = None,
        labels: tuple[DataLabel, ...] | None = None,
        effects: tuple[Effect, ...] | None = None,
    ) -> None:
        self.function = function
        self.labels, self.effects = labels, effects
        self.name = name or function.__name__
        self.blocking = blocking
        self.source_id = source_id
        self.version = version
        self.tags = tags
        self.annotations = annotations or ToolAnnotations()
        self.requires_confirmation = requires_confirmation
        self.timeout_s = timeout_s
        self._is_async = inspect.iscoroutinefunction(function)

        summary, param_docs = _read_docstring(inspect.getdoc(function) or "")
        self.description = description or summary or self.name

        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except Exception as exc:
            raise RegistrationError(f"cannot resolve the type hints of {self.name}: {exc}") from exc
        parameters: list[Parameter] = []
        self._context_param: str | None = None
        for param in inspect.signature(function).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise RegistrationError(
                    f"{self.name}: *args/**kwargs ({param.name}) cannot be described to a model; "
                    "declare each argument"
                )
            annotation = hints.get(param.name, Any)
            if _is_context(annotation):
                self._context_param = param.name
                continue
            parameters.append((param.name, annotation, param.default, param_docs.get(param.name)))
        self._parameters = parameters
        self._schema = signature_schema(parameters)
        if self._schema is None:  # Pydantic's path, now: a type it alone knows, or fails on
            model_schema(self.RequestModel)

        returns = hints.get("return")
        if isinstance(returns, type) and issubclass(returns, BaseModel):
            self.ResponseModel = returns
        elif returns not in (None, Any, type(None)):
            self.output_schema = _output_schema(returns)

    @property
    def RequestModel(self) -> type[BaseModel]:  # type: ignore[override]
        """The arguments' Pydantic model, built at first use (the first call, usually).

        Raises:
            RegistrationError: Pydantic cannot build it (a parameter's type); for a
                signature ``signature_schema`` wrote, this does not happen.
        """
        model: type[BaseModel] | None = self.__dict__.get("_request_model")
        if model is None:
            name = "".join(part.title() for part in self.name.replace(".", "_").split("_"))
            try:
                model = create_model(
                    f"{name}Args",
                    __config__=ConfigDict(extra="forbid"),
                    **_fields(self._parameters),
                )
            except Exception as exc:
                raise RegistrationError(
                    f"{self.name}: cannot build the argument model: {exc}"
                ) from exc
            self.__dict__["_request_model"] = model
        return model

    def build_input_schema(self) -> dict[str, Any]:
        """The schema ``signature_schema`` wrote, else the model's.

        The written schema is handed over once, to the cached ``definition``.
        """
        schema, self._schema = self._schema, None
        return schema if schema is not None else super().build_input_schema()

    def execute_internal(self, request: BaseModel, ctx: ToolContext) -> Any:
        """Call the function with the validated arguments (and the context, if it takes one)."""
        # the request model forbids extra fields, so its __dict__ is exactly the arguments
        if self._context_param is None:
            return self.function(**request.__dict__)
        return self.function(**request.__dict__, **{self._context_param: ctx})


@overload
def tool(function: F, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    blocking: bool = True,
    source_id: str | None = None,
    version: str = "1.0.0",
    tags: tuple[str, ...] = (),
    annotations: ToolAnnotations | None = None,
    requires_confirmation: bool = False,
    timeout_s: float | None = None,
    labels: tuple[DataLabel, ...] | None = None,
    effects: tuple[Effect, ...] | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None, /, **options: Any
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a ``FunctionTool`` from a function; use as ``@tool`` or ``@tool(name=...)``.

    The keyword options are those of ``FunctionTool``.
    """
    if function is not None:
        return FunctionTool(function, **options)
    return lambda f: FunctionTool(f, **options)
