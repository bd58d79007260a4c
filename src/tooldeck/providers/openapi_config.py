"""The ``[openapi.<name>]`` table: an HTTP API, from its OpenAPI document, as tools."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["OpenAPIConfig"]


class OpenAPIConfig(BaseModel):
    """One HTTP API whose operations become tools (``providers.openapi``).

    Example::

        [openapi.temporal]
        spec = "openapiv3.yaml"                 # a file (beside tooldeck.toml) or an http(s) URL
        base_url = "http://127.0.0.1:7243"
        operations = ["GetClusterInfo", "List*"]  # operationIds or globs (absent: all)
        auth = "bearer"                         # none, bearer, api_key, basic
        credential = true                       # each caller's own secret (tooldeck credentials)
    """

    model_config = ConfigDict(extra="forbid")

    spec: str
    """The OpenAPI 3.0 or 3.1 document, JSON or YAML: a path (relative to the config
    file's folder) or an ``http(s)`` URL read once at start."""
    base_url: str | None = None
    """Where the API is; absent: the document's first ``servers`` URL. Given here, its
    host is trusted even when private (you named it); taken from the document, it must
    be a public address unless listed in ``allow_hosts``."""
    operations: list[str] | None = None
    """The operations served: operationIds (or the tool names) or ``fnmatch`` globs;
    absent: all."""
    prefix: str | None = None
    """Put before each tool name: ``<prefix>_<operationId>``."""
    enabled: bool = True
    """False: listed here, not loaded."""
    auth: Literal["none", "bearer", "api_key", "basic"] = "none"
    """How calls authenticate: ``Authorization: Bearer <secret>``, an API key (header or
    query, ``api_key_name``/``api_key_in``) or HTTP basic (the secret is ``user:password``)."""
    secret: SecretStr | None = None
    """The token, key or ``user:password``; env ``TOOLDECK_OPENAPI__<NAME>__SECRET``."""
    credential: bool = False
    """Use each caller's own secret, stored with ``tooldeck credentials set
    openapi:<name>``, before ``secret``; a caller without one gets an error saying how
    to store it."""
    api_key_name: str = "X-API-Key"
    """The header or query parameter that carries the API key."""
    api_key_in: Literal["header", "query"] = "header"
    """Where the API key goes."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Private hosts or networks the document's server may be on (``web.allow_hosts``'s
    form)."""
    timeout_s: float = Field(30.0, gt=0)
    """Seconds per call."""
    max_bytes: int = Field(5_000_000, gt=0)
    """Bytes of a response read; a longer one is an error."""
    validate_responses: bool = True
    """Check each JSON response against the document's schema for its status; a body
    the document does not allow is an ``execution`` error naming the difference."""
