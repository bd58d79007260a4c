"""Tools ranked by meaning: ``ToolVectors``, the dense half of tool search.

With a local text embedder installed (the knowledge pack offers one under
``core.extensions.TEXT_EMBEDDERS``), ``search_tools`` fuses BM25's ranking with the
cosine ranking of each tool's text (reciprocal rank fusion): a query that shares no
word with a tool's description ("electronic mail" for ``send_email``) still finds it.

The vectors are computed once per definitions list, in a background thread, a few
texts at a time (the embedder is shared with the knowledge pack's searches, which go
in between): ~20 ms a tool on 2 cores with the knowledge pack's MiniLM, so 100 tools
take about 2 s and 3,000 about a minute. Until they are ready, search is lexical
only. A query's own vector takes 2 to 10 ms (short to long queries).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from tooldeck.core.context import ServiceContainer
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.extensions import TEXT_EMBEDDERS, Extensions

__all__ = ["TextEmbedder", "ToolVectors", "fused", "text_embedder", "tool_text"]

_CHUNK = 32
_RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009: 60)."""


class TextEmbedder(Protocol):
    """What tool search needs of an embedder (the knowledge pack's ``LocalEmbedder``)."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts``, a ``(len(texts), dim)`` float array."""
        ...


def text_embedder(services: ServiceContainer) -> TextEmbedder | None:
    """The first local text embedder a pack offers (``core.extensions.TEXT_EMBEDDERS``)."""
    extensions = services.get_optional(Extensions)
    offered = extensions.items(TEXT_EMBEDDERS) if extensions is not None else []
    return offered[0] if offered else None


def tool_text(definition: ToolDefinition, parameters: str) -> str:
    """What a tool's vector is made of: its name, description and parameters."""
    return f"{definition.name}: {definition.description} Parameters: {parameters}"


class ToolVectors:
    """The vectors of a definitions list, filled in a background thread.

    Semantics:
        ``ranked`` answers None until every vector is made (callers then rank by
        BM25 alone); an embedder that fails leaves it None for good, logged once.

    Args:
        texts: One text per tool, in the definitions' order.
        embedder: Makes the vectors.
    """

    def __init__(self, texts: Sequence[str], embedder: TextEmbedder) -> None:
        self.embedder = embedder
        self._matrix: Any = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._fill, args=(list(texts),), name="tooldeck-tool-vectors", daemon=True
        )
        self._thread.start()

    def _fill(self, texts: list[str]) -> None:
        import numpy as np

        try:
            parts = [
                self.embedder.embed(texts[i : i + _CHUNK]) for i in range(0, len(texts), _CHUNK)
            ]
            self._matrix = np.vstack(parts) if parts else np.zeros((0, 1), dtype=np.float32)
        except Exception as exc:  # no dense ranking; lexical search goes on
            import logging

            logging.getLogger("tooldeck").warning("tool search by meaning is off: %s", exc)
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        """Whether the vectors are made."""
        return self._matrix is not None

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the vectors are made (or failed); whether they are ready."""
        self._done.wait(timeout_s)
        return self.ready

    def ranked(self, query: str, k: int) -> list[int] | None:
        """The positions of the ``k`` tools nearest ``query``, nearest first.

        None when the vectors are not ready (or could not be made).
        """
        matrix = self._matrix
        if matrix is None or not len(matrix):
            return None
        import numpy as np

        scores = matrix @ self.embedder.embed([query])[0]
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]]


def fused(rankings: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Reciprocal rank fusion of several rankings of positions: the best ``limit``."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking):
            score[position] = score.get(position, 0.0) + 1.0 / (_RRF_K + rank)
    return sorted(score, key=lambda p: (-score[p], p))[:limit]
