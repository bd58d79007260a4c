"""Finding tools by what they do, for registries too large to send whole: ``ToolIndex``.

A model given hundreds of tool definitions spends its context on them (one public
report: 178 tools took 62% of a 150k context) and picks worse. With many tools, the
model agent and the MCP server send a few definitions and ``search_tools``; the tools
a search finds are sent from then on. ``export(..., query=)`` exports the matches::

    index = ToolIndex.of(definitions)
    [d.name for d in index.search("convert a currency amount", limit=3)]

Lexical: BM25 (SQLite FTS5, in memory, Porter stemming) over each tool's name (split
at ``_``, ``.``, ``-`` and camelCase), title, description and parameter names and
descriptions; the name counts 3x, the title 2x. With a local text embedder (the
knowledge pack's), ``search_tools`` also ranks by meaning and fuses the two
(``core.tool_vectors``).
"""

from __future__ import annotations

import fnmatch
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations, ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.core.tool_vectors import TextEmbedder, ToolVectors, fused, tool_text

__all__ = ["SEARCH_TOOLS", "DeferredTools", "SearchTools", "ToolIndex"]

SEARCH_TOOLS = "search_tools"
"""The name of the search tool a model is given instead of the full list."""

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\d_]+", re.UNICODE)
"""Words of a name or text: camelCase, snake_case, dotted and dashed names split."""
_MAX_QUERY_WORDS = 32
_FUSED = 50
"""Candidates from each ranking before fusion."""
_STOP = frozenset(
    re.findall(
        r"\w+",
        """a about above after all also am an and any are as at be been being but by can
        could did do does doing for from get give had has have he her here him his how i if
        in into is it its let me more most my need no not of off on one or our out over
        please she should so some tell than that the their them then there these they this
        those to too up us use using very want was we were what when where which while who
        whom why will with would you your""",
    )
)
"""Words that say nothing about a tool; left out of a query (they would match every
tool and cost the most time)."""


def _words(text: str) -> str:
    return " ".join(m.group().lower() for m in _WORD.finditer(text))


def _parameters(schema: dict[str, Any]) -> str:
    """Parameter names and descriptions, top level and one level down."""
    parts: list[str] = []
    for name, prop in (schema.get("properties") or {}).items():
        parts.append(name)
        if isinstance(prop, dict):
            parts.append(str(prop.get("description", "")))
            parts.extend(prop.get("properties") or {})
    return " ".join(parts)


class ToolIndex:
    """A BM25 index over tool definitions (see the module docstring).

    Semantics:
        Built once from a list of definitions (10,000 in about a second); ``search``
        is safe from any thread. A query is any text: its words are matched, any of
        them (OR), ranked by BM25; text with no words matches nothing. Ties keep the
        definitions' order.

    Args:
        definitions: The tools to search, in their listing order.
    """

    __slots__ = ("_db", "_lock", "_vectors", "definitions")

    def __init__(self, definitions: Sequence[ToolDefinition]) -> None:
        self.definitions = list(definitions)
        """The indexed definitions, in order; a hit's row is its position + 1."""
        self._lock = threading.Lock()
        self._vectors: dict[int, tuple[TextEmbedder, ToolVectors]] = {}
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE tools USING fts5(name, title, description, parameters, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self._db.executemany(
            "INSERT INTO tools(rowid, name, title, description, parameters) VALUES (?,?,?,?,?)",
            (
                (
                    row,
                    _words(d.name),
                    _words(d.annotations.title or ""),
                    d.description,
                    _words(_parameters(d.input_schema)),
                )
                for row, d in enumerate(self.definitions, 1)
            ),
        )

    @classmethod
    def of(cls, definitions: Iterable[ToolDefinition]) -> ToolIndex:
        """The index of ``definitions``, shared with earlier calls for the same list.

        The last few indexes are kept, keyed by the definitions' identities (a
        definition is frozen; a changed tool is a new object), so each run or export
        over the same view does not build it again (10,000 tools: ~0.3 s to build).
        """
        listed = tuple(definitions)
        key = tuple(map(id, listed))
        with _CACHE_LOCK:
            index = _CACHE.get(key)
            if index is not None:
                _CACHE.move_to_end(key)
                return index
        index = cls(listed)
        with _CACHE_LOCK:
            _CACHE[key] = index  # the index holds the definitions: their ids stay theirs
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)  # freed when no run or session holds it
        return index

    def search(
        self, query: str, limit: int = 5, *, vectors: ToolVectors | None = None
    ) -> list[ToolDefinition]:
        """The ``limit`` tools that match ``query`` best, best first.

        Args:
            query: What the tool should do, in words ("send an email").
            limit: Most tools returned (at least 1).
            vectors: This index's vectors (``vectors``): once they are ready, BM25's
                top 50 and the 50 nearest by meaning are fused (reciprocal rank
                fusion); before, BM25 alone.
        """
        limit = max(1, limit)
        dense = vectors.ranked(query, _FUSED) if vectors is not None else None
        lexical = self._lexical(query, _FUSED if dense is not None else limit)
        order = lexical[:limit] if dense is None else fused([lexical, dense], limit)
        return [self.definitions[i] for i in order]

    def _lexical(self, query: str, limit: int) -> list[int]:
        """BM25's best ``limit`` positions."""
        words = [w for w in dict.fromkeys(_words(query).split()) if w not in _STOP]
        words = words[:_MAX_QUERY_WORDS]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)  # quoted: FTS5 syntax cannot leak in
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid FROM tools WHERE tools MATCH ? "
                "ORDER BY bm25(tools, 3.0, 2.0, 1.0, 1.0), rowid LIMIT ?",
                (match, limit),
            ).fetchall()
        return [row - 1 for (row,) in rows]

    def vectors(self, embedder: TextEmbedder) -> ToolVectors:
        """The tools' vectors by ``embedder``: made once per index, in the background."""
        with self._lock:
            found = self._vectors.get(id(embedder))
            if found is None:
                texts = [tool_text(d, _parameters(d.input_schema)) for d in self.definitions]
                found = self._vectors[id(embedder)] = (embedder, ToolVectors(texts, embedder))
        return found[1]


