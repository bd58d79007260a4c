"""Documents into blocks: PDF (pypdf), HTML (lxml, ``html.py``), Markdown, plain text.

A block is a paragraph-sized piece of text (or an image with its caption), with where
it came from: the page of a PDF, the heading path of an HTML or Markdown section.
Libraries: pypdf reads PDF text and metadata without native dependencies; lxml (already
in for the web tool) walks HTML; markdown-it-py (Rich's own Markdown parser) gives
CommonMark tokens. What cannot be read raises ``DocumentError`` with the reason.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "MAX_BLOCKS",
    "MAX_BYTES",
    "MAX_UNPACKED_BYTES",
    "Block",
    "DocumentError",
    "DocumentType",
    "ParsedDocument",
    "paragraphs",
    "parse_bytes",
]

MAX_BYTES = 50 * 1024 * 1024
"""Largest document read (50 MiB); a larger one is refused before it is read."""

MAX_BLOCKS = 20_000
"""Most blocks one document may have (about 20 MB of prose); more is refused."""

MAX_UNPACKED_BYTES = 200 * 1024 * 1024
"""Most bytes a DOCX's parts may unpack to (its zip's declared sizes, checked before
any part is read)."""

_PDF_STREAM_BYTES = 75_000_000
"""Most bytes one PDF stream may declare or inflate to, whatever its filter (pypdf's
limits, stated here rather than assumed)."""

BlockType = Literal["text", "heading", "table", "code", "image"]

DocumentType = Literal["pdf", "docx", "html", "markdown", "text", "note"]
"""What a document was read from (``note``: stored by the knowledge_store tool)."""

_BLOCK_CHARS = 1200
"""Longest block: a longer paragraph is cut at sentence ends."""


class DocumentError(ValueError):
    """A document that cannot be read, and why (encrypted, corrupt, empty, binary...)."""


@dataclass(frozen=True, slots=True)
class Block:
    """A piece of a document: what search returns and answers cite."""

    block_type: BlockType
    content_text: str
    page_number: int | None = None
    """1-based page of a PDF; None elsewhere."""
    section: str = ""
    """Heading path of HTML and Markdown ("Install > Linux")."""
    image_url: str | None = None
    """Where the image is: the page's own address for HTML and Markdown; for an image
    the document carries (PDF), the store sets ``/api/documents/<id>/images/<n>``."""
    image_caption: str | None = None
    image_data: bytes | None = field(default=None, repr=False)
    """The bytes of an image the document carries (PDF), stored with it."""
    image_media_type: str | None = None
    """Its media type, e.g. ``image/png``."""


@dataclass(slots=True)
class ParsedDocument:
    """A document's metadata and blocks."""

    title: str
    document_type: str
    """A ``DocumentType``: ``pdf``, ``docx``, ``html``, ``markdown``, ``text``, ``note``."""
    blocks: list[Block]
    content_hash: str
    """SHA-256 of the bytes: an unchanged file is not ingested again."""
    author: str | None = None
    created: str | None = None
    """ISO date of the document itself (PDF metadata, an HTML meta tag), if known."""
    keywords: list[str] = field(default_factory=list)


def parse_bytes(
    data: bytes, name: str, *, max_bytes: int = MAX_BYTES, max_blocks: int = MAX_BLOCKS
) -> ParsedDocument:
    """Parse a document's bytes; its kind comes from ``name``'s suffix and the content.

    A stranger's file may be built to exhaust the reader: run this through
    ``DocumentReader`` (a killable process with a deadline and a memory bound), not
    in the server's own process.

    Raises:
        DocumentError: too large, empty, encrypted or corrupt, binary under a text name,
            no readable text (an HTML page that is all script), an unknown kind, more
            than ``max_blocks`` blocks, a DOCX unpacking past ``MAX_UNPACKED_BYTES``.
    """
    if len(data) > max_bytes:
        raise DocumentError(f"{len(data) / 1e6:.0f} MB is over the {max_bytes / 1e6:.0f} MB limit")
    if not data.strip():
        raise DocumentError("the file is empty")
    digest = hashlib.sha256(data).hexdigest()
    suffix = Path(name).suffix.lower()
    stem = Path(name).stem or name
    if suffix == ".pdf" or data.startswith(b"%PDF-"):
        document = _pdf(data, stem)
    elif suffix == ".docx":
        document = _docx(data, stem)
    elif suffix in (".html", ".htm") or re.match(rb"\s*<(?:!doctype html|html)", data[:200], re.I):
        _need("lxml")
        from tooldeck.packs.knowledge.html import read_html

        document = read_html(_text(data, name), stem)
    elif suffix in (".md", ".markdown"):
        document = _markdown(_text(data, name), stem)
    elif suffix in (".txt", ".text", "") or suffix not in _BINARY:
        document = _plain(_text(data, name), stem)
    else:
        raise DocumentError(
            f"{suffix} files are not read; formats: PDF, DOCX, HTML, Markdown, text"
        )
    if not any(b.content_text.strip() for b in document.blocks):
        raise DocumentError("no readable text in the document")
    if len(document.blocks) > max_blocks:
        raise DocumentError(
            f"{name} has {len(document.blocks):,} blocks, over the {max_blocks:,} a document "
            "may have ([knowledge] max_blocks); split it"
        )
    document.content_hash = digest
    return document


