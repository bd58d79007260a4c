"""What every document store is: the ``KnowledgeStore`` protocol and what stores share.

Two stores implement it: ``SqliteStore`` (embedded, the default: one file in the data
dir) and ``PostgresStore`` (PostgreSQL + pgvector by URL, for several processes or
machines). Both version documents the same way: ingesting unchanged bytes does nothing;
changed bytes become a new version whose blocks replace the old ones in search, while
the old blocks stay readable (an answer that cited ``doc:<id>@v1`` can still be checked).
Both rank the same way: BM25-like lexical ranking and cosine ranking of sentence
vectors, fused by reciprocal rank (k = 60).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, runtime_checkable

from tooldeck.packs.knowledge.parse import Block, ParsedDocument

__all__ = [
    "BLOCK_FIELDS",
    "EVERYONE",
    "PASSAGE_REACH",
    "RERANK_DEPTH",
    "Document",
    "Hit",
    "KnowledgeStore",
    "SearchMode",
    "Viewer",
    "block_id_for",
    "block_place",
    "by_document",
    "check_mode",
    "document_id_for",
    "embed_blocks",
    "extractive_summary",
    "filter_conditions",
    "fuse",
    "hybrid",
    "image_url",
    "passage",
    "query_words",
    "rerank",
    "strict_then_loose",
    "visible",
]

SearchMode = Literal["lexical", "dense", "hybrid"]
"""``lexical``: words (BM25); ``dense``: sentence vectors (cosine); ``hybrid``: both,
fused by reciprocal rank."""

Status = Literal["added", "updated", "unchanged"]

BLOCK_FIELDS = ("block_id", "block_type", "content_text", "image_url", "image_caption",
                "document_id", "document_title", "page_number", "section", "version")  # fmt: skip
"""The keys of a block as stores return it (seed 001's fields, section and version)."""

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al., 2009): a block's fused score is
the sum over rankings of 1 / (60 + its rank)."""

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
"""Words too common to rank by; dropped from a lexical query that has other words."""


def strict_then_loose(words: Sequence[str]) -> list[list[tuple[str, ...]]]:
    """Lexical queries to try in turn, each an OR of ANDed word groups.

    First the blocks having all the query's words but one (all, for up to three words),
    then any word: ranking every block that has any word costs time in proportion to
    how many there are, and the stricter match's best blocks are the ranking's best
    ones in most cases (Elasticsearch's ``minimum_should_match`` reasoning). A store
    moves to the next query when one finds fewer blocks than it needs. One word, or
    more than eight: any word at once.
    """
    loose: list[tuple[str, ...]] = [(w,) for w in words]
    if len(words) < 2 or len(words) > 8:
        return [loose]
    need = len(words) if len(words) <= 3 else len(words) - 1
    return [list(itertools.combinations(words, need)), loose]


def block_id_for(document_id: str, version: int, n: int) -> str:
    """The id of block ``n`` (1-based position) of a document version: ``<id>@v<v>#<n>``."""
    return f"{document_id}@v{version}#{n}"


def block_place(block_id: str) -> tuple[str, int, int] | None:
    """(document id, version, position) of a ``block_id``; None when it is not one."""
    document, _, rest = block_id.partition("@v")
    version, _, position = rest.partition("#")
    if not (document and version.isdigit() and position.isdigit()):
        return None
    return document, int(version), int(position)


def document_id_for(source: str) -> str:
    """A stable id for a source (a file's absolute path, a URL, a note's text), 12 hex."""
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def query_words(query: str) -> list[str]:
    """The distinct words of ``query`` to rank by, lower-case, stopwords dropped.

    When the query has nothing but stopwords they are all kept ("who are you" still
    searches).
    """
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    meaningful = [w for w in words if w not in STOPWORDS]
    return meaningful or words


class _Everyone:
    def __repr__(self) -> str:
        return "EVERYONE"


EVERYONE: Final = _Everyone()
"""The viewer who sees every document: the command line, the server's own use."""

Viewer = str | None | _Everyone
"""Whose view of the documents: a user sees the shared documents and their own notes;
None (a caller with no trusted identity) the shared ones; ``EVERYONE`` all of them."""


@dataclass(frozen=True, slots=True)
class Document:
    """A document's metadata (its current version); ``blocks`` counts its current blocks."""

    document_id: str
    title: str
    author: str | None
    document_type: str
    created: str | None
    keywords: list[str]
    source: str
    content_hash: str
    version: int
    ingested_at: str
    summary: str
    owner: str | None = None
    """The user whose note it is (``knowledge_store``); None: shared with everyone."""
    blocks: int = 0

    @property
    def source_id(self) -> str:
        """What answers cite: ``doc:<document_id>@v<version>``."""
        return f"doc:{self.document_id}@v{self.version}"


@dataclass(frozen=True, slots=True)
class Hit:
    """A block (``BLOCK_FIELDS``) that matched a query, with its score (higher is better)."""

    block: dict[str, Any]
    score: float


@runtime_checkable
class KnowledgeStore(Protocol):
    """A document store: versioned documents, their blocks, and search over them.

    Methods are synchronous and thread-safe (the tools call them from a thread pool).
    Filters (``document_type``, ``author`` (any case), ``document_id``, ``since`` and
    ``until`` as ``YYYY-MM-DD`` against the created date, else the ingestion date) are
    all optional; all that are given must hold.
    """

    @property
    def mode(self) -> SearchMode:
        """How ``search`` ranks by default: ``hybrid`` with an embedder, else ``lexical``."""
        ...

    def add(
        self, parsed: ParsedDocument, source: str, owner: str | None = None
    ) -> tuple[Document, Status]:
        """Store a parsed document read from ``source`` (its id is ``document_id_for``).

        ``owner``: the user whose note it is (seen by them alone), or None (shared).

        Returns:
            The document and what happened: ``added`` (new), ``unchanged`` (the same
            bytes as the current version: nothing written), ``updated`` (a new version;
            the old blocks leave search but stay readable).
        """
        ...

    def remove(self, document_id: str) -> bool:
        """Delete a document and every version's blocks; False when it does not exist."""
        ...

    def get(self, document_id: str, viewer: Viewer = EVERYONE) -> Document | None:
        """The document, or None (none has this id, or not in ``viewer``'s view)."""
        ...

    def blocks(
        self, document_id: str, version: int | None = None, viewer: Viewer = EVERYONE
    ) -> list[dict[str, Any]]:
        """A document's blocks (the current version's, or ``version``'s), in order."""
        ...

    def documents(
        self,
        *,
        document_type: str | None = None,
        author: str | None = None,
        keywords: Sequence[str] = (),
        since: str | None = None,
        until: str | None = None,
        limit: int = 50,
        viewer: Viewer = EVERYONE,
    ) -> list[Document]:
        """Documents matching every filter given, newest ingestion first, at most ``limit``.

        ``keywords``: the document has all of them (any case).
        """
        ...

    def search(
        self,
        query: str,
        top_k: int,
        *,
        mode: SearchMode | None = None,
        document_type: str | None = None,
        author: str | None = None,
        document_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        viewer: Viewer = EVERYONE,
    ) -> list[Hit]:
        """The ``top_k`` current blocks best matching ``query``, best first.

        Raises:
            ValueError: ``mode`` is ``dense`` or ``hybrid`` and the store has no embedder.
        """
        ...

    def image(self, block_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of an image block that carries its image, or None."""
        ...

    def neighbours(self, block_id: str, reach: int) -> list[dict[str, Any]]:
        """The blocks of ``block_id``'s document version within ``reach`` positions of it.

        Returns:
            ``BLOCK_FIELDS`` dicts, the block itself included, in document order; []
            when no block has that id.
        """
        ...

    def counts(self) -> tuple[int, int]:
        """(documents, current blocks)."""
        ...

    def close(self) -> None:
        """Release connections (the store reopens on next use)."""
        ...

    async def aclose(self) -> None:
        """``close``, for the runtime, which closes its services on exit."""
        ...


def fuse(rankings: Iterable[Sequence[Mapping[str, Any]]], top_k: int) -> list[Hit]:
    """Reciprocal rank fusion of rankings of blocks (each best first, keyed by block_id)."""
    scores: dict[str, float] = {}
    blocks: dict[str, Mapping[str, Any]] = {}
    for ranking in rankings:
        for rank, block in enumerate(ranking, start=1):
            key = block["block_id"]
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            blocks[key] = block
    best = sorted(scores, key=lambda key: -scores[key])[:top_k]
    return [Hit({k: blocks[key][k] for k in BLOCK_FIELDS}, round(scores[key], 6)) for key in best]


RERANK_DEPTH = 30
"""How many fused candidates ``rerank`` reorders."""


def rerank(query: str, fused: Sequence[Hit], cosines: Mapping[str, float], top_k: int) -> list[Hit]:
    """The fused candidates reordered by how much of the query each block itself says.

    Reciprocal rank fusion ranks a block by its places in whole-list rankings; the
    paragraph that answers is often beside the one ranked first (the lead-in, the
    heading, the code after it). Each candidate is scored

        60 / (61 + its fused place) + coverage(text) + 0.25 · coverage(section)
        + cosine − heading

    where coverage is the share of the query's words (stopwords dropped, stemmed) that
    the block has, each word weighted by its inverse frequency among the candidates (a
    word they all have tells them apart least); cosine is the dense similarity (a
    candidate outside the dense list gets the list's lowest); heading is 1 for a heading
    block (its words are in the section path; the paragraph after it answers). The weights
    were chosen on the located questions of ``benchmarks/retrieval.py --corpus docs``
    (hybrid block@1 0.38 → 0.46 there; see docs/knowledge.md).

    Returns:
        The best ``top_k``, each with its rerank score.
    """
    terms = [_stem(w) for w in query_words(query)]
    if not fused or not terms:
        return list(fused[:top_k])
    texts = [
        (set(stems(h.block["content_text"])), set(stems(h.block["section"] or ""))) for h in fused
    ]
    n = len(fused)
    weights = {
        t: math.log((n + 1) / (sum(t in a or t in b for a, b in texts) + 0.5)) for t in terms
    }
    whole = sum(weights.values()) or 1.0
    floor = min(cosines.values(), default=0.0)

    def score(i: int) -> float:
        text, section = texts[i]
        block = fused[i].block
        return (
            60 / (61 + i)
            + sum(w for t, w in weights.items() if t in text) / whole
            + 0.25 * sum(w for t, w in weights.items() if t in section) / whole
            + float(cosines.get(block["block_id"], floor))
            - float(block["block_type"] == "heading")
        )

    scored = sorted(((score(i), i) for i in range(n)), key=lambda si: (-si[0], si[1]))
    return [Hit(fused[i].block, round(s, 6)) for s, i in scored[:top_k]]


def hybrid(
    query: str,
    scored: Sequence[tuple[Mapping[str, Any], float]],
    dense: Sequence[tuple[Mapping[str, Any], float]],
    depth: int,
    top_k: int,
) -> list[Hit]:
    """Hybrid search's ``top_k`` from a store's two rankings (both stores' last step).

    The lexical ranking's best ``depth``, the dense one and ``by_document`` are fused by
    reciprocal rank, and the fused best ``RERANK_DEPTH`` go to ``rerank``.

    Args:
        query: What was searched.
        scored: (block, lexical score), best first, deeper than ``depth`` (the
            documents' scores of ``by_document`` read it all).
        dense: (block, cosine), best first.
        depth: How many of the lexical ranking are fused.
        top_k: How many hits to return.
    """
    lexical = [b for b, _ in scored[:depth]]
    nearest = [b for b, _ in dense]
    fused = fuse((lexical, nearest, by_document(scored, lexical + nearest)), RERANK_DEPTH)
    return rerank(query, fused, {b["block_id"]: cosine for b, cosine in dense}, top_k)


def _stem(word: str) -> str:
    """A light English stemmer: plural, -ed and -ing, a final e ("uploaded" → "upload")."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":  # "running" → "run"
                word = word[:-1]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def stems(text: str) -> list[str]:
    """The words of ``text``, lower-case, each through ``_stem``."""
    return [_stem(w) for w in re.findall(r"\w+", text.lower())]


def by_document(
    scored: Sequence[tuple[Mapping[str, Any], float]], candidates: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """``candidates`` ranked by how well their document matches the query.

    A document's score is the sum of its three best block scores in ``scored`` (the
    lexical ranking, deeper than the fusion's): a question's words are spread over a
    page's paragraphs, and BM25 over whole pages finds the right page more often than
    any one block does. Fused with the blocks' own rankings, this ranks a block of the
    right page over an equally good block of another. Candidates of documents with no
    score go last, in their given order. When no document has two scored blocks (a
    collection of one-block documents) the ranking would repeat the lexical one: [].
    """
    best: dict[str, list[float]] = {}
    for block, score in scored:
        best.setdefault(block["document_id"], []).append(score)
    if all(len(s) < 2 for s in best.values()):
        return []
    totals = {doc: sum(sorted(s, reverse=True)[:3]) for doc, s in best.items()}
    ranked = list({b["block_id"]: b for b in candidates}.values())
    return sorted(ranked, key=lambda b: -totals.get(b["document_id"], float("-inf")))


def image_url(block: Block, document_id: str, version: int, n: int, source: str) -> str | None:
    """Where block ``n``'s image is served from.

    An image the document carries: ``/api/documents/<id>/images/<version>/<n>`` (the
    server's route). A link in a page read from a URL is made absolute against it; other
    links are kept as written.
    """
    if block.image_data is not None:
        return f"/api/documents/{document_id}/images/{version}/{n}"
    if block.image_url and source.startswith(("http://", "https://")):
        from urllib.parse import urljoin

        return urljoin(source, block.image_url)
    return block.image_url


def visible(owner: str | None, viewer: Viewer) -> bool:
    """Whether a document of ``owner`` (None: shared) is in ``viewer``'s view."""
    return owner is None or viewer is EVERYONE or owner == viewer


def filter_conditions(
    mark: str, viewer: Viewer = EVERYONE, **filters: str | None
) -> tuple[list[str], list[Any]]:
    """SQL conditions over the documents table aliased ``d``, and their args.

    Filters that are None are left out; ``mark`` is the placeholder (``?`` or ``%s``).
    ``since``/``until`` compare the created date, else the ingestion day; ``author``
    ignores case; any other name is a column compared for equality. ``viewer`` keeps
    the documents in their view (``visible``).
    """
    day = "coalesce(d.created, substr(d.ingested_at, 1, 10))"
    conditions: list[str] = []
    args: list[Any] = []
    if viewer is None:
        conditions.append("d.owner is null")
    elif not isinstance(viewer, _Everyone):
        conditions.append(f"(d.owner is null or d.owner = {mark})")
        args.append(viewer)
    for name, value in filters.items():
        if value is None:
            continue
        if name == "since":
            conditions.append(f"{day} >= {mark}")
        elif name == "until":
            conditions.append(f"{day} <= {mark}")
        elif name == "author":
            conditions.append(f"lower(d.author) = lower({mark})")
        else:
            conditions.append(f"d.{name} = {mark}")
        args.append(value)
    return conditions, args


def check_mode(mode: SearchMode | None, default: SearchMode, has_embedder: bool) -> SearchMode:
    """The mode a search runs in.

    Raises:
        ValueError: a vector mode was asked of a store without an embedder.
    """
    chosen = mode or default
    if chosen != "lexical" and not has_embedder:
        raise ValueError(
            f"{chosen} search needs an embedder: install 'tooldeck[knowledge]' and set "
            "[knowledge] embedder (it is 'none' or the extra is missing)"
        )
    return chosen


PASSAGE_CHARS = 800
"""Most characters of a passage: a block and the text around it (``passage``)."""

PASSAGE_REACH = 6
"""Blocks read on each side of a hit (``neighbours``) to build its passage."""


def passage(block_id: str, around: Sequence[Mapping[str, Any]], budget: int = PASSAGE_CHARS) -> str:
    """A block with the blocks around it in its section, up to ``budget`` characters.

    Small-to-big retrieval: a block is the unit that is ranked (a paragraph matches
    sharply), the passage what is shown and quoted (the sentence before it, the code
    after it). The window grows one block at a time, the next one first, then the one
    before, and stops at the section's edges and at the budget (the block itself is
    always whole).

    Args:
        block_id: The block in the middle.
        around: Its ``neighbours`` (document order), itself included.
        budget: Most characters, the newlines between blocks counted.

    Returns:
        The blocks' texts in document order, one per line.
    """
    at = next((i for i, b in enumerate(around) if b["block_id"] == block_id), None)
    if at is None:
        return ""
    section = around[at]["section"]
    first = last = at
    size = len(around[at]["content_text"])
    grew = True
    while grew:
        grew = False
        for step in (last + 1, first - 1):
            if 0 <= step < len(around) and around[step]["section"] == section:
                extra = len(around[step]["content_text"]) + 1
                if size + extra <= budget:
                    size += extra
                    first, last = min(first, step), max(last, step)
                    grew = True
    return "\n".join(b["content_text"] for b in around[first : last + 1])


def embed_blocks(embedder: Any, parsed: ParsedDocument) -> Any:
    """The vectors of a document's blocks, each embedded with its section path.

    A block is embedded as ``"<section>: <text>"``: a paragraph under "Fixtures >
    Autouse fixtures" or a description under an API signature is found by what it is
    about, not only by its own words (most blocks are a sentence or two). Identical
    texts are embedded once.

    Returns:
        A float32 array of shape ``(len(parsed.blocks), embedder.dim)``, rows in block order.
    """
    texts = [f"{b.section}: {b.content_text}" if b.section else b.content_text
             for b in parsed.blocks]  # fmt: skip
    unique = list(dict.fromkeys(texts))
    vectors = embedder.embed(unique)
    if len(unique) == len(texts):
        return vectors
    row = {text: n for n, text in enumerate(unique)}
    return vectors[[row[text] for text in texts]]


def extractive_summary(parsed: ParsedDocument, limit: int = 3) -> str:
    """The first ``limit`` sentences of the document's text blocks (at most ~400 chars)."""
    text = " ".join(b.content_text for b in parsed.blocks if b.block_type == "text")
    sentences = re.split(r"(?<=[.!?])\s+", text)
    summary = " ".join(sentences[:limit])
    return summary[:400].rstrip() + ("…" if len(summary) > 400 else "")
