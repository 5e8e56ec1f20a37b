"""From a response body to the tree a browser would build: the binary-body check, the
parse (:func:`parse_html`), and the repair of paragraphs libxml2 leaves open
(:func:`close_paragraphs`).

Rules: a parse never fetches anything and never expands entities; a repair reshapes only the
tree it is given (the page model hands it a copy), and only where HTML's tree construction
would have closed a ``<p>``.
"""

from __future__ import annotations

import re

from lxml import etree
from lxml import html as lxml_html

from wisdom_scrapy.page.tags import BLOCK_TAGS

#: Start tags that close an open ``<p>`` in HTML's tree construction ("in body" insertion mode).
#: libxml2 knows only the HTML 4 ones, and only when the ``<p>`` is the current node, so it
#: leaves ``<p>text<figure>…`` or ``<p><span><h5>…`` nested where a browser ends the paragraph.
#: (The paragraph tags less the document, table-part and legend ones, plus ``search``.)
CLOSES_P: frozenset[str] = (
    BLOCK_TAGS - {"body", "caption", "html", "legend", "tbody", "tfoot", "thead", "tr"}
) | {"search"}
#: Elements that end the "button scope" in which such a start tag finds the open ``<p>`` (and
#: foreign content, where HTML's start tags do not apply).
_P_SCOPE: frozenset[str] = frozenset(
    {"applet", "button", "caption", "html", "marquee", "object", "table", "td", "th", "template",
     "svg", "math"}
)  # fmt: skip


#: libxml2's nesting limit with ``huge_tree``: at this depth it ends the whole document (the
#: deeper text and everything after it are lost). A tree that reaches it was cut there.
PARSER_MAX_DEPTH = 2048


# Leading bytes of binary formats servers send as text/html (WHATWG MIME Sniffing §6, §7.1).
_BINARY_SIGNATURES = (
    b"%PDF-", b"%!PS-Adobe-", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"\xff\xd8\xff",
    b"PK\x03\x04", b"\x1f\x8b\x08", b"Rar!\x1a\x07", b"7z\xbc\xaf\x27\x1c", b"OggS\x00",
    b"\x7fELF", b"\x00asm", b"wOFF", b"wOF2",
)  # fmt: skip
# WHATWG's "binary data bytes" (MIME Sniffing §3) as characters, NUL aside (parsers drop NULs).
_CONTROL_CHARS = re.compile("[\x01-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_BINARY_SAMPLE = 4096  # characters looked at (after the NULs are dropped)


def looks_binary(body: bytes, text: str | None = None) -> bool:
    """True for a body that is no text document whatever its Content-Type says (a PDF, an
    image, an archive or random bytes served as ``text/html``): it starts with the signature
    of a binary format, or more than 1 % of its first 4,096 characters (``text``, the decoded
    body, when given: UTF-16 text is no control characters; else the bytes) are control
    characters no text holds. Random bytes hold about 10 % of them (26 byte values of 256),
    text none but a stray one, so 1 % is ten times below the one and far above the other.
    """
    if body.lstrip(b"\t\n\x0c\r ")[:16].startswith(_BINARY_SIGNATURES):
        return True
    sample = (text if text is not None else body[: 4 * _BINARY_SAMPLE].decode("latin-1"))
    sample = sample[: 4 * _BINARY_SAMPLE].replace("\x00", "")[:_BINARY_SAMPLE]
    return len(_CONTROL_CHARS.findall(sample)) * 100 > len(sample)


def parse_html(
    html: str | bytes, url: str = "", *, encoding: str | None = None
) -> etree._Element | None:
    """Parse a page the way Scrapy/parsel does, or return None for a page without content.

    Bytes are decoded first with w3lib (BOM, then ``encoding`` — e.g. the HTTP header's charset —
    then the page's own ``<meta charset>``/XML declaration, then strict UTF-8, then windows-1252,
    the WHATWG default for undeclared legacy pages), so libxml2 always sees valid UTF-8: given
    invalid bytes in a declared encoding, libxml2 truncates the document instead.

    The parser is libxml2's HTML parser in recover mode with ``no_network`` (nothing is fetched)
    and no DTD/entity processing (an HTML parser knows only the fixed HTML entity set, so there is
    no entity expansion to abuse). ``huge_tree`` is on, as in parsel: without it libxml2 2.14
    silently drops everything after nesting depth 256, i.e. most of a page with many unclosed
    tags; with it the limit is 2048. NUL characters are removed (as parsel does).
    """
    if isinstance(html, bytes | bytearray | memoryview):
        html = _decode(bytes(html), encoding)
    text = html.replace("\x00", "").lstrip("\ufeff").strip()
    if not text:
        return None
    parser = lxml_html.HTMLParser(recover=True, encoding="utf-8", no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(text.encode("utf-8", "surrogatepass"), parser, base_url=url or None)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    return root


def _decode(body: bytes, encoding: str | None) -> str:
    from w3lib.encoding import html_to_unicode

    def fallback(data: bytes) -> str:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "cp1252"
        return "utf-8"

    header = f"text/html; charset={encoding}" if encoding else None
    try:
        return html_to_unicode(header, body, auto_detect_fun=fallback)[1]
    except LookupError:  # an unknown charset name in the header: ignore the header
        return html_to_unicode(None, body, auto_detect_fun=fallback)[1]


def close_paragraphs(root: etree._Element) -> bool:
    """Reshape ``root``'s tree as HTML's parsing rules build it: a ``<p>`` ends where a block
    start tag (``CLOSES_P``) opens inside it, and that block and everything after it up to
    the ``</p>`` follow the paragraph as its siblings, in document order. True if anything
    moved. (A browser also re-opens inline formatting elements cut by the close, and an
    orphan ``</p>`` makes an empty paragraph; neither carries text, so neither is modelled.)
    Not an HTML5 parser (issue 34): html5lib's paragraphs are the same on the 3 pages of the
    fixtures and ../shared/data that need a repair, but its parse costs 59 ms a page against
    0.03 ms for this check and repair (``python benchmarks/library_parts.py``); html5-parser,
    the C one, does not load beside lxml's wheels (another libxml2).
    """
    changed = False
    for p in list(root.iter("p")):
        if p.getparent() is None:
            continue  # the model's root: nothing to put its blocks beside
        block = _first_closer(p)
        if block is not None:
            _move_after(p, block)
            changed = True
    return changed


def _first_closer(p: etree._Element) -> etree._Element | None:
    """The first descendant of ``p`` whose start tag would close it (None if there is none)."""
    for el in p.iterdescendants():
        if not isinstance(el.tag, str) or el.tag not in CLOSES_P:
            continue
        up = el.getparent()
        while up is not p and up is not None and up.tag not in _P_SCOPE:
            up = up.getparent()
        if up is p:
            return el
    return None


def _move_after(p: etree._Element, block: etree._Element) -> None:
    """Move ``block``, its following siblings and those of each ancestor up to ``p`` (with the
    text between them) out of ``p``, right after it."""
    items: list[etree._Element | str] = []
    node, first = block, True
    while node is not p:
        parent = node.getparent()
        at = parent.index(node)
        if not first and node.tail:
            items.append(node.tail)
            node.tail = None
        items.extend(parent[at if first else at + 1 :])
        node, first = parent, False
    tail, p.tail = p.tail, None
    prev = p
    for item in items:
        if isinstance(item, str):
            prev.tail = (prev.tail or "") + item
        else:
            prev.addnext(item)  # the element's tail moves with it
            prev = item
    prev.tail = (prev.tail or "") + (tail or "") or None