_BINARY = frozenset({".png", ".jpg", ".jpeg", ".gif", ".zip", ".gz", ".exe", ".so", ".bin",
                     ".doc", ".xls", ".xlsx", ".ppt", ".pptx", ".odt"})  # fmt: skip


def _text(data: bytes, name: str) -> str:
    """``data`` as text (UTF-8, else charset detection), refusing binary content."""
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name} is binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        _need("charset_normalizer")
        from charset_normalizer import from_bytes

        best = from_bytes(data).best()
        if best is None:
            raise DocumentError(f"{name} is not text in any encoding I recognise") from None
        return str(best)


def _need(module: str) -> None:
    """Raise ``DocumentError`` naming the extra when a parsing library is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise DocumentError(f"reading this needs {module}: pip install 'tooldeck[knowledge]'")


def paragraphs(text: str) -> list[str]:
    """Paragraphs of ``text``, long ones cut at sentence ends near ``_BLOCK_CHARS``.

    Linear in the length of ``text`` (a 4 MB paragraph is cut by moving an index, not
    by copying what remains after each cut).
    """
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        start, end = 0, len(para)
        while end - start > _BLOCK_CHARS:
            cut = para.rfind(". ", start, start + _BLOCK_CHARS)
            cut = cut + 1 if cut - start > _BLOCK_CHARS // 3 else start + _BLOCK_CHARS
            out.append(para[start:cut].strip())
            start = cut + 1 if cut < end and para[cut] == " " else cut
        if start < end:
            out.append(para[start:].strip())
    return out


def _plain(text: str, stem: str) -> ParsedDocument:
    parts = paragraphs(text)
    title = parts[0][:120] if parts and len(parts[0]) <= 120 else stem
    return ParsedDocument(title, "text", [Block("text", p) for p in parts], "")


def _markdown(text: str, stem: str) -> ParsedDocument:
    _need("markdown_it")
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    title = ""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1])
            heading = tokens[i + 1].content.strip()
            path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, heading)]
            title = title or (heading if level == 1 else "")
            blocks.append(Block("heading", heading, section=_section(path)))
            i += 3
            continue
        if token.type == "inline" and token.content.strip():
            for child in token.children or []:
                if child.type == "image":
                    blocks.append(
                        Block(
                            "image",
                            child.content or str(child.attrs.get("alt", "")),
                            section=_section(path),
                            image_url=str(child.attrs.get("src", "")) or None,
                            image_caption=child.content or None,
                        )
                    )
            kind: BlockType = "table" if tokens[i - 1].type in ("th_open", "td_open") else "text"
            words = [c for c in token.children or [] if c.type not in ("image", "softbreak")]
            if words and any(c.content.strip() for c in words):  # not an image alone
                for para in paragraphs(token.content):
                    blocks.append(Block(kind, para, section=_section(path)))
        elif token.type in ("fence", "code_block") and token.content.strip():
            blocks.append(Block("code", token.content.strip(), section=_section(path)))
        i += 1
    return ParsedDocument(title or stem, "markdown", blocks, "")


def _section(path: list[tuple[int, str]]) -> str:
    return " > ".join(h for _, h in path)


_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
                ".gif": "image/gif", ".webp": "image/webp", ".tif": "image/tiff",
                ".tiff": "image/tiff", ".bmp": "image/bmp", ".jp2": "image/jp2"}  # fmt: skip

_MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Larger images in a PDF are left out (their page's text still counts)."""


def _pdf_images(page: Any, number: int) -> list[Block]:
    """The images of a PDF page as ``image`` blocks carrying their bytes.

    PDFs have no alt text: the caption says where the image is. An image pypdf cannot
    decode (an unusual filter, a broken stream) is skipped, not the document.
    """
    out = []
    try:
        images = list(page.images)
    except Exception:  # pypdf raises many kinds for odd image streams
        return []
    for index, image in enumerate(images, start=1):
        try:
            data, name = image.data, image.name
        except Exception:
            continue
        media = _IMAGE_TYPES.get(Path(name).suffix.lower())
        if media is None or not data or len(data) > _MAX_IMAGE_BYTES:
            continue
        caption = f"Image {index} on page {number}"
        out.append(Block("image", caption, page_number=number, image_caption=caption,
                         image_data=data, image_media_type=media))  # fmt: skip
    return out


