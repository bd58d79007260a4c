"""The ``[brokerage]`` table (read by ``tooldeck.config`` without loading the pack)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

__all__ = ["BrokerageConfig"]


class BrokerageConfig(BaseModel):
    """The ``[brokerage]`` table."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Register the brokerage tools."""
    data_path: Path | None = None
    """Data file; default: the file shipped with the package."""
