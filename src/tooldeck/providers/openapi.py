"""An HTTP API's operations as tools, from its OpenAPI 3.0/3.1 document.

``openapi_tools(name, config, base_dir)`` reads the document of ``[openapi.<name>]``
and makes one ``JsonSchemaTool`` per operation; they are registered with the local
tools, so they get the same policies, confirmation, audit and exports. An operation's
arguments are its path, query and header parameters by name, and its JSON request
body as ``body``; its output schema is the document's for the success response.

A call:

- goes only to the configured API: the base URL's scheme, host and port, with each
  path parameter percent-encoded whole (``/`` and ``..`` included), so no argument
  can reach another host or path; redirects are not followed;
- passes the address guard of the web tool (``isolation.address_guard``) when the
  base URL comes from the document (a document written elsewhere must not point the
  server at its own network); a base URL given in ``tooldeck.toml`` is trusted;
- carries the configured auth (bearer, API key, basic), from the caller's own stored
  credential or the table's ``secret``; the secret is never in a result or an error;
- answers ``data`` = the JSON body (or the text), checked against the document's
  schema for that status; an HTTP error is an error envelope of the matching type
  (401/403 → ``denied``, 400/422 → ``validation``, 429 and 5xx → retryable
  ``unavailable``, others ``execution``) with the API's message.

Annotations follow the method: GET and HEAD are read-only; every other method may
change things (``destructive``, MCP's default for a tool that is not read-only); PUT
and DELETE are idempotent; all are ``open_world``. So the data-flow rules apply
(``providers.flow``): an API's answers are ``untrusted``, every call is ``egress``, and
a run that read private data, or untrusted content, asks before it sends or changes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fnmatch
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from tooldeck.core.context import ToolContext, principal_of
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits
from tooldeck.core.json_schema_tool import JsonSchemaTool
from tooldeck.core.patterns import within
from tooldeck.core.validation import PATTERNS_S, compile_schema
from tooldeck.exceptions import (
    ConfigError,
    InvalidArgumentsError,
    RegistrationError,
    ToolDeniedError,
    ToolFailure,
    ToolUnavailableError,
)
from tooldeck.isolation.address_guard import AddressGuard
from tooldeck.providers.openapi_body import as_text, body_media, file_fields, send_body
from tooldeck.providers.openapi_config import OpenAPIConfig

__all__ = ["OpenAPIConfig", "load_document", "openapi_tools"]

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_SKIPPED_HEADERS = {"authorization", "accept", "content-type", "cookie", "host"}
_MAX_DOCUMENT = 50_000_000
"""Bytes of an OpenAPI document read (the largest public ones are a few MB)."""
_MAX_DEPTH = 100
"""Levels of nesting in a document (Temporal's 1.9 MB document has 15)."""
_PARSE_LIMITS = ProcessLimits(timeout_s=60, memory_mb=2048)
"""A document is parsed in a killable process under these (``core.isolated``)."""


def load_document(spec: str, base_dir: Path | None, guard: AddressGuard) -> dict[str, Any]:
    """The OpenAPI document at ``spec`` (a path or an http(s) URL), JSON or YAML.

    Raises:
        ConfigError: it cannot be read, is not JSON/YAML, or is not OpenAPI 3.x; a URL
            on a non-public address not in ``allow_hosts``.
    """
    try:
        if spec.startswith(("http://", "https://")):
            url = httpx.URL(spec)
            try:
                guard.check_blocking(url)
            except ToolFailure as exc:
                raise ConfigError(f"the OpenAPI document {spec!r}: {exc.message}") from None
            with httpx.stream("GET", url, timeout=30, follow_redirects=False) as response:
                response.raise_for_status()
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > _MAX_DOCUMENT:
                        raise ConfigError(f"{spec!r} is larger than {_MAX_DOCUMENT:,} bytes")
                text = body.decode(response.encoding or "utf-8", errors="replace")
        else:
            path = Path(spec).expanduser()
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            if path.stat().st_size > _MAX_DOCUMENT:
                raise ConfigError(f"{spec!r} is larger than {_MAX_DOCUMENT:,} bytes")
            text = path.read_text(encoding="utf-8")
    except (OSError, httpx.HTTPError) as exc:
        raise ConfigError(f"cannot read the OpenAPI document {spec!r}: {exc}") from None
    try:
        with contextlib.closing(IsolatedProcesses(1, ("yaml",))) as parser:
            document = json.loads(parser.call(_as_json, text, limits=_PARSE_LIMITS))
    except IsolationError as exc:
        raise ConfigError(f"the OpenAPI document {spec!r} was not read: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"the OpenAPI document {spec!r}: {exc}") from None
    _check_depth(document, spec)
    version = document.get("openapi") if isinstance(document, dict) else None
    if not isinstance(version, str) or not version.startswith("3."):
        raise ConfigError(
            f"{spec!r} is not an OpenAPI 3.0 or 3.1 document (no 'openapi: 3.x'; "
            "Swagger 2.0 documents need converting first)"
        )
    return dict(document)


def _as_json(text: str) -> str:
    """(In a killable process) the JSON or YAML document ``text`` as JSON text.

    YAML's aliases are expanded here (a "billion laughs" document meets the process's
    memory limit or deadline, not the server's); nesting past the recursion limit, or
    more than ``_MAX_DOCUMENT`` bytes once expanded, is a ``ValueError``.
    """
    try:
        try:
            document = json.loads(text)
        except ValueError:
            try:
                import yaml
            except ImportError:
                raise ValueError(
                    "it is not JSON; reading YAML needs pyyaml: pip install 'tooldeck[openapi]'"
                ) from None
            try:
                document = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(f"it is neither JSON nor YAML: {exc}") from None
        out = json.dumps(document)
        if len(out) > _MAX_DOCUMENT:
            raise ValueError(f"its YAML aliases expand it past {_MAX_DOCUMENT:,} bytes")
        return out
    except RecursionError:
        raise ValueError("it is nested too deeply to read") from None
    except TypeError as exc:  # YAML's dates, binary or non-text keys
        raise ValueError(f"it holds a value JSON cannot: {exc}") from None


def _check_depth(document: Any, spec: str) -> None:
    """Refuse a document nested past ``_MAX_DEPTH`` (the converter recurses through it)."""
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ConfigError(
                f"the OpenAPI document {spec!r} is nested more than {_MAX_DEPTH} levels deep"
            )
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, depth + 1) for child in children)


