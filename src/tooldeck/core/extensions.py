"""Named extension points: one pack offers another something without importing it.

The packs do not know each other. A pack that offers items provides a function under a name; the pack that uses them reads
every provider's current items by that name, when it needs them (so items that change,
such as a reloaded module's, are seen). ``Extensions`` is a service every runtime
registers before the packs are set up.

Names in use:

``context_adapters``
    Objects the context pack accepts as ``ContextAdapter``s (a ``category``, a
    ``platform``, ``async fetch()`` returning an ``AdapterResult``, and
    ``normalize_for_tools``), served to the
    configured sources' owners: the modules pack offers those of installed modules of
    ``kind = "context_adapter"``.

``text_embedders``
    Objects that turn texts into unit vectors, on this machine (a ``model_id`` and
    ``embed(texts)`` returning a ``(n, dim)`` float array): the knowledge pack offers
    its local embedder when installed, and tool search (``core.tool_search``) ranks
    tools by meaning with it, beside BM25. Nothing leaves the machine for it.

Example::

    services.get(Extensions).provide("context_adapters", lambda: [my_adapter])
    services.get(Extensions).items("context_adapters")   # [my_adapter, ...]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = ["CONTEXT_ADAPTERS", "TEXT_EMBEDDERS", "AdapterResult", "Extensions"]

CONTEXT_ADAPTERS = "context_adapters"
"""The extension point of context adapters (see the module docstring)."""
TEXT_EMBEDDERS = "text_embedders"
"""The extension point of local text embedders (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class AdapterResult:
    """What one fetch gave (seed 000's ``AdapterResult``).

    ``data`` holds the adapter's canonical records (dicts of JSON values); ``raw_count``
    is how many records the source had, ``transformed_count`` how many became data (a
    bad row is skipped and counted in ``metadata["skipped"]``).
    """

    success: bool
    category: str
    platform: str
    data: list[dict[str, Any]] = field(default_factory=list)
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    error: str | None = None
    raw_count: int = 0
    transformed_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    retryable: bool = False
    """For a failure: whether a later fetch may succeed."""

    @property
    def source_id(self) -> str:
        """What answers cite: ``context:<category>:<platform>``."""
        return f"context:{self.category}:{self.platform}"


class Extensions:
    """Providers of items, by extension point name (see the module docstring)."""

    __slots__ = ("_providers",)

    def __init__(self) -> None:
        self._providers: dict[str, list[Callable[[], Sequence[Any]]]] = {}

    def provide(self, name: str, items: Callable[[], Sequence[Any]]) -> None:
        """Offer ``items()`` under ``name``; it is called each time ``items`` is read."""
        self._providers.setdefault(name, []).append(items)

    def items(self, name: str) -> list[Any]:
        """Every provider's current items under ``name``, in the order they were offered."""
        return [item for provider in self._providers.get(name, ()) for item in provider()]
