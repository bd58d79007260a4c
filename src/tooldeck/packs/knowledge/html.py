"""An HTML page's main content as blocks: what a reader of the page reads, each once.

Documentation generators print navigation around every page (Sphinx twice: the
``related`` bar and ``div.sphinxsidebar``; MkDocs and Docusaurus a sidebar and a table
of contents), and a page's text nests (a ``li`` holding a ``p``). Read naively, a third
of the blocks of a real Sphinx build are navigation and many more repeat their parent.
Here:

- the content root is the page's ``[role=main]``, ``main`` or its one ``article``
  (else ``body``); navigation, search, sidebars, permalink glyphs (``¶``) and
  ``[source]`` links inside it are dropped, and a ``body`` root also loses its
  ``header`` and ``footer``;
- each run of text becomes one block where it stands: ``<li>text<ul>…</ul></li>``
  gives the item's own text, then the inner items, never the text twice;
- a definition list's term (``dt``: an API signature, a glossary term, "Exit code 0")
  is the title of the blocks of its definition (``dd``): the last step of their section
  path, and the lead of its first paragraph ("approx(expected, rel=None): Assert that
  two numbers…"), so a description names the function it belongs to;
- a table row is one block (its cells joined by `` | ``), an admonition's title
  ("Note") leads its first paragraph, and a block whose normalised text and section
  repeat an earlier one's is dropped.

Trafilatura (the web tool's extractor) was measured on the same pages and not used
here: it keeps less of a documentation page's main text, rewrites code blocks, keeps
the pilcrows, and takes ~0.4 s on a large API page (``benchmarks/retrieval.py``).
"""

from __future__ import annotations

import re
from typing import Any

from tooldeck.packs.knowledge.parse import (
    Block,
    BlockType,
    DocumentError,
    ParsedDocument,
    _section,
    paragraphs,
)

__all__ = ["read_html"]

_DROPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "button", "form",
                           "nav", "aside", "input", "select", "textarea", "iframe"})  # fmt: skip
_DROPPED_ROLES = frozenset({"navigation", "search", "complementary", "banner", "contentinfo"})
_DROPPED_CLASSES = frozenset({
    "sphinxsidebar", "related", "headerlink", "viewcode-link", "viewcode-back",  # Sphinx
    "wy-nav-side", "rst-versions", "wy-breadcrumbs",  # Read the Docs theme
    "md-sidebar", "md-header", "md-footer", "md-source",  # MkDocs Material
    "theme-doc-sidebar-container", "table-of-contents", "hash-link", "pagination-nav",  # Docusaurus
    "anchorjs-link", "skip-link", "visually-hidden", "sr-only",
})  # fmt: skip
"""Class tokens of navigation and glyphs in the generators' own markup."""

_BLOCK_TAGS = frozenset(
    {"address", "article", "blockquote", "body", "caption", "dd", "details", "div", "dl",
     "dt", "fieldset", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
     "header", "hr", "img", "li", "main", "ol", "p", "pre", "section", "summary", "table",
     "tbody", "td", "tfoot", "th", "thead", "tr", "ul"}
)  # fmt: skip
"""Tags that end a run of text; anything else (``span``, ``a``, ``code``…) is inline."""

_GLYPHS = re.compile(r"\s*[¶§#🔗]+\s*$")
"""Permalink glyphs left at a heading's end when a generator's class is unknown."""


def _drop_boilerplate(root: Any, whole_body: bool) -> None:
    """Remove navigation, forms, hidden parts and glyph links from ``root`` (in place)."""
    tags = _DROPPED_TAGS | ({"header", "footer"} if whole_body else set())
    doomed = []
    for element in root.iterdescendants():
        tag = element.tag
        if not isinstance(tag, str) or (  # not a string: a comment or processing instruction
            tag in tags
            or element.get("role") in _DROPPED_ROLES
            or element.get("hidden") is not None
            or element.get("aria-hidden") == "true"
            or not _DROPPED_CLASSES.isdisjoint(str(element.get("class", "")).split())
        ):
            doomed.append(element)
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()  # keeps the element's tail text


def _content_root(document: Any) -> tuple[Any, bool]:
    """The element holding the page's main content, and whether it is the whole body."""
    for path in ("//*[@role='main']", "//main"):
        found = document.xpath(path)
        if len(found) == 1:
            return found[0], False
    articles = document.xpath("//article")
    if len(articles) == 1:
        return articles[0], False
    body = document.find("body")
    return (body if body is not None else document), True


