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
from tooldeck.packs.knowledge.store import KnowledgeStore, query_words, stems

__all__ = ["DOCUMENTS_INTENT", "KnowledgeAnswers", "search_query"]

DOCUMENTS_INTENT = Intent(
    "documents",
    (IntentStep("semantic_search", params=("query",), fixed={"top_k": 4}),),
    required=("query",),
    description="What the ingested documents say about the question, quoted and cited.",
)

_SPEAKS_OF_DOCUMENTS = re.compile(
    r"\b(?:documents?|documentation|docs?|files?|pdfs?|my notes|the notes|guides?|handbook|manual|"
    r"according to|what (?:does|do) [\w' ]{1,40}? say|in (?:the|my) (?:notes|files))\b",
    re.IGNORECASE,
)
CLEAR, TITLED, MATCHED, WEAK = 0.96, 0.92, 0.55, 0.31
"""Confidence of a question that speaks of documents, names one (both above the
brokerage pack's clearest match, 0.95: the user asked for their documents), has most of
its words in one block (``MATCHED``: above another pack's clarifying question, 0.5, below
its clear match), or merely matches a word in one (just above another pack's polite "out
of scope", 0.3)."""

_QUOTES = 3
_QUOTE_CHARS = 600
"""An answer quotes the best ``_QUOTES`` passages (ones inside another left out), each at
most ``_QUOTE_CHARS`` around its block. ``benchmarks/docs_answers.py``, through the chat:
the answer holds the answering phrase for 49 of 72 questions on Flask's and pytest's
documentation and 27 of 60 written by others on Click's and Requests' (with one
800-character passage, and before ``MATCHED``: 21 and 13; 32 once the brokerage router
left questions about code alone), at 1,100–1,700 characters per answer."""

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


def _matched(query: str, block: Mapping[str, Any]) -> bool:
    """Whether ``block`` has at least two of the query's words, and half of them or more.

    With Click's and Requests' pages ingested, it sent 46 of their 76 questions of
    ``benchmarks/docs_answers.py`` to the documents (32 before), and moved one of the 400
    labelled brokerage questions there (18 go there, all out of scope or advice).
    """
    terms = set(stems(" ".join(query_words(query))))
    had = terms & set(stems(f"{block.get('section') or ''} {block['content_text']}"))
    return len(had) >= 2 and 2 * len(had) >= len(terms)


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
            confidence = 0.0 if not found else MATCHED if _matched(query, found[0].block) else WEAK
        return Route("documents", {"query": query}, confidence)

    def holds_own_data(self) -> bool:
        """True when the store holds a shared document: data of the user's own.

        ``IntentPacks`` then keeps example data from answering for the user. Shared only,
        as ``route`` searches (``viewer=None``): one user's private notes neither change
        another's answers nor tell them that such notes exist. Before the store's file
        exists: False, and no file is made.

        Raises:
            Exception: what the store raises when it cannot be reached.
        """
        return bool(self.store.documents(limit=1, viewer=None))

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The best passages quoted, best first, each with its document and page.

        Up to ``_QUOTES`` blocks of the search, a block whose text is inside an earlier
        quotation left out; each quotation is the block's passage cut to
        ``_QUOTE_CHARS`` around it (``_quote``). Nothing found is said so.
        The title, page, section and quotation are claims (``core.claims``) into the
        search result's block, each under the block's own source id: the quotation must
        stand in the block's text (or its passage), the page be its page.
        """
        result = outcome.results[0] if outcome.results else None
        blocks = result.data.get("blocks", []) if result is not None else []
        if result is None or not blocks:
            return ComposedAnswer("I found nothing about that in your documents.", ())
        writer = ClaimWriter()
        lines: list[str] = []
        quoted: list[str] = []
        chosen: list[Mapping[str, Any]] = []
        for i, block in enumerate(blocks):
            own = " ".join(str(block["content_text"]).split())
            if len(lines) == _QUOTES:
                break
            if any(own in q for q in quoted):
                continue
            quote, field = _quote(block)
            quoted.append(quote)
            chosen.append(block)
            lines.append(_line(writer, block, i, quote, field, result.metadata.request_id))
        markdown, claims = writer.finish("\n\n".join(lines))
        citations = tuple(dict.fromkeys(b["source_id"] for b in chosen))
        return ComposedAnswer(markdown, citations, claims=tuple(claims), bound=True)

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """None: an answer quotes the documents' own numbers, which grounding checks."""
        return []

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """None: documents are cited, not named as subjects."""
        return {}


def _line(
    writer: ClaimWriter,
    block: Mapping[str, Any],
    index: int,
    quote: str,
    field: str,
    result: str | None,
) -> str:
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
    title = bind(block["document_title"], "document_title")
    return f"According to *{title}*{place}: “{bind(quote, field)}”"


def _quote(block: Mapping[str, Any]) -> tuple[str, str]:
    """The quotation of a block and the field it is from (``passage`` or ``content_text``).

    The block's passage (the block with its section's neighbours: the lead-in before
    it, the code after it) when the search gave one, cut to ``_QUOTE_CHARS``: whole
    lines (blocks) around the block's own, the next one first, then the one before, as
    ``store.passage`` grows it. Without a passage, the block's text. Whitespace is made
    single spaces; a block longer than ``_QUOTE_CHARS`` is cut (``_cut``).
    """
    own = str(block["content_text"])
    shown = str(block.get("passage") or "")
    at = shown.find(own) if own.strip() else -1
    if at < 0:
        return _cut(own), "content_text"
    before = shown[:at].split("\n")
    after = shown[at + len(own) :].split("\n")
    core = before.pop() + own + after.pop(0)
    size, first, last, grew = len(core), len(before), 0, True
    while grew:
        grew = False
        if last < len(after) and size + len(after[last]) + 1 <= _QUOTE_CHARS:
            size, last, grew = size + len(after[last]) + 1, last + 1, True
        if first > 0 and size + len(before[first - 1]) + 1 <= _QUOTE_CHARS:
            size, first, grew = size + len(before[first - 1]) + 1, first - 1, True
    return _cut("\n".join([*before[first:], core, *after[:last]])), "passage"


def _cut(text: str) -> str:
    """``text`` with single spaces, cut at a sentence end near ``_QUOTE_CHARS`` (then "…")."""
    text = " ".join(text.split())
    if len(text) <= _QUOTE_CHARS:
        return text
    cut = text.rfind(". ", 0, _QUOTE_CHARS)
    return text[: cut + 1] if cut > 80 else text[:_QUOTE_CHARS].rsplit(" ", 1)[0] + "…"
