"""Chat answers from the documents, without a model: the knowledge pack's ``IntentPack``.

One intent, ``documents``: search (``semantic_search``) and quote the best blocks, each
cited by its document version. A question claims it clearly when it speaks of documents
("according to the guide", "what do my notes say") or names a stored document's title
of two words or more;
otherwise weakly, and only when a word of it is found in some document (so that another
pack's clear match, or its clarifying question, wins).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.claims import ClaimWriter
from tooldeck.core.intents import ComposedAnswer, Figure, Intent, IntentOutcome, IntentStep, Route
from tooldeck.core.result import ToolResult
from tooldeck.packs.knowledge.store import KnowledgeStore

__all__ = ["DOCUMENTS_INTENT", "KnowledgeAnswers", "search_query"]

DOCUMENTS_INTENT = Intent(
    "documents",
    (IntentStep("semantic_search", params=("query",), fixed={"top_k": 3}),),
    required=("query",),
    description="What the ingested documents say about the question, quoted and cited.",
)

_SPEAKS_OF_DOCUMENTS = re.compile(
    r"\b(?:documents?|documentation|docs?|files?|pdfs?|my notes|the notes|guides?|handbook|manual|"
    r"according to|what (?:does|do) [\w' ]{1,40}? say|in (?:the|my) (?:notes|files))\b",
    re.IGNORECASE,
)
CLEAR, TITLED, WEAK = 0.96, 0.92, 0.31
"""Confidence of a question that speaks of documents, names one (both above the
brokerage pack's clearest match, 0.95: the user asked for their documents), or merely
matches a word in one (just above another pack's polite "out of scope", 0.3)."""

_QUOTE_CHARS = 800
"""The longest quotation (a passage is at most ``store.PASSAGE_CHARS``, 800, too)."""

_COLLECTION = (
    r"(?:the |my |our |your )?(?:[\w.+#-]+ ){0,3}?"
    r"(?:docs?|documentation|documents?|notes|guides?|manual|handbook|files?|pdfs?|reference)\b"
)
"""Words naming where to look: "the Flask docs", "my notes", "the user guide"."""

_FRAMING = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"^(?:please |can you |could you )*(?:according to|as per|per|in|from|based on|"
        rf"using|with) {_COLLECTION}\s*[,:]?\s*",
        rf"^(?:please |can you |could you )*(?:search|look up|look|find|check|tell me)"
        rf"(?: in| through)? {_COLLECTION}(?: (?:for|about|on|whether|if))?\s*[,:]?\s*",
        rf"^(?:what|how) (?:does|do) {_COLLECTION} (?:say|tell me|explain)"
        rf"(?: (?:about|on|regarding))?\s*[,:]?\s*",
        rf"^(?:what is|what's) (?:in|written in) {_COLLECTION} (?:about|on|regarding)\s*",
        rf"[,;]?\s*(?:according to|as per|per|in|from|based on) {_COLLECTION}\s*(?=[?.!]*$)",
    )
]
"""What makes a question a documents question, not what it asks: stripped before search."""


def search_query(question: str) -> str:
    """``question`` without the framing that says where to look.

    "According to the Flask docs, how do I enable debug mode?" searches for "how do I
    enable debug mode?": "flask" and "docs" would rank every block that names them.
    Quoted phrases are kept whole (never stripped); a question that is all framing is
    searched as it is.
    """
    quoted: list[str] = []

    def keep(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    text = re.sub(r"\"[^\"]+\"|“[^”]+”", keep, question.strip())
    for pattern in _FRAMING:
        text = pattern.sub("", text, count=1).strip()
    text = re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], text)
    return text if re.search(r"\w", text) else question.strip()


