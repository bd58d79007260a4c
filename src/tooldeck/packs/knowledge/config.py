"""The ``[knowledge]`` table (read by ``tooldeck.config`` without loading the pack)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = ["EmbeddingsConfig", "KnowledgeConfig"]


class EmbeddingsConfig(BaseModel):
    """``[knowledge.embeddings]``: an OpenAI-compatible ``/v1/embeddings`` endpoint.

    Used when ``[knowledge] embedder = "openai"``. The key is read from the environment
    (``TOOLDECK_KNOWLEDGE__EMBEDDINGS__API_KEY``) rather than written in the file.
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(description="e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1")
    model: str = Field(min_length=1, description="e.g. text-embedding-3-small")
    dimensions: int = Field(ge=1, le=16_000, description="Length of the model's vectors.")
    api_key: SecretStr | None = None
    """Sent as ``Authorization: Bearer``; None for a local server that needs none."""
    batch: int = Field(64, ge=1, le=2048)
    """Texts per request."""
    timeout_s: float = Field(30.0, gt=0)
    """Seconds per request."""

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return value.rstrip("/")


class KnowledgeConfig(BaseModel):
    """The ``[knowledge]`` table: documents to search and cite (seed 001's RAG tools)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Register the knowledge tools."""
    path: Path | None = None
    """The embedded store (SQLite); default ``knowledge.db`` in the data dir."""
    url: str | None = None
    """A shared store instead: ``postgresql://user@host:5432/db`` (PostgreSQL with
    pgvector; ``tooldeck[postgres]``). The password goes in ``PGPASSWORD``."""
    max_file_mb: int = Field(50, ge=1, le=2048)
    """Largest file ``tooldeck docs add`` and an upload read, MB."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Private or loopback hosts, IPs or CIDR ranges ``tooldeck docs add URL`` may fetch
    from (any other non-public address is refused, after every redirect too)."""
    max_blocks: int = Field(20_000, ge=1)
    """Most blocks (paragraphs, headings, images) one document may have."""
    parse_timeout_s: float = Field(60.0, gt=0)
    """Seconds one document may take to parse (in its own process, killed past them)."""
    parse_memory_mb: int = Field(1024, ge=64)
    """MiB of memory one document's parse may use."""
    parse_workers: int = Field(2, ge=1, le=32)
    """Documents parsed (and ingested) at once; more wait their turn."""
    embedder: Literal["local", "openai", "none"] = "local"
    """``local``: all-MiniLM-L6-v2 (int8 ONNX) on this machine; ``openai``: the endpoint
    of ``[knowledge.embeddings]``; search is then hybrid (BM25 and vectors). ``none``, or
    the ``[knowledge]`` extra missing for ``local``: BM25 only."""
    embeddings: EmbeddingsConfig | None = None
    """The endpoint for ``embedder = "openai"``."""
    summary: Literal["extractive", "llm"] = "extractive"
    """What ``get_document`` summarises with: the document's first sentences, or the
    ``llm`` tool's model (``[builtin.llm]``), falling back to the first sentences."""

    @field_validator("url")
    @classmethod
    def _postgres(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("url must be a PostgreSQL URL: postgresql://user@host:5432/db")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.path is not None and self.url is not None:
            raise ValueError("set path (SQLite) or url (PostgreSQL), not both")
        if self.embedder == "openai" and self.embeddings is None:
            raise ValueError(
                'embedder = "openai" needs a [knowledge.embeddings] table '
                "with base_url, model and dimensions"
            )
        return self