class _Reader:
    """Walks the content root once, in document order, emitting blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        """The section path: (level, heading); definitions' terms sit at level 7+."""
        self.seen: set[tuple[str, str]] = set()
        self.lead = ""
        """What leads the next paragraph: an admonition's title ("Note"), a ``dt``."""

    @property
    def section(self) -> str:
        return _section(self.headings)

    def emit(self, kind: BlockType, text: str) -> None:
        """Add a block unless it repeats one (normalised text and section) already read."""
        if kind == "code":
            text = "\n".join(line.rstrip() for line in text.strip("\n").splitlines())
        else:
            text = " ".join(text.split())
        if not text:
            return
        if kind == "text" and self.lead:
            text, self.lead = f"{self.lead}: {text}", ""
        key = (self.section, re.sub(r"\W+", " ", text).strip().lower())
        if kind != "heading" and key in self.seen:
            return
        self.seen.add(key)
        if kind == "text":
            self.blocks += [Block("text", p, section=self.section) for p in paragraphs(text)]
        else:
            self.blocks.append(Block(kind, text, section=self.section))

    def heading(self, level: int, text: str, *, block: bool = True) -> None:
        """Enter a section at ``level``; ``block``: also emit the heading as a block."""
        text = _GLYPHS.sub("", " ".join(text.split()))
        if not text:
            return
        self.headings = [(lvl, h) for lvl, h in self.headings if lvl < level] + [(level, text)]
        if block:
            self.emit("heading", text)

    def container(self, element: Any) -> None:
        """Read ``element``'s children: runs of inline text between its block children."""
        run = [element.text or ""]
        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in _BLOCK_TAGS or (tag and _holds_blocks(child)):
                self.flush(run)
                run = []
                self.block(child, tag)
            elif tag == "br":
                run.append(" ")
            elif tag:
                run.append(child.text_content())
            run.append(child.tail or "")
        self.flush(run)

    def flush(self, run: list[str]) -> None:
        self.emit("text", "".join(run))

    def block(self, element: Any, tag: str) -> None:
        """Read one block-level element."""
        if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
            self.heading(int(tag[1]), element.text_content())
        elif tag == "pre":
            self.emit("code", element.text_content())
        elif tag == "tr":
            cells = [" ".join(c.text_content().split()) for c in element if c.tag in ("td", "th")]
            self.emit("table", " | ".join(c for c in cells if c))
        elif tag == "img":
            alt = str(element.get("alt", "")).strip()
            if alt or element.get("src"):
                self.blocks.append(Block("image", alt, section=self.section,
                                         image_url=element.get("src"), image_caption=alt or None))  # fmt: skip
        elif tag == "dl":
            self.definitions(element)
        elif tag == "p" and "admonition-title" in str(element.get("class", "")).split():
            self.lead = " ".join(element.text_content().split())
        else:
            self.container(element)

    def definitions(self, dl: Any) -> None:
        """A definition list: each ``dt`` the last section step of its ``dd``'s blocks."""
        depth = 7 + sum(1 for lvl, _ in self.headings if lvl >= 7)
        outer = self.headings
        term = ""
        for child in dl:
            if child.tag == "dt":
                self.headings = outer
                term = _GLYPHS.sub("", " ".join(child.text_content().split())).rstrip(":")
                self.heading(depth, term, block=False)
            elif child.tag == "dd":
                self.lead = term
                self.container(child)
                self.lead = ""
            elif isinstance(child.tag, str):
                self.block(child, child.tag)
        self.headings = outer


def _holds_blocks(element: Any) -> bool:
    """Whether an inline element (an ``a`` around a ``div``…) holds block elements."""
    return any(isinstance(d.tag, str) and d.tag in _BLOCK_TAGS for d in element.iterdescendants())


def read_html(text: str, stem: str) -> ParsedDocument:
    """An HTML page as a ``ParsedDocument`` of its main content (see the module's rules).

    ``stem``: the file's name without suffix, the title when the page has none.

    Raises:
        DocumentError: lxml cannot parse the markup at all.
    """
    import lxml.html

    try:
        document = lxml.html.document_fromstring(text)
    except Exception as exc:  # lxml raises several types for broken markup
        raise DocumentError(f"the HTML cannot be parsed: {exc}") from None
    meta = {
        str(m.get("name", "")).lower(): str(m.get("content", ""))
        for m in document.xpath("//meta[@name and @content]")
    }
    title = " ".join((document.findtext(".//title") or "").split()) or stem
    root, whole_body = _content_root(document)
    _drop_boilerplate(root, whole_body)
    reader = _Reader()
    reader.container(root)
    keywords = [k.strip() for k in meta.get("keywords", "").split(",") if k.strip()]
    created = meta.get("date") or meta.get("dcterms.created") or None
    return ParsedDocument(
        title, "html", reader.blocks, "", meta.get("author") or None, created, keywords
    )