class KnowledgeAnswers:
    """The ``documents`` intent over ``store`` (see the module docstring)."""

    intents: Sequence[Intent] = (DOCUMENTS_INTENT,)

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """``documents`` with the question as the query, and how clearly it asks for them.

        Confidence 0 (no claim) when no document could answer: the store is empty, or
        the question is weak and shares no word with any document.
        """
        query = str((given or {}).get("query") or search_query(question)).strip()
        try:
            shared = self.store.documents(limit=500, viewer=None)  # no one's private notes
            titles = [d.title.lower() for d in shared]
        except Exception:  # an unreachable store claims nothing
            return Route("documents", {"query": query}, 0.0)
        if not titles or not re.search(r"\w", query):
            return Route("documents", {"query": query}, 0.0)
        lowered = question.lower()
        if _SPEAKS_OF_DOCUMENTS.search(question):
            confidence = CLEAR
        elif any(" " in t and t in lowered for t in titles):  # one word names too much
            confidence = TITLED
        else:
            found = self.store.search(query, 1, mode="lexical", viewer=None)
            confidence = WEAK if found else 0.0
        return Route("documents", {"query": query}, confidence)

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The best block quoted with its document and page, every part bound to its field.

        A second document's best block too when it scores at least 0.8 × the first's
        (measured with the rerank scores on the 72 real documentation questions of
        ``benchmarks/retrieval.py --corpus docs``: the answer then holds the right page in
        64, against 52 with one quote; 48 answers carry two quotes; at 0.9: 59 and 31).
        Nothing found is said so.
        The title, page, section and quotation are claims (``core.claims``) into the
        search result's block, each under the block's own source id: the quotation must
        stand in the block's text (or its passage), the page be its page.
        """
        result = outcome.results[0] if outcome.results else None
        blocks = result.data.get("blocks", []) if result is not None else []
        if result is None or not blocks:
            return ComposedAnswer("I found nothing about that in your documents.", ())
        chosen = [0]
        for i, block in enumerate(blocks[1:], start=1):
            if (
                block["document_id"] != blocks[0]["document_id"]
                and block["score"] >= 0.8 * blocks[0]["score"]
            ):
                chosen.append(i)
                break
        writer = ClaimWriter()
        lines = [_line(writer, blocks[i], i, result.metadata.request_id) for i in chosen]
        markdown, claims = writer.finish("\n\n".join(lines))
        citations = tuple(dict.fromkeys(blocks[i]["source_id"] for i in chosen))
        return ComposedAnswer(markdown, citations, claims=tuple(claims), bound=True)

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """None: an answer quotes the documents' own numbers, which grounding checks."""
        return []

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """None: documents are cited, not named as subjects."""
        return {}


def _line(writer: ClaimWriter, block: Mapping[str, Any], index: int, result: str | None) -> str:
    """'According to *title* (page N, section): “quote”', each part bound to its field."""

    def bind(text: str, field: str, kind: str | None = "quote") -> str:
        pointer = f"/blocks/{index}/{field}"
        return writer.figure(text, block["source_id"], pointer, kind=kind, result=result)

    where = []
    if block.get("page_number"):
        where.append(f"page {bind(str(block['page_number']), 'page_number', kind=None)}")
    if block.get("section"):
        where.append(bind(block["section"], "section"))
    place = f" ({', '.join(where)})" if where else ""
    quote, field = _quote(block)
    title = bind(block["document_title"], "document_title")
    return f"According to *{title}*{place}: “{bind(quote, field)}”"


def _quote(block: Mapping[str, Any]) -> tuple[str, str]:
    """The quotation of a block and the field it is from (``passage`` or ``content_text``).

    The block's passage (the block with its section's neighbours: the lead-in before
    it, the code after it) when the search gave one, else the block's text; cut at a
    sentence end near ``_QUOTE_CHARS`` (then "…"). On the real documentation of
    ``tests/packs/test_real_documents.py`` the passage holds the answering sentence for
    7 of 10 questions, the block alone for 1.
    """
    text = " ".join(str(block["content_text"]).split())
    shown = " ".join(str(block.get("passage") or "").split())
    text, field = (shown, "passage") if text in shown else (text, "content_text")
    if len(text) <= _QUOTE_CHARS:
        return text, field
    cut = text.rfind(". ", 0, _QUOTE_CHARS)
    return (text[: cut + 1] if cut > 80 else text[:_QUOTE_CHARS].rsplit(" ", 1)[0] + "…"), field