def openapi_tools(
    name: str,
    config: OpenAPIConfig,
    base_dir: Path | None = None,
    *,
    document: Mapping[str, Any] | None = None,
    refused: list[tuple[str, str]] | None = None,
) -> list[JsonSchemaTool]:
    """One tool per operation of ``[openapi.<name>]`` (``operations`` filters them).

    Args:
        name: The table's name (``[openapi.<name>]``): the tools' tag and source id.
        config: The table.
        base_dir: Where a relative ``spec`` path is read from.
        document: The document, already read (else ``config.spec`` is read).
        refused: Where an operation that cannot be a tool (a ``$ref`` outside the
            components, a body tooldeck cannot send) is told, as (operation id, why);
            the others load (issue 55). Without it, such an operation is an error.

    Raises:
        ConfigError: the document cannot be read or has no base URL; without
            ``refused``, an operation's schema is unusable (the message names it).
    """
    guard = AddressGuard(config.allow_hosts, setting=f"openapi.{name}.allow_hosts")
    doc = dict(document) if document is not None else load_document(config.spec, base_dir, guard)
    base = config.base_url
    trusted = base is not None
    if base is None:
        servers = doc.get("servers") or []
        base = servers[0].get("url") if servers and isinstance(servers[0], dict) else None
        if not base or not base.startswith(("http://", "https://")):
            raise ConfigError(
                f"[openapi.{name}]: the document names no absolute server URL; set base_url"
            )
    api = _Api(name, config, httpx.URL(base.rstrip("/")), None if trusted else guard)
    components = doc.get("components") or {}
    tools: list[JsonSchemaTool] = []
    seen: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            item = _pointer(doc, item["$ref"])  # a path item by reference
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            op_id = str(operation.get("operationId") or f"{method}_{path}")
            tool_name = _tool_name(op_id, config.prefix)
            if config.operations is not None and not any(
                fnmatch.fnmatchcase(op_id, p) or fnmatch.fnmatchcase(tool_name, p)
                for p in config.operations
            ):
                continue
            if tool_name in seen:
                tool_name = _tool_name(f"{op_id}_{method}", config.prefix)
            seen.add(tool_name)
            try:
                tools.append(api.tool(tool_name, method, path, operation, shared, components))
            except RegistrationError as exc:
                if refused is None:
                    raise ConfigError(f"[openapi.{name}] operation {op_id}: {exc}") from None
                refused.append((op_id, str(exc)))
    return tools


