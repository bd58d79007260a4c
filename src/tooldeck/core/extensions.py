"""Named extension points: one pack offers another something without importing it.

The packs do not know each other. A pack that offers items provides a function under a name; the pack that uses them reads
every provider's current items by that name, when it needs them (so items that change,
such as a reloaded module's, are seen). ``Extensions`` is a service every runtime
registers before the packs are set up.

Names in use:

``context_adapters``
    Objects the context pack accepts as ``ContextAdapter``s (a ``category``, a
    ``platform``, ``async fetch()`` and ``normalize_for_tools``), served to the
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
from typing import Any

__all__ = ["CONTEXT_ADAPTERS", "TEXT_EMBEDDERS", "Extensions"]

CONTEXT_ADAPTERS = "context_adapters"
"""The extension point of context adapters (see the module docstring)."""
TEXT_EMBEDDERS = "text_embedders"
"""The extension point of local text embedders (see the module docstring)."""


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
