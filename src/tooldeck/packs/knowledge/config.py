"""The ``[knowledge]`` table (read by ``tooldeck.config`` without loading the pack)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["KnowledgeConfig"]


class KnowledgeConfig(BaseModel):
    """The ``[knowledge]`` table: documents to search and cite (seed 001's RAG tools)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Register the knowledge tools."""
    path: Path | None = None
    """The document store (SQLite); default ``knowledge.db`` in the data dir."""
    max_file_mb: int = Field(50, ge=1, le=2048)
    """Largest file ``tooldeck docs add`` reads, MB."""
    embedder: Literal["local", "none"] = "local"
    """``local``: all-MiniLM-L6-v2 (int8 ONNX) on this machine, search is hybrid (BM25
    and vectors); ``none``, or the ``[knowledge]`` extra missing: BM25 only."""