_CACHE: OrderedDict[tuple[int, ...], ToolIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


class SearchRequest(BaseModel):
    """Arguments of ``search_tools``."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=500,
        description="What the tool should do, in a few words, e.g. 'convert currencies'.",
    )
    limit: int = Field(5, ge=1, le=20, description="Most tools to find.")


class FoundTool(BaseModel):
    """A tool ``search_tools`` found."""

    name: str
    description: str
    input_schema: dict[str, Any] | None = Field(None, exclude_if=lambda value: value is None)
    """Its arguments' JSON Schema, for a client that may not list the tools again (MCP)."""


class SearchResponse(BaseModel):
    """What ``search_tools`` found, best first."""

    tools: list[FoundTool]


class SearchTools(BaseTool[SearchRequest, SearchResponse]):
    """``search_tools``: find tools in an index by what they do (read-only, in memory).

    Its result's data is ``{"tools": [{"name", "description"}, ...]}``, best first;
    the caller (``DeferredTools``) sends those tools' definitions from then on. With
    ``schemas``, each tool also carries its ``input_schema``: an MCP client that does
    not list the tools again can still call them right.
    """

    name = SEARCH_TOOLS
    RequestModel = SearchRequest
    ResponseModel = SearchResponse
    annotations = ToolAnnotations(read_only=True, open_world=False, title="Search tools")
    blocking = False

    def __init__(
        self, index: ToolIndex, *, schemas: bool = False, vectors: ToolVectors | None = None
    ) -> None:
        self.index = index
        self.schemas = schemas
        self.vectors = vectors
        self.blocking = vectors is not None  # embedding the query takes ~10 ms of CPU
        self.description = (
            f"Find tools by what they do, among {len(index.definitions)} tools not all "
            "listed here. Describe the task in a few words; the tools found are added to "
            "your tools and can be called from your next step. Search again with other "
            "words if none fits."
        )

    def execute_internal(self, request: SearchRequest, ctx: ToolContext) -> SearchResponse:
        """The best ``limit`` matches of ``query``."""
        found = self.index.search(request.query, request.limit, vectors=self.vectors)
        return SearchResponse(
            tools=[
                FoundTool(
                    name=d.name,
                    description=_first_line(d.description),
                    input_schema=d.input_schema if self.schemas else None,
                )
                for d in found
            ]
        )


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().split("\n\n", 1)[0].replace("\n", " ")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class DeferredTools:
    """The tools a model is sent when a view has too many: a few, plus ``search_tools``.

    Semantics:
        ``visible()`` is ``search_tools``, the tools named by ``always_visible`` (names
        or ``fnmatch`` patterns) and every tool a search found so far, in the view's
        order. ``tool`` is ``search_tools``; its caller runs it (through its audit)
        and hands the result to ``note``, which adds what it found. Any tool of the view may be called whether or
        not it is visible: deferring is about the context a model spends, not about
        what it may do (the profile's view decides that). One instance per run or
        session: what one model found is not shown to another.

    Args:
        definitions: The view's tools.
        always_visible: Names or patterns of tools always sent.
        schemas: Found tools come with their input schemas (``SearchTools``).
        embedder: A local text embedder: search by meaning too, once the tools'
            vectors are made (``core.tool_vectors``); None: BM25 alone.
    """

    def __init__(
        self,
        definitions: Sequence[ToolDefinition],
        always_visible: Iterable[str] = (),
        *,
        schemas: bool = False,
        embedder: TextEmbedder | None = None,
    ) -> None:
        index = ToolIndex.of(definitions)
        vectors = index.vectors(embedder) if embedder is not None else None
        self.tool = SearchTools(index, schemas=schemas, vectors=vectors)
        patterns = list(always_visible)
        self.found: set[str] = {
            d.name for d in definitions if any(fnmatch.fnmatchcase(d.name, p) for p in patterns)
        }
        """Names sent besides ``search_tools``: the always-visible and the found ones."""

    @classmethod
    def over(
        cls,
        definitions: Sequence[ToolDefinition],
        threshold: int,
        always_visible: Iterable[str] = (),
        *,
        schemas: bool = False,
        embedder: TextEmbedder | None = None,
    ) -> DeferredTools | None:
        """A ``DeferredTools`` when ``definitions`` are more than ``threshold`` (0: never).

        None too when the view has a tool of its own named ``search_tools``.
        """
        if threshold <= 0 or len(definitions) <= threshold:
            return None
        if any(d.name == SEARCH_TOOLS for d in definitions):
            return None
        return cls(definitions, always_visible, schemas=schemas, embedder=embedder)

    def visible(self) -> list[ToolDefinition]:
        """``search_tools`` first, then the visible tools in the view's order."""
        found = self.found
        return [self.tool.definition, *(d for d in self.tool.index.definitions if d.name in found)]

    def note(self, result: ToolResult) -> ToolResult:
        """Make the tools a ``search_tools`` call found (its ``result``) visible; returns it."""
        if result.success and isinstance(result.data, dict):
            self.found.update(t["name"] for t in result.data.get("tools", ()))
        return result