def _pointer(doc: Mapping[str, Any], ref: str) -> Any:
    """What a local ``$ref`` (``#/paths/~1items``) names in ``doc``; None if nothing."""
    node: Any = doc
    for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else [None]:
        if not isinstance(node, dict) or part is None:
            return None
        node = node.get(part.replace("~1", "/").replace("~0", "~"))
    return node


def _tool_name(op_id: str, prefix: str | None) -> str:
    name = _NAME.sub("_", op_id).strip("_") or "operation"
    return f"{prefix}_{name}" if prefix else name


class _Api:
    """The calls of one ``[openapi.<name>]``: requests, auth, answers."""

    def __init__(
        self, name: str, config: OpenAPIConfig, base: httpx.URL, guard: AddressGuard | None
    ) -> None:
        self.name = name
        self.config = config
        self.base = base
        self.guard = guard
        self.source_id = f"tool:{_NAME.sub('-', name)}:v1"

    def tool(
        self,
        name: str,
        method: str,
        path: str,
        operation: dict[str, Any],
        shared: list[Any],
        components: Mapping[str, Any],
    ) -> JsonSchemaTool:
        resolve = _Resolver(components)
        properties: dict[str, Any] = {}
        required: list[str] = []
        where: dict[str, tuple[str, str]] = {}  # argument → (in, parameter name)
        own = {
            (p.get("in"), p.get("name"))
            for p in map(resolve.object, operation.get("parameters") or [])
        }
        params = [resolve.object(p) for p in operation.get("parameters") or []]
        params += [
            p for p in map(resolve.object, shared) if (p.get("in"), p.get("name")) not in own
        ]
        for param in params:
            location, pname = param.get("in"), param.get("name")
            if location not in ("path", "query", "header") or not isinstance(pname, str):
                continue
            if location == "header" and pname.lower() in _SKIPPED_HEADERS:
                continue
            argument = pname if pname not in properties else f"{location}_{pname}"
            schema = resolve.schema(param.get("schema") or {})
            if param.get("description") and "description" not in schema:
                schema = {**schema, "description": param["description"]}
            properties[argument] = schema
            where[argument] = (location, pname)
            if param.get("required") or location == "path":
                required.append(argument)
        body = resolve.object(operation.get("requestBody") or {})
        content = body.get("content") or {}
        media = body_media(content) if isinstance(content, dict) else None
        files: frozenset[str] = frozenset()
        if media is not None:
            argument = "body" if "body" not in properties else "request_body"
            properties[argument] = resolve.schema(media[1].get("schema") or {})
            files = file_fields(properties[argument], resolve.defs)
            where[argument] = ("body", media[0])
            if body.get("required"):
                required.append(argument)
        elif content and body.get("required"):
            raise RegistrationError(
                f"its request body is {', '.join(map(str, content))}, which tooldeck cannot "
                "send (it sends JSON and forms)"
            )
        input_schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            input_schema["required"] = required
        if resolve.defs:  # a copy: the responses' schemas add theirs below
            input_schema["$defs"] = dict(resolve.defs)
        responses = _response_schemas(operation.get("responses") or {}, resolve)
        output = responses.get("2xx")
        if output is not None and resolve.defs:
            output = {**output, "$defs": resolve.defs}
        checks = (
            {
                status: compile_schema(
                    {**schema, "$defs": resolve.defs} if resolve.defs else schema
                )
                for status, schema in responses.items()
            }
            if self.config.validate_responses
            else {}
        )
        text = " ".join(
            part for part in (operation.get("summary"), operation.get("description")) if part
        )
        description = (text or f"{method.upper()} {path}")[:1024]
        upper = method.upper()

        expects_json = bool(responses)

        async def call(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            return await self.call(upper, path, where, arguments, checks, expects_json, ctx, files)

        return JsonSchemaTool(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output,
            function=call,
            pass_dict=True,
            source_id=self.source_id,
            timeout_s=self.config.timeout_s,
            tags=("openapi", self.name),
            annotations=ToolAnnotations(
                read_only=upper in ("GET", "HEAD") or None,
                idempotent=upper in ("GET", "HEAD", "PUT", "DELETE") or None,
                destructive=None if upper in ("GET", "HEAD") else True,  # MCP's default
                open_world=True,
            ),
        )

    async def call(
        self,
        method: str,
        path: str,
        where: Mapping[str, tuple[str, str]],
        arguments: Mapping[str, Any],
        checks: Mapping[str, Any],
        expects_json: bool,
        ctx: ToolContext,
        files: frozenset[str] = frozenset(),
    ) -> Any:
        """Send the request; the JSON (or text) answer, or a ``ToolFailure``.

        The body is read as JSON when it says so or the document declares a JSON
        response (some servers label JSON oddly: Temporal's HTTP API says ``*``).
        """
        filled = path
        query: list[tuple[str, str | int | float | bool | None]] = []
        headers: dict[str, str] = {"Accept": "application/json", "User-Agent": "tooldeck"}
        sending: dict[str, Any] = {}  # httpx's content, data or files
        for argument, value in arguments.items():
            location, pname = where[argument]
            if location == "path":
                filled = filled.replace("{" + pname + "}", quote(as_text(value), safe=""))
            elif location == "query":
                values = value if isinstance(value, list) else [value]
                query += [(pname, as_text(v)) for v in values]
            elif location == "header":
                text = as_text(value)
                if "\r" in text or "\n" in text:  # one header, never a second one
                    raise InvalidArgumentsError.for_field(argument, "a line break is not allowed")
                headers[pname] = text
            else:
                sending, more = send_body(pname, value, files, argument)
                headers.update(more)
        secret = self._authenticate(headers, query, ctx)
        url = self.base.copy_with(
            path=self.base.path.rstrip("/") + filled, query=None
        ).copy_merge_params(query)
        address = None
        if self.guard is not None:
            address = (await self.guard.check(url)).address
        request_url = url if address is None else url.copy_with(host=address)
        if address is not None:
            headers["Host"] = url.netloc.decode("ascii")
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout_s) as client:
                request = client.build_request(method, request_url, headers=headers, **sending)
                response = await client.send(request, stream=True, follow_redirects=False)
                try:
                    body = await _capped(response, self.config.max_bytes)
                finally:
                    await response.aclose()
        except httpx.TimeoutException:
            raise ToolUnavailableError(
                f"{self.name}: {method} {path} timed out after {self.config.timeout_s:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolUnavailableError(f"{self.name}: {method} {path} failed: {exc}") from None
        if body is None:
            raise ToolFailure(
                f"{self.name}: {method} {path} answered more than max_bytes "
                f"({self.config.max_bytes}) bytes; the rest was not read"
            )
        text = body.decode(response.encoding or "utf-8", errors="replace")
        sent = _sent_forms(secret, self.config.auth)
        text = _scrub(text, sent)  # an API that echoes the token, in any answer
        data: Any = text
        declared = expects_json or "json" in response.headers.get("content-type", "")
        if declared and body:
            try:
                data = _scrub(json.loads(text), sent)  # and its JSON-escaped spellings
            except ValueError:
                data = text
        status = response.status_code
        if status >= 300:
            raise _failure(self.name, method, path, status, data)
        check = checks.get(str(status)) or checks.get("2xx")
        if check is not None and not isinstance(data, str):  # off the loop, time-bounded
            problems = await asyncio.to_thread(_problems, check, data)
            if problems:
                first = problems[0]
                at = "/".join(map(str, first.path)) or "(the body)"
                raise ToolFailure(
                    f"{self.name}: {method} {path} answered HTTP {status} with a body its "
                    f"document does not allow: at {at}: {first.message} "
                    f"({len(problems)} problem(s); validate_responses = false accepts it)"
                )
        return data

    def _authenticate(
        self,
        headers: dict[str, str],
        query: list[tuple[str, str | int | float | bool | None]],
        ctx: ToolContext,
    ) -> str | None:
        """Add the auth the table names; the secret sent (to keep it out of messages)."""
        config = self.config
        if config.auth == "none":
            return None
        secret = self._secret(ctx)
        if config.auth == "bearer":
            headers["Authorization"] = f"Bearer {secret}"
        elif config.auth == "basic":
            headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        elif config.api_key_in == "header":
            headers[config.api_key_name] = secret
        else:
            query.append((config.api_key_name, secret))
        return secret

    def _secret(self, ctx: ToolContext) -> str:
        scope = f"openapi:{self.name}"
        if self.config.credential:
            store = ctx.services.get_optional(CredentialStore)  # type: ignore[type-abstract]
            own: SecretStr | None = store.get(principal_of(ctx), scope) if store else None
            if own is not None:
                return own.get_secret_value()
        if self.config.secret is not None:
            return self.config.secret.get_secret_value()
        raise ToolDeniedError(
            f"{self.name} needs a secret ({self.config.auth}); store yours with: tooldeck "
            f"credentials set {scope}"
        )


class _Resolver:
    """Resolves an operation's ``$ref`` s.

    Schemas of ``components.schemas`` become ``$defs`` (referenced, not copied, so a
    recursive one stays expressible); other components are followed in place.
    """

    def __init__(self, components: Mapping[str, Any]) -> None:
        self.components = components
        self.defs: dict[str, Any] = {}

    def object(self, node: Any, depth: int = 0) -> dict[str, Any]:
        """A parameter, request body or response, its ``$ref`` followed."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 20:
            node = self._target(node["$ref"])
            depth += 1
        return node if isinstance(node, dict) else {}

    def schema(self, node: Any) -> Any:
        """A JSON Schema (2020-12) for an OpenAPI schema object."""
        if isinstance(node, list):
            return [self.schema(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            prefix = "#/components/schemas/"
            if not ref.startswith(prefix):
                return self.schema(self._target(ref))
            key = ref.removeprefix(prefix)
            if key not in self.defs:
                self.defs[key] = {}  # placed first: a recursive schema refers to itself
                self.defs[key] = self.schema(self._target(ref))
            return {"$ref": f"#/$defs/{key}"}
        out = {
            k: self.schema(v)
            for k, v in node.items()
            if k
            not in ("nullable", "example", "xml", "externalDocs", "discriminator", "deprecated")
        }
        if node.get("nullable") is True:
            kind = out.get("type")
            if isinstance(kind, str):
                out["type"] = [kind, "null"]
            elif "type" not in out:
                out = {"anyOf": [out, {"type": "null"}]}
        for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if isinstance(out.get(flag), bool) and out.pop(flag) and bound in out:
                out[flag] = out.pop(bound)  # OpenAPI 3.0's boolean form
        return out

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#/components/"):
            raise RegistrationError(f"$ref {ref!r} is not in this document's components")
        node: Any = self.components
        for part in ref.removeprefix("#/components/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise RegistrationError(f"$ref {ref!r} does not resolve")
            node = node[part]
        return node


def _response_schemas(responses: Mapping[str, Any], resolve: _Resolver) -> dict[str, Any]:
    """JSON body schemas by status (``"200"``...), and ``"2xx"`` for the first success."""
    out: dict[str, Any] = {}
    for status, response in responses.items():
        content = (resolve.object(response).get("content") or {}).get("application/json")
        if not isinstance(content, dict) or not isinstance(content.get("schema"), dict):
            continue
        schema = resolve.schema(content["schema"])
        out[str(status)] = schema
        if str(status).startswith("2") and "2xx" not in out:
            out["2xx"] = schema
    return out


def _problems(check: Any, data: Any) -> list[Any]:
    """The response body's schema errors, its patterns matched within ``PATTERNS_S``."""
    with within(PATTERNS_S):
        return sorted(check.iter_errors(data), key=lambda e: list(e.path))


async def _capped(response: httpx.Response, limit: int) -> bytes | None:
    """The body, or None past ``limit`` bytes (the rest is never read into memory)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def _sent_forms(secret: str | None, auth: str) -> tuple[str, ...]:
    """The spellings of ``secret`` a request carried (basic auth sends it in base64)."""
    if not secret:
        return ()
    if auth == "basic":
        return (secret, base64.b64encode(secret.encode()).decode())
    return (secret,)


def _scrub(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` with every ``secrets`` spelling in its strings (keys too) replaced by ``***``."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    if isinstance(value, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in value.items()}
    return value


def _failure(name: str, method: str, path: str, status: int, data: Any) -> ToolFailure:
    """The error envelope an HTTP error status maps to, with the API's own message.

    ``data`` is already scrubbed: an API that echoes the request (its token included)
    does not put the secret in the model's view, in an error or in a success.
    """
    said = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    said = said[:500]
    message = f"{name}: {method} {path} answered HTTP {status}: {said}"
    details = {"status_code": status}
    if status in (401, 403):
        return ToolDeniedError(message, details=details)
    if status in (400, 422):
        return InvalidArgumentsError(message, details=details)
    if status == 429 or status >= 500:
        return ToolUnavailableError(message, details=details)
    return ToolFailure(message, details=details)  # 404 included: the resource, not the tool