def _docx(data: bytes, stem: str) -> ParsedDocument:
    """A Word document, read with python-docx.

    Paragraphs under their heading path, tables as ``table`` blocks (cells joined by
    `` | ``, a row a line), pictures as ``image`` blocks with their bytes and alt text,
    core properties as metadata.
    """
    import io
    import zipfile

    _need("docx")
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        unpacked = sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    except (zipfile.BadZipFile, ValueError) as exc:
        raise DocumentError(f"the DOCX is corrupt: {exc}") from None
    if unpacked > MAX_UNPACKED_BYTES:
        raise DocumentError(
            f"the DOCX unpacks to {unpacked / 1e6:,.0f} MB, over the "
            f"{MAX_UNPACKED_BYTES / 1e6:.0f} MB a document may (a zip bomb?)"
        )
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, SyntaxError) as exc:
        raise DocumentError(f"the DOCX is corrupt: {exc}") from None
    blocks: list[Block] = []
    path: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in item.rows]
            text = "\n".join(r for r in rows if r.strip(" |"))
            if text:
                blocks.append(Block("table", text, section=" > ".join(path)))
            continue
        assert isinstance(item, Paragraph)
        style = (item.style.name if item.style is not None else "") or ""
        heading = re.fullmatch(r"Heading (\d)", style)
        depth = int(heading.group(1)) if heading else 1 if style == "Title" else 0
        text = item.text.strip()
        if depth and text:
            del path[depth - 1 :]
            path.append(text)
            blocks.append(Block("heading", text, section=" > ".join(path)))
        elif text:
            blocks += [Block("text", p, section=" > ".join(path)) for p in paragraphs(text)]
        blocks += _docx_images(document, item, " > ".join(path))
    core = document.core_properties
    keywords = [k.strip() for k in re.split(r"[,;]", core.keywords or "") if k.strip()]
    return ParsedDocument(
        (core.title or "").strip() or stem,
        "docx",
        blocks,
        "",
        (core.author or "").strip() or None,
        core.created.date().isoformat() if core.created else None,
        keywords,
    )


def _docx_images(document: Any, paragraph: Any, section: str) -> list[Block]:
    """The pictures in a paragraph (``w:drawing`` with an embedded blip)."""
    out = []
    for drawing in paragraph._p.xpath(".//w:drawing"):
        described = drawing.xpath(".//wp:docPr/@descr") or drawing.xpath(".//wp:docPr/@name")
        for rid in drawing.xpath(".//a:blip/@r:embed"):
            part = document.part.related_parts.get(rid)
            media = getattr(part, "content_type", "")
            blob = getattr(part, "blob", b"")
            if not media.startswith("image/") or not blob or len(blob) > _MAX_IMAGE_BYTES:
                continue
            caption = str(described[0]).strip() if described else "Image"
            out.append(Block("image", caption, section=section, image_caption=caption,
                             image_data=blob, image_media_type=media))  # fmt: skip
    return out


def _pdf(data: bytes, stem: str) -> ParsedDocument:
    """A PDF under pypdf's stream limits, each stated (``_PDF_STREAM_BYTES``)."""
    _need("pypdf")
    from pypdf import apply_configuration

    most = _PDF_STREAM_BYTES
    with apply_configuration(
        maximum_declared_stream_length=most,
        zlib_maximum_output_length=most,
        lzw_maximum_output_length=most,
        run_length_maximum_output_length=most,
        jbig2_maximum_output_length=most,
        array_based_stream_maximum_output_length=most,
    ):
        return _pdf_document(data, stem)


def _pdf_document(data: bytes, stem: str) -> ParsedDocument:
    import io

    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise DocumentError("the PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
        info: dict[str, Any] = dict(reader.metadata or {})
    except DocumentError:
        raise
    except LimitReachedError as exc:
        raise DocumentError(f"the PDF inflates past a limit (a Flate bomb?): {exc}") from None
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentError(f"the PDF is corrupt: {exc}") from None
    blocks = []
    for number, text in enumerate(pages, start=1):
        blocks += [Block("text", para, page_number=number) for para in paragraphs(text)]
        blocks += _pdf_images(reader.pages[number - 1], number)
    created = info.get("/CreationDate")
    created_day = None
    if isinstance(created, str):
        day = re.match(r"D:(\d{4})(\d{2})(\d{2})", created)
        created_day = f"{day.group(1)}-{day.group(2)}-{day.group(3)}" if day else None
    keywords = [k.strip() for k in str(info.get("/Keywords") or "").split(",") if k.strip()]
    return ParsedDocument(
        str(info.get("/Title") or "").strip() or stem,
        "pdf",
        blocks,
        "",
        str(info.get("/Author") or "").strip() or None,
        created_day,
        keywords,
    )
