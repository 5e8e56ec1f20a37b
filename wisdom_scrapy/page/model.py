"""Page model: one traversal of an lxml tree → numpy arrays over its element nodes.

Every mining stage (WISDOM k-MIB and sibling merging, InfoDiscoverer blocks, SMG segmentation,
the site style tree) walks a :class:`PageModel` instead of the lxml tree, so the tree is visited
once per page, no stage needs Python recursion (broken pages nest thousands of levels deep), and
bottom-up aggregation (WISDOM's information coverage tree, §3.2.1) is a vectorised prefix-sum.

Node numbering
    Element nodes in document (pre-)order, ``0`` is the root passed in. Node ``i``'s subtree is the
    contiguous range ``i .. subtree_end[i] - 1``, so any additive feature ``f`` aggregates as
    ``F = cumsum(f); F_A[i] = F[subtree_end[i]] - F[i]`` (one vectorised pass, no reverse loop).
    Children: ``child_index[child_start[i]:child_start[i + 1]]`` (CSR, in document order).

How it is built (why it is fast)
    Building a Python proxy for each lxml node is the dominant cost, so the only per-node work is
    ``list(root.iter())`` plus C-level ``map`` calls (tag, text, tail, number of children); no
    Python bytecode runs per node (for parsel's private ``lxml.html`` parsers even lxml.html's
    Python class lookup is bypassed during the walk, see :func:`_all_nodes`). The tree shape
    comes from the pre-order child counts alone: with the Łukasiewicz path
    ``L[k] = 1 + Σ_{j<k} (len(node_j) − 1)``, which falls by at most one per step, node ``k``'s
    subtree ends at the first ``j > k`` with ``L[j] = L[k] − 1`` — found for all nodes at once
    with one (radix) sort and one ``searchsorted``. Depth and parent follow from the
    subtree ranges with a cumulative sum and another ``searchsorted``. Comments and processing
    instructions take part in this walk (they are children in lxml), then are dropped from the
    node arrays; their tails, which are real text of the parent, are kept.

Paragraphs as a browser closes them
    libxml2 leaves a block that starts inside an open ``<p>`` nested in it when the block is an
    HTML5 one (``<p>text<figure>…``, the code listings of Markdown renderers that omit
    ``</p>``) or opens below an inline element (``<p><span><h5>…``); a browser ends the
    paragraph there. :meth:`PageModel.from_tree` models such a page from a copy reshaped by
    HTML's rule (:func:`_close_paragraphs`), so no miner sees a listing inside a paragraph;
    the caller's tree is left as it is. Pages without the pattern cost one vectorised check.

Text and lengths (WISDOM §3.1)
    A node's *own text* is its ``.text`` plus the tails of its children. A length is the number of
    non-whitespace characters. WISDOM only says "length of the text"; counting characters after
    removing whitespace makes lengths independent of source indentation and additive over any
    split of the text (``<b>W</b>ISDOM`` and ``WISDOM`` both have length 6), so
    ``tlen[root] == len("".join(text_of(root).split()))`` exactly.
    ``alen`` (ALEN_A) is the length of text inside ``<a href>`` elements, ``clen = tlen − alen``
    (CLEN_A, "contexts"), ``tlen`` is TLEN_A, the innerText length of the subtree.

Non-content and dummy nodes
    Text inside ``head`` (including ``title``), ``script``, ``style``, ``noscript``, ``template``
    and ``iframe`` (fallback content a browser does not show) never counts: those elements and
    their descendants are ``hidden``. Comments and processing instructions are not nodes at all.
    ``dummy`` marks the nodes WISDOM §3.1.3 drops when computing SII over a node's children:
    hidden nodes and the layout-only void tags ``br``, ``wbr``, ``hr``, ``spacer``.
    (WISDOM's *other* notion of a dummy node, in DSTM/condensing, is feature-dependent — f_A = 0 —
    and is computed by the mining stages from ``alen``/``clen``.)

Terms
    Computed lazily (first use of ``term_ids``, ``vocab``, ``page_counts`` …) with the same rules
    as :func:`wisdom_scrapy.page.terms.count_terms`. Terms are stored grouped by owner node in node
    order: ``term_ids[term_start[i]:term_start[i + 1]]`` are node ``i``'s own terms and
    ``term_ids[term_start[i]:term_start[subtree_end[i]]]`` its subtree's, so WISDOM's CII (mean
    term weight of every subtree) is one prefix sum: :meth:`PageModel.subtree_term_mean`.
    Element boundaries are token boundaries (each text piece is tokenised on its own), which is
    how a DOM-node view attributes every term to exactly one node: ``page_counts()`` equals
    ``count_terms(model.texts())``.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections import Counter, defaultdict
from functools import cached_property, lru_cache
from itertools import chain, compress, count, repeat
from operator import attrgetter, is_not, methodcaller
from typing import TYPE_CHECKING, NamedTuple, cast
from urllib.parse import urldefrag, urljoin, urlsplit

import numpy as np
from lxml import etree
from lxml import html as lxml_html
from w3lib.url import safe_url_string

from wisdom_scrapy.page.terms import _TOKEN_RE, WORD_CACHE_SIZE, is_overlong, token_terms

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BLOCK_TAGS",
    "DUMMY_TAGS",
    "HIDDEN_TAGS",
    "MAX_LINK_CHARS",
    "PARSER_MAX_DEPTH",
    "VERBATIM_TAGS",
    "Link",
    "PageModel",
    "PageTooComplex",
    "looks_binary",
    "nearest_marked",
    "parse_html",
]

#: Elements whose text is never content; their whole subtree is ``hidden``.
HIDDEN_TAGS: frozenset[str] = frozenset(
    {"head", "script", "style", "noscript", "template", "iframe"}
)
#: Layout-only tags kept as nodes but ignored by SII (WISDOM §3.1.3), besides hidden nodes.
DUMMY_TAGS: frozenset[str] = frozenset({"br", "wbr", "hr", "spacer"})
#: Elements that start and end a paragraph in :meth:`PageModel.text_of`.
BLOCK_TAGS: frozenset[str] = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
        "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
        "listing", "main", "menu", "nav", "ol", "p", "plaintext", "pre", "section", "summary",
        "table", "tbody", "tfoot", "thead", "tr", "ul", "xmp",
    }
)  # fmt: skip
#: Elements separated from their neighbours by a space in :meth:`PageModel.text_of` (cells).
_SPACED_TAGS: frozenset[str] = frozenset({"td", "th", "option", "button", "input", "img"})
#: Elements whose text keeps its lines (:meth:`PageModel.text_of`): one listing, not paragraphs.
VERBATIM_TAGS: frozenset[str] = frozenset({"pre", "listing", "plaintext", "xmp"})
#: Start tags that close an open ``<p>`` in HTML's tree construction ("in body" insertion mode).
#: libxml2 knows only the HTML 4 ones, and only when the ``<p>`` is the current node, so it
#: leaves ``<p>text<figure>…`` or ``<p><span><h5>…`` nested where a browser ends the paragraph.
#: (The paragraph tags less the document, table-part and legend ones, plus ``search``.)
_CLOSES_P: frozenset[str] = (
    BLOCK_TAGS - {"body", "caption", "html", "legend", "tbody", "tfoot", "thead", "tr"}
) | {"search"}
#: Elements that end the "button scope" in which such a start tag finds the open ``<p>`` (and
#: foreign content, where HTML's start tags do not apply).
_P_SCOPE: frozenset[str] = frozenset(
    {"applet", "button", "caption", "html", "marquee", "object", "table", "td", "th", "template",
     "svg", "math"}
)  # fmt: skip
_LINK_SCHEMES = ("http://", "https://")
#: Longest link URL kept: Scrapy's default ``URLLENGTH_LIMIT`` (the old browsers' limit), so a
#: link a crawl would refuse to follow is no out-link of the page either. Longer ones are
#: dropped (:attr:`PageModel.overlong_links`; a crawl counts them).
MAX_LINK_CHARS = 2083
#: libxml2's nesting limit with ``huge_tree``: at this depth it ends the whole document (the
#: deeper text and everything after it are lost). A tree that reaches it was cut there.
PARSER_MAX_DEPTH = 2048

# text_of event codes
_SPACE, _LINE, _PARA, _PRE_START, _PRE_END = 1, 2, 3, 4, 5

_TAG = attrgetter("tag")
_TEXT = attrgetter("text")
_TAIL = attrgetter("tail")
_GET_HREF = methodcaller("get", "href")
_GET_REL = methodcaller("get", "rel")
#: ``rel`` link types of the next and previous document of a series (HTML §4.6.7.15)
_SERIES_RELS = frozenset({"next", "prev", "previous"})
# ASCII → lower-case letters and digits kept, NUL kept (piece separator), the rest → space
_ASCII_TOKEN_TABLE = str.maketrans(
    {c: chr(c).lower() if chr(c).isalnum() else "\x00" if c == 0 else " " for c in range(128)}
)


class Link(NamedTuple):
    """An out-link of a page: absolute URL (no fragment), anchor text, and the ``<a>`` node."""

    url: str
    text: str
    node: int


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


class PageTooComplex(ValueError):
    """A page above its budget of elements or distinct words (:meth:`PageModel.from_tree`): its
    model would cost seconds and hundreds of MB (a 9 MB page of distinct words, 500k nodes)."""


class PageModel:
    """The element nodes of one page as arrays (see the module docstring for the conventions).

    Attributes (all numpy arrays have one entry per node ``0 .. n-1`` unless said otherwise):

    ``tag_id`` (int32) indexes ``tag_names`` (lower-case local names; :attr:`tag` gives the
    strings). ``parent`` (int32, −1 for the root), ``depth`` (int32, root 0), ``subtree_end``
    (int32), ``child_start`` (n+1) / ``child_index`` (n−1) CSR children. ``own_len`` (int64):
    non-whitespace length of the node's own text; ``in_anchor`` (bool): own text is anchor text;
    ``tlen``, ``alen``, ``clen`` (int64): aggregated TLEN_A, ALEN_A, CLEN_A; ``is_anchor`` (bool):
    the node is an ``<a href>``; ``n_anchors`` (int32): ``<a href>`` nodes in the subtree;
    ``hidden`` (bool): text never counts; ``dummy`` (bool): ignored by SII.
    ``anchor_nodes`` (int32): the ``<a href>`` nodes in order. ``root``: the lxml element of
    node 0 (None for an empty model); ``root.iter(*tags)`` lists elements of some tags in node
    order without giving every node a proxy.
    """

    url: str
    keep_numbers: bool
    #: the page's budget of distinct words (``from_tree``'s ``max_nodes`` // 4); None: no bound
    max_words: int | None = None
    n: int
    tag_names: list[str]
    tag_id: NDArray[np.int32]
    parent: NDArray[np.int32]
    depth: NDArray[np.int32]
    subtree_end: NDArray[np.int32]
    own_len: NDArray[np.int64]
    in_anchor: NDArray[np.bool_]
    is_anchor: NDArray[np.bool_]
    hidden: NDArray[np.bool_]
    dummy: NDArray[np.bool_]
    tlen: NDArray[np.int64]
    alen: NDArray[np.int64]
    clen: NDArray[np.int64]
    n_anchors: NDArray[np.int32]
    anchor_nodes: NDArray[np.int32]
    # private state for the lazy queries; positions index all lxml nodes (comments included)
    _node_list: list[etree._Element] | None
    root: etree._Element | None
    _root: etree._Element | None
    _tag_code: dict[str, int]
    _hrefs: list[str]
    _series: frozenset[int]
    _texts: list[str | None]
    _tails: list[str | None]
    _pieces: list[str]
    _piece_len: NDArray[np.int64]
    _piece_owner: NDArray[np.intp]
    _piece_pos: NDArray[np.intp]
    _piece_tail: NDArray[np.bool_]
    _joined: str
    _end_all: NDArray[np.intp]
    _pos_tid: NDArray[np.int32]
    _hidden_all: NDArray[np.bool_]
    _el_pos: NDArray[np.intp]
    _overlong_tokens: int
    _overlong_links: int

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_html(
        cls,
        html: str | bytes,
        url: str,
        *,
        encoding: str | None = None,
        keep_numbers: bool = False,
    ) -> PageModel:
        """Parse ``html`` with :func:`parse_html` and model it; no content → an empty model."""
        root = parse_html(html, url, encoding=encoding)
        if root is None:
            return cls.empty(url, keep_numbers=keep_numbers)
        return cls.from_tree(root, url, keep_numbers=keep_numbers)

    @classmethod
    def empty(cls, url: str, *, keep_numbers: bool = False) -> PageModel:
        """A model with no nodes (empty or unparsable page): every query answers "nothing"."""
        return cls._build([], url, keep_numbers)

    @classmethod
    def from_tree(
        cls,
        root: etree._Element | etree._ElementTree,
        url: str,
        *,
        keep_numbers: bool = False,
        max_nodes: int | None = None,
    ) -> PageModel:
        """Model the subtree of ``root`` (e.g. Scrapy's ``response.selector.root``).

        ``max_nodes`` bounds the page's cost: a tree of more elements raises
        :class:`PageTooComplex` before it is modelled (counted in C), and so does reading the
        terms of a page of more than ``max_nodes // 4`` distinct words, numbers aside
        (:attr:`max_words`; a distinct word costs about four elements' time: its terms are
        derived once each).

        The tree is referenced, not copied: do not modify it while the model is in use
        (:meth:`text_of`, :meth:`html_of`, :meth:`links` and :meth:`element` read it lazily).
        Only a page with a block inside a paragraph is copied and reshaped first (module
        docstring); :meth:`element` then returns the copy's elements.
        ``url`` is the page URL links are resolved against (with the document's ``<base href>``).
        """
        if isinstance(root, etree._ElementTree):
            root = root.getroot()
        if root is None or not isinstance(root.tag, str):
            return cls.empty(url, keep_numbers=keep_numbers)
        if max_nodes is not None:
            elements = int(root.xpath("count(descendant-or-self::*)"))
            if elements > max_nodes:
                raise PageTooComplex(f"{elements:,} elements > {max_nodes:,}")
        model = cls._from_element(root, url, keep_numbers)
        if model._block_in_paragraph():
            # model the page as a browser builds it, from a copy: the caller's tree stays as is
            base_url = model.base_url
            shaped = copy.deepcopy(root)
            if _close_paragraphs(shaped):
                model = cls._from_element(shaped, url, keep_numbers)
                model.base_url = base_url  # the copy has no document around it (<base href>)
        if max_nodes is not None:
            model.max_words = max_nodes // 4
        return model

    @classmethod
    def _from_element(cls, root: etree._Element, url: str, keep_numbers: bool) -> PageModel:
        nodes, plain = _all_nodes(root)
        model = cls._build(nodes, url, keep_numbers)
        if plain:  # let the plain proxies go: element() re-creates the tree's own ones lazily
            model._node_list = None
        return model

    def _block_in_paragraph(self) -> bool:
        """Whether some ``<p>`` holds an element that would have closed it in a browser."""
        p = self._tag_code.get("p")
        closers = [self._tag_code[t] for t in _CLOSES_P if t in self._tag_code]
        if p is None or not closers:
            return False
        paras = np.flatnonzero(self.tag_id == p)
        inside = _range_mask(paras + 1, self.subtree_end[paras], self.n)
        return bool((inside & np.isin(self.tag_id, closers)).any())

    @classmethod
    def _build(cls, nodes: list[etree._Element], url: str, keep_numbers: bool) -> PageModel:
        """Fill every array from ``nodes`` = ``list(root.iter())`` (all lxml nodes, pre-order).

        "Positions" index ``nodes`` (elements, comments and PIs); "nodes" index elements only.
        """
        model = cls.__new__(cls)
        model.url = url
        model.keep_numbers = keep_numbers
        model._node_list = nodes
        model.root = model._root = nodes[0] if nodes else None
        N = len(nodes)

        # --- the per-node reads, all C-level: tag, number of children, text, tail
        tag_codes: defaultdict[object, int] = defaultdict(count().__next__)
        pos_code = np.fromiter(map(tag_codes.__getitem__, map(_TAG, nodes)), np.intp, N)
        nchild = np.fromiter(map(len, nodes), np.intp, N)
        texts: list[str | None] = list(map(_TEXT, nodes))
        tails: list[str | None] = list(map(_TAIL, nodes))

        # --- per distinct tag (not per node): element tag ids, hidden / dummy / anchor tags
        name_code: dict[str, int] = {}
        ncodes = len(tag_codes) + 1  # + a spare code, so that code tables are never empty
        code_tid = np.full(ncodes, -1, dtype=np.int32)
        code_hidden = np.zeros(ncodes, dtype=bool)
        code_dummy = np.zeros(ncodes, dtype=bool)
        for code, key in enumerate(tag_codes):  # insertion order == code order
            if isinstance(key, str):
                name = _local_name(key)
                code_tid[code] = name_code.setdefault(name, len(name_code))
                code_hidden[code] = name in HIDDEN_TAGS
                code_dummy[code] = name in DUMMY_TAGS
        model.tag_names = list(name_code)
        model._tag_code = name_code
        pos_tid = code_tid[pos_code]
        pos_is_el = pos_tid >= 0

        # --- tree shape over all positions (module docstring), then restricted to elements
        end_all = _subtree_ends(nchild)
        depth_all = _depths(end_all)
        parent_all = _parents(depth_all)
        el_pos = np.flatnonzero(pos_is_el)
        n = len(el_pos)
        model.n = n
        el_before = np.zeros(N + 1, dtype=np.intp)
        np.cumsum(pos_is_el, out=el_before[1:])
        node_of_pos = el_before[:N]  # the node index of an element position
        subtree_end = el_before[end_all[el_pos]]
        parent = node_of_pos[parent_all[el_pos]]
        if n:
            parent[0] = -1
        model.subtree_end = subtree_end.astype(np.int32)
        model.parent = parent.astype(np.int32)
        model.depth = depth_all[el_pos].astype(np.int32)  # comments are never ancestors
        model.tag_id = pos_tid[el_pos]

        # --- hidden (text never counts) and dummy (ignored by SII)
        hidden_starts = np.flatnonzero(code_hidden[pos_code])
        hidden_all = _range_mask(hidden_starts, end_all[hidden_starts], N)
        model.hidden = hidden_all[el_pos]
        model.dummy = model.hidden | code_dummy[pos_code[el_pos]]

        # --- anchors: <a href> (any href, javascript: included: it is still a link to a reader)
        a_tid = name_code.get("a", -2)
        a_nodes = np.flatnonzero(model.tag_id == a_tid)
        anchors = list(map(nodes.__getitem__, el_pos[a_nodes].tolist()))
        hrefs = list(map(_GET_HREF, anchors))
        has_href = np.fromiter(map(is_not, hrefs, repeat(None)), bool, len(hrefs))
        rels = list(map(_GET_REL, anchors))
        model._series = frozenset(
            node for node, rel in zip(a_nodes.tolist(), rels, strict=True)
            if rel and not _SERIES_RELS.isdisjoint(rel.lower().split()))
        model._hrefs = list(compress(hrefs, has_href))
        model.anchor_nodes = a_nodes[has_href].astype(np.int32)
        model.is_anchor = np.zeros(n, dtype=bool)
        model.is_anchor[model.anchor_nodes] = True
        model.in_anchor = _range_mask(model.anchor_nodes, subtree_end[model.anchor_nodes], n)

        # --- visible text pieces: text(p) belongs to p, tail(p) to p's parent element
        text_mask = np.fromiter(map(bool, texts), bool, N)
        text_mask &= pos_is_el
        text_mask &= ~hidden_all
        tail_mask = np.fromiter(map(bool, tails), bool, N)
        if N:
            tail_mask[0] = False  # the root's tail is outside the page
        tail_pos = np.flatnonzero(tail_mask)
        tail_owner = node_of_pos[parent_all[tail_pos]]
        tail_visible = ~model.hidden[tail_owner]
        tail_mask[tail_pos] = tail_visible
        pieces = cast("list[str]", list(compress(texts, text_mask)))
        pieces += cast("list[str]", compress(tails, tail_mask))
        piece_owner = np.concatenate([node_of_pos[text_mask], tail_owner[tail_visible]])
        model._piece_pos = np.concatenate([np.flatnonzero(text_mask), tail_pos[tail_visible]])
        model._piece_tail = np.arange(len(pieces)) >= int(text_mask.sum())
        model._joined, model._piece_len = _joined_nonspace_len(pieces)
        model.own_len = np.bincount(piece_owner, weights=model._piece_len, minlength=n).astype(
            np.int64
        )

        # --- information coverage tree (WISDOM §3.2.1): subtree sums as prefix-sum differences
        model.tlen = _subtree_sums(model.own_len, subtree_end)
        model.alen = _subtree_sums(np.where(model.in_anchor, model.own_len, 0), subtree_end)
        model.clen = model.tlen - model.alen
        model.n_anchors = _subtree_sums(model.is_anchor, subtree_end).astype(np.int32)

        # kept for the lazy queries (terms, text_of, html_of, links, paths)
        model._texts = texts
        model._tails = tails
        model._pieces = pieces
        model._piece_owner = piece_owner
        model._end_all = end_all
        model._pos_tid = pos_tid
        model._hidden_all = hidden_all
        model._el_pos = el_pos
        return model

    @cached_property
    def child_start(self) -> NDArray[np.int32]:
        """CSR offsets (n+1): node i's children are
        ``child_index[child_start[i]:child_start[i + 1]]``."""
        return self._children[0]

    @cached_property
    def child_index(self) -> NDArray[np.int32]:
        """CSR child lists, concatenated in node order (each list in document order)."""
        return self._children[1]

    @cached_property
    def _children(self) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
        return _children(self.parent)

    # ---------------------------------------------------------------- basic access

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"<PageModel {self.url!r} nodes={self.n} tlen={self.tlen[0] if self.n else 0}>"

    @cached_property
    def tag(self) -> NDArray[np.object_]:
        """Tag name of every node (an object array of interned strings)."""
        return np.array(self.tag_names, dtype=object)[self.tag_id]

    def tag_code(self, name: str) -> int:
        """The ``tag_id`` of a lower-case tag name on this page, −1 if the page has none."""
        return self._tag_code.get(name, -1)

    def subtree_mask(self, roots: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Per node: it lies in the sub-tree of a node marked in ``roots`` (roots included)."""
        starts = np.flatnonzero(roots)
        return _range_mask(starts, self.subtree_end[starts], self.n)

    def lca(self, nodes: Sequence[int] | NDArray[np.integer]) -> int:
        """Lowest common ancestor-or-self of ``nodes`` (not empty): the deepest node whose
        sub-tree holds the first and the last of them in document order."""
        at = np.asarray(nodes)
        lo, hi = int(at.min()), int(at.max())
        a = lo
        while not (a <= hi < self.subtree_end[a]):
            a = int(self.parent[a])
        return a

    def tag_mask(self, names: Collection[str]) -> NDArray[np.bool_]:
        """Per node: its lower-case tag name is in ``names`` (one look-up per tag name)."""
        k = len(self.tag_names)
        if not k:
            return np.zeros(self.n, bool)
        return np.fromiter(map(names.__contains__, self.tag_names), bool, k)[self.tag_id]

    def children(self, node: int) -> NDArray[np.int32]:
        """Child nodes of ``node`` in document order."""
        return self.child_index[self.child_start[node] : self.child_start[node + 1]]

    def element(self, node: int) -> etree._Element:
        """The lxml element of ``node`` (the tree passed to :meth:`from_tree`).

        Found by its :meth:`path` with one XPath query when the node list is not at hand:
        listing every node again would create a Python proxy (and run lxml.html's Python class
        lookup) for each node of the page. A step without an index is the first of its tag
        (``p`` ≡ ``p[1]``, :meth:`path`), so the query names it so; what it finds is taken
        only at the node's own place in document order (counted in C), else the list decides.
        """
        if self._node_list is None and self._root is not None:
            steps = self.path(node).split("/")
            # Tag names come from the page: only plain names may enter the expression (a
            # recovered "<div=x>" would turn it into a comparison, "<a(b)>" into a call).
            if all(map(_PLAIN_STEP.fullmatch, steps)):
                expr = "self::" + steps[0].split("[", 1)[0] + "".join(
                    "/" + (s if s.endswith("]") else s + "[1]") for s in steps[1:])
                try:
                    found = self._root.xpath(expr)
                except etree.XPathError:  # a tag name XPath cannot spell (o:p, …)
                    found = []
                if (isinstance(found, list) and len(found) == 1
                        and _elements_before(found[0]) - self._root_before == node):
                    return found[0]
        return self._nodes[self._el_pos[node]]

    @cached_property
    def _root_before(self) -> int:
        """Elements of the document before the model's root (0 for a whole page)."""
        return _elements_before(self._root) if self._root is not None else 0

    def attribute_values(self, name: str) -> list[str | None]:
        """The value of attribute ``name`` of every node (None where it is absent), in node
        order (see :meth:`attributes`)."""
        return self.attributes((name,))[name]

    def attributes(self, names: Sequence[str]) -> dict[str, list[str | None]]:
        """For each of ``names``, the attribute's value on every node (None where absent), in
        node order: one listing of the page's elements and one C-level ``map`` per name (a
        presentation style needs the display attributes of every node, so this beats
        :meth:`element` per node). The listing uses plain proxies where safe
        (:func:`_all_nodes`), read and dropped here: lxml.html's per-node class lookup would
        cost more than the reads."""
        if self.n == 0:
            return {name: [] for name in names}
        nodes = self._node_list
        if nodes is None:
            nodes = _all_nodes(self._root)[0]
        out = {}
        for name in names:
            values = np.array(list(map(methodcaller("get", name), nodes)), dtype=object)
            out[name] = values[self._el_pos].tolist()
        return out

    @property
    def _nodes(self) -> list[etree._Element]:
        """All lxml nodes in position order (re-listed from the tree when :func:`_all_nodes`
        built the model from plain proxies, so callers get the tree's own element classes)."""
        if self._node_list is None:
            self._node_list = list(self._root.iter()) if self._root is not None else []
        return self._node_list

    # ---------------------------------------------------------------- terms (lazy)

    @cached_property
    def _terms(self) -> tuple[list[str], NDArray[np.int32], NDArray[np.int64]]:
        """Terms of every visible piece, exactly as :func:`~wisdom_scrapy.page.terms.count_terms`
        finds them, grouped by owner node (then piece order).

        Tokenising dominates, so: ASCII pieces (most of them) are lower-cased and split in C
        with one ``str.translate`` + ``str.split`` over their joined text (NFKC is the identity
        on ASCII, and ``text._TOKEN_RE`` on ASCII matches exactly the runs of letters and
        digits); the other pieces are NFKC-normalised together and tokenised with
        ``_TOKEN_RE``. Each distinct token is turned into terms once (cached across pages).
        """
        n = self.n
        pieces = self._pieces
        k = len(pieces)
        use = self._piece_len > 0
        is_ascii = np.fromiter(map(str.isascii, pieces), bool, k)
        asc = use & is_ascii
        non = use & ~is_ascii
        asc_idx = np.flatnonzero(asc)
        non_idx = np.flatnonzero(non)
        # ASCII pieces: NUL-separated, translated (lower-case; non-alphanumerics → space), split
        tokens = (
            "\x00".join(compress(pieces, asc))
            .translate(_ASCII_TOKEN_TABLE)
            .replace("\x00", " \x00 ")
            .split()
            if len(asc_idx)
            else []
        )
        n_ascii_tokens = len(tokens)
        # other pieces: one NFKC + lower over their joined text (NUL is a starter that composes
        # with nothing and is not cased, so this equals normalising each piece alone), split at
        # whitespace (never inside a token), each distinct word tokenised once (cached)
        if len(non_idx):
            joined = unicodedata.normalize("NFKC", "\x00".join(compress(pieces, non))).lower()
            words = joined.replace("\x00", " \x00 ").split()
            tokens += chain.from_iterable(map(_word_tokens, words))
        self._overlong_tokens = 0
        if not tokens:
            return [], np.zeros(0, np.int32), np.zeros(n + 1, np.int64)
        distinct = dict.fromkeys(tokens)
        if self.max_words is not None and len(distinct) > self.max_words:
            # numbers are cheap (no stemming): only words count, and only on a page this wide
            n_words = sum(1 for tok in distinct if not tok.isdigit())
            if n_words > self.max_words:
                raise PageTooComplex(f"{n_words:,} distinct words > {self.max_words:,}")
        for code, tok in enumerate(distinct):
            distinct[tok] = code
        occ = np.fromiter(map(distinct.__getitem__, tokens), np.int64, len(tokens))
        # the piece of every token occurrence: count the NUL markers before it, per group
        marker = occ == distinct.get("\x00", -1)
        keep = ~marker
        na = n_ascii_tokens
        occ_piece = np.concatenate(
            [
                asc_idx[np.cumsum(marker[:na])[keep[:na]]],
                non_idx[np.cumsum(marker[na:])[keep[na:]]],
            ]
        )
        occ = occ[keep]
        overlong = np.fromiter(map(is_overlong, distinct), bool, len(distinct))
        self._overlong_tokens = int(overlong[occ].sum())
        occ_owner = self._piece_owner[occ_piece]
        order = np.lexsort((occ_piece, occ_owner))
        occ = occ[order]
        occ_owner = occ_owner[order]
        # distinct token → its 0, 1 or (Chinese) several terms, as page-local term ids
        # (an overlong token is no term, and is kept out of the caches: it may be megabytes)
        term_tuples = [() if too_long else _token_terms(token, self.keep_numbers)
                       for token, too_long in zip(distinct, overlong.tolist(), strict=True)]
        tt_len = np.fromiter(map(len, term_tuples), np.int64, len(term_tuples))
        flat_terms = list(chain.from_iterable(term_tuples))
        vocab = dict.fromkeys(flat_terms)
        for code, term in enumerate(vocab):
            vocab[term] = code
        flat_ids = np.fromiter(map(vocab.__getitem__, flat_terms), np.int32, len(flat_terms))
        tt_start = np.zeros(len(tt_len) + 1, np.int64)
        np.cumsum(tt_len, out=tt_start[1:])
        # expand every occurrence into its terms (order kept)
        occ_n = tt_len[occ]
        total = int(occ_n.sum())
        occ_first = np.cumsum(occ_n) - occ_n
        within = np.arange(total) - np.repeat(occ_first, occ_n)
        term_ids = flat_ids[np.repeat(tt_start[occ], occ_n) + within]
        term_start = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(np.repeat(occ_owner, occ_n), minlength=n), out=term_start[1:])
        return list(vocab), term_ids, term_start

    @property
    def vocab(self) -> list[str]:
        """Page-local term vocabulary: ``vocab[term_id]`` is the term (see ``page/terms.py``)."""
        return self._terms[0]

    @property
    def term_ids(self) -> NDArray[np.int32]:
        """Term ids of the page grouped by owner node in node order (see ``term_start``)."""
        return self._terms[1]

    @property
    def term_start(self) -> NDArray[np.int64]:
        """Offsets (n+1): node i's own terms are ``term_ids[term_start[i]:term_start[i+1]]``,
        its subtree's are ``term_ids[term_start[i]:term_start[subtree_end[i]]]``."""
        return self._terms[2]

    def node_terms(self, node: int, *, subtree: bool = False) -> list[str]:
        """The terms of ``node``'s own text (or of its whole subtree), as strings."""
        start = self.term_start[node]
        stop = self.term_start[self.subtree_end[node] if subtree else node + 1]
        vocab = self.vocab
        return [vocab[t] for t in self.term_ids[start:stop].tolist()]

    @property
    def overlong_tokens(self) -> int:
        """Word and number occurrences dropped for being longer than
        :data:`~wisdom_scrapy.page.terms.MAX_TERM_CHARS` (encoded blobs, not words)."""
        self._terms  # noqa: B018  (computed with the terms)
        return self._overlong_tokens

    @property
    def at_depth_limit(self) -> bool:
        """True when the tree reaches :data:`PARSER_MAX_DEPTH`: the parser stopped there and
        the page's deeper text, and all text after it, is missing. (A page nested exactly to
        the limit, with nothing lost, looks the same: the tree cannot tell them apart.)"""
        if self.n == 0 or self.root is None:
            return False
        above = sum(1 for _ in self.root.iterancestors())
        return int(self.depth.max()) + above >= PARSER_MAX_DEPTH - 1

    def page_counts(self) -> Counter[str]:
        """Term frequencies of the whole visible page — what the term-entropy store adds.

        Equal to ``count_terms(self.texts(), keep_numbers=self.keep_numbers)``.
        """
        vocab, term_ids, _ = self._terms
        freq = np.bincount(term_ids, minlength=len(vocab)).tolist()
        return Counter(dict(zip(vocab, freq, strict=True)))

    def subtree_term_sums(
        self, weights: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """For every node: (Σ ``weights[term]`` over the subtree's terms, number of those terms).

        ``weights`` has one value per ``vocab`` entry (e.g. WISDOM's W = 1 − entropy). One
        prefix sum over ``term_ids``, so all n subtrees cost O(terms + n).
        """
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(self.vocab),):
            raise ValueError(f"weights must have one value per vocab term ({len(self.vocab)})")
        csum = np.zeros(len(self.term_ids) + 1, np.float64)
        np.cumsum(w[self.term_ids], out=csum[1:])
        lo = self.term_start[:-1]
        hi = self.term_start[self.subtree_end]
        return csum[hi] - csum[lo], hi - lo

    def subtree_term_mean(self, weights: ArrayLike, *, empty: float = 0.0) -> NDArray[np.float64]:
        """WISDOM's CII for every node (§3.1.1): mean term weight over the subtree's innerText.

        Nodes whose subtree has no term get ``empty`` (0: no content carries no information).
        """
        sums, counts = self.subtree_term_sums(weights)
        out = np.full(self.n, empty, dtype=np.float64)
        np.divide(sums, counts, out=out, where=counts > 0)
        return out

    def texts(self) -> list[str]:
        """The visible text pieces (``.text``/``.tail`` strings, raw), grouped by owner node."""
        order = np.argsort(self._piece_owner, kind="stable").tolist()
        pieces = self._pieces
        return [pieces[k] for k in order]

    # ---------------------------------------------------------------- text and html

    def own_text(self, node: int) -> str:
        """Whitespace-normalised text directly in ``node`` (its text and its children's tails)."""
        if self.hidden[node]:
            return ""
        p = int(self._el_pos[node])
        end = self._end_list
        parts = [self._texts[p] or ""]
        q, stop = p + 1, end[p]
        while q < stop:
            parts.append(self._tails[q] or "")
            q = end[q]
        return " ".join(" ".join(parts).split())

    @cached_property
    def _end_list(self) -> list[int]:
        return self._end_all.tolist()

    @cached_property
    def _pos_kind(self) -> list[int]:
        """Per position: how :meth:`text_of` separates it (0 inline, or an event code): by its
        tag, or as a box where the page's own CSS displays an inline element as one."""
        kind_of_tid = [_tag_kind(name) for name in self.tag_names]
        kinds = np.array([*kind_of_tid, 0], dtype=np.int8)  # −1 (non-element) → 0
        out = kinds[self._pos_tid].tolist()
        for pos, kind in self._css_boxes.items():
            out[pos] = max(out[pos], kind)
        return out

    @cached_property
    def _css_boxes(self) -> dict[int, int]:
        """Positions the page's own CSS (``<style>`` sheets and ``style`` attributes) displays
        as a box: ``_PARA`` for a block-level box, ``_SPACE`` for an inline box (inline-block,
        table cell) or an item of a flex or grid container. A browser separates such boxes
        (``<span class=label>Advertisement</span><a>Spring sale</a>`` with ``.label
        {display:block}`` reads "Advertisement / Spring sale"); tags alone glue them.

        The cascade is HTML's: the winning ``display`` of an element is the one of highest
        (``!important``, specificity, order), a ``style`` attribute above any selector.
        Rules in ``@media`` and other at-rules, and selectors with pseudo-classes or
        pseudo-elements, do not apply to the page as first shown and are skipped. A sheet
        serves a whole site, so a rule is only evaluated when its subject (tag, classes, ids)
        is on an element of this page whose separation it can change (:meth:`_css_matches`).
        """
        root = self._root
        if root is None:
            return {}
        style = self._tag_code.get("style", -2)
        sheets = [self._texts[p] or "" for p in np.flatnonzero(self._pos_tid == style).tolist()]
        rules = [r for sheet in sheets if "display" in sheet for r in _display_rules(sheet)]
        styled = _STYLED(root)
        if not rules and not styled:
            return {}
        best: dict[int, tuple[tuple[int, ...], str]] = {}
        for order, (node, selector, value, important) in enumerate(self._css_matches(rules)):
            key = (important, 0, *selector.specificity, order)
            if node not in best or best[node][0] < key:
                best[node] = (key, value)
        if styled:
            where = self._element_nodes
            for el in styled:
                display, weight = _inline_display(el.get("style") or "")
                at = where.get(el)
                key = (weight, 1, 0, 0, 0, 0)  # above every selector's
                if display and at is not None and (at not in best or best[at][0] < key):
                    best[at] = (key, display)
        boxes: dict[int, int] = {}
        containers = [i for i, (_, v) in best.items() if v in _CONTAINER_DISPLAY]
        for i in containers:  # flex and grid items are boxes whatever their own display
            for kid in self.children(i).tolist():
                boxes[kid] = _SPACE
        for i, (_, value) in best.items():
            kind = _DISPLAY_KIND.get(value, 0)
            if kind:
                boxes[i] = max(boxes.get(i, 0), kind)
            elif value in _NOT_A_BOX:
                boxes.pop(i, None)
        # a box only adds a separation, never removes one (nor turns a <br> or <pre> into one)
        tag_kind = [_tag_kind(name) for name in self.tag_names]
        tids, el_pos = self._tid_list, self._el_pos
        return {
            int(el_pos[i]): kind
            for i, kind in boxes.items()
            if tag_kind[tids[i]] in (0, _SPACE) and kind > tag_kind[tids[i]]
        }

    def _css_matches(self, rules: list[_Rule]) -> list[tuple[int, _Selector, str, int]]:
        """(node, selector, value, important) for every node a rule applies to, in rule order.

        Only nodes whose separation the value can change count: inline elements with text,
        or for a flex or grid container the parents of such elements. Selectors of compounds
        (tag, classes, ids) joined by descendant and child combinators are matched over the
        page arrays (:class:`_PageIndex`); others are evaluated as XPath, and only when their
        subject's classes and ids are on the page.
        """
        attrs = self.attributes(("class", "id"))
        names: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
        for name in ("class", "id"):
            for i, v in enumerate(attrs[name]):
                if v:
                    for token in v.split() if name == "class" else (v,):
                        names[name, token].append(i)
        page = _PageIndex(self, names)
        tag_kind = np.array([_tag_kind(name) for name in self.tag_names], dtype=np.int8)
        inline = np.isin(tag_kind[self.tag_id], (0, _SPACE)) & (self.tlen > 0) & ~self.hidden
        parents = np.zeros(self.n, dtype=bool)
        parents[self.parent[np.flatnonzero(inline)]] = True
        out: list[tuple[int, _Selector, str, int]] = []
        for text, value, important in rules:
            # most rules of a site's sheet name classes this page lacks: no parse for them
            subject = re.split(r"[\s>+~]+", text)[-1]
            if any(
                ("class" if mark == "." else "id", name) not in names
                for mark, name in _SUBJECT_NAMES.findall(subject)
            ):
                continue
            sel = _css_selector(text)
            if sel is None:
                continue
            pool = parents if value in _CONTAINER_DISPLAY else inline
            if sel.chain is not None:
                found = page.matching(sel.chain)
            else:
                found = page.carrying(sel.subject)
                if found is not None and (found & pool).any():
                    found = self._xpath_matches(sel.text)
            if found is not None:
                hit = np.flatnonzero(found & pool).tolist()
                out.extend((i, sel, value, important) for i in hit)
        return out

    def _xpath_matches(self, selector: str) -> NDArray[np.bool_] | None:
        """Node mask of the elements a CSS selector's XPath finds (None if it has none)."""
        xpath = _css_xpath(selector)
        if xpath is None or self._root is None:
            return None
        where = self._element_nodes
        found = np.zeros(self.n, dtype=bool)
        found[[i for i in map(where.get, xpath(self._root)) if i is not None]] = True
        return found

    @cached_property
    def _element_nodes(self) -> dict[etree._Element, int]:
        """Element → node index, for the results of an XPath query on the tree."""
        nodes = self._nodes
        return {nodes[p]: i for i, p in enumerate(self._el_pos.tolist())}

    @cached_property
    def _child_index(self) -> tuple[list[int], list[int]]:
        """Per position: its parent position and its index among the parent's children
        (comments and processing instructions included, as lxml indexes children)."""
        parent = _parents(_depths(self._end_all))
        n = len(parent)
        order = np.argsort(parent, kind="stable")
        grouped = parent[order]
        new = np.ones(n, dtype=bool)
        new[1:] = grouped[1:] != grouped[:-1]
        first = np.maximum.accumulate(np.where(new, np.arange(n), 0))
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n) - first
        return parent.tolist(), rank.tolist()

    @cached_property
    def _skip_pos(self) -> list[bool]:
        """Per position: no text of its own in any output (comment, PI, hidden element)."""
        return ((self._pos_tid < 0) | self._hidden_all).tolist()

    def _exclude_positions(
        self, exclude: Iterable[int] | NDArray[np.bool_] | None
    ) -> set[int] | None:
        """``exclude`` (node indices or a node mask) as a set of positions."""
        if exclude is None:
            return None
        if isinstance(exclude, np.ndarray) and exclude.dtype == np.bool_:
            if exclude.shape != (self.n,):
                raise ValueError(f"an exclude mask needs one entry per node ({self.n})")
            return set(self._el_pos[exclude].tolist())
        nodes = np.fromiter(exclude, dtype=np.int64)
        if len(nodes) and (nodes.min() < 0 or nodes.max() >= self.n):
            raise IndexError("exclude holds a node index outside the page")
        return set(self._el_pos[nodes].tolist())

    def _check_node(self, node: int) -> int:
        if not 0 <= node < self.n:
            raise IndexError(f"node {node} out of range for a page of {self.n} nodes")
        return int(self._el_pos[node])

    def text_of(
        self, node: int = 0, *, exclude: Iterable[int] | NDArray[np.bool_] | None = None
    ) -> str:
        """Readable text of ``node``'s subtree, leaving out hidden and ``exclude``d subtrees.

        Paragraphs (block elements: p, div, li, h1–h6, tr, table, pre, …) are separated by
        ``"\\n\\n"``, ``<br>`` gives ``"\\n"``, cells (td, th) are separated by a space; other
        whitespace is collapsed, except inside ``<pre>``, whose lines are kept (right-stripped).
        Inline elements join without a space, as rendered (``foo<b>bar</b>`` → ``foobar``).
        An excluded subtree's tail (text after it, belonging to its parent) is kept.
        ``exclude`` is an iterable of node indices or a boolean mask over nodes. Walks the page
        arrays with an explicit stack: no recursion, any depth.

        Not html-text (issue 34): it spaces inline elements apart (``Contents-<em>arch</em>``
        → "Contents- arch"), so its words differ on 486 of 1,362 fixture and benchmark pages
        and its paragraphs on 1,094, at 6.1 against 0.78 ms a page
        (``python benchmarks/library_parts.py``).
        """
        if self.n == 0:
            return ""
        p0 = self._check_node(node)
        excluded = self._exclude_positions(exclude) or ()
        if self._skip_pos[p0] or p0 in excluded:
            return ""
        end, kinds, skip = self._end_list, self._pos_kind, self._skip_pos
        texts, tails = self._texts, self._tails
        events: list[str | int] = []
        stack: list[int] = []
        stop = end[p0]
        q = p0
        while True:
            while stack and end[stack[-1]] <= q:
                r = stack.pop()
                kind = kinds[r]
                if kind and kind != _LINE:
                    events.append(_PRE_END if kind == _PRE_START else kind)
                tail = tails[r]
                if tail and r != p0:
                    events.append(tail)
            if q >= stop:
                break
            if skip[q] or q in excluded:
                tail = tails[q]
                if tail:
                    events.append(tail)
                q = end[q]
                continue
            if kinds[q]:
                events.append(kinds[q])
            text = texts[q]
            if text:
                events.append(text)
            stack.append(q)
            q += 1
        return _assemble(events)

    def html_of(
        self, node: int = 0, *, exclude: Iterable[int] | NDArray[np.bool_] | None = None
    ) -> str:
        """Cleaned HTML of ``node``'s subtree: a copy without hidden subtrees (scripts, styles,
        …), comments, processing instructions, ``exclude``d subtrees and ``on*`` attributes,
        and defused (:func:`_defuse`: no ``javascript:`` URL, no plugin element). Text after a
        removed element (its tail) is kept. The page's tree is not modified."""
        if self.n == 0:
            return ""
        p0 = self._check_node(node)
        excluded = self._exclude_positions(exclude) or ()
        if self._skip_pos[p0] or p0 in excluded:
            return ""
        end, skip = self._end_list, self._skip_pos
        drop: list[int] = []
        q, stop = p0 + 1, end[p0]
        while q < stop:
            if skip[q] or q in excluded:
                drop.append(q)
                q = end[q]
            else:
                q += 1
        clone = copy.deepcopy(self.element(node))
        clone.tail = None
        # Reach nodes in the clone by their child indices from ``node`` (a proxy per step, not
        # one per node of the clone), all before the first removal shifts them.
        targets = [self._in_clone(clone, p0, q) for q in drop]
        # the page's CSS boxes (its style sheets stay behind) go along as style attributes
        dropped = _range_mask(np.array(drop, np.intp), np.array([end[q] for q in drop], np.intp),
                              len(end)) if drop else None  # fmt: skip
        for q, kind in self._css_boxes.items():
            if p0 < q < stop and (dropped is None or not dropped[q]):
                el = self._in_clone(clone, p0, q)
                if "display" not in (el.get("style") or ""):
                    box = "display:block" if kind == _PARA else "display:inline-block"
                    el.set("style", f"{el.get('style')};{box}" if el.get("style") else box)
        for el in targets:  # document order: a removed node's tail moves onto what precedes it
            _drop_keep_tail(el)
        for el in _WITH_EVENT_HANDLERS(clone):  # XPath: only elements that have one are visited
            for attr in [a for a in el.attrib if a.lower().startswith("on")]:
                del el.attrib[attr]
        _defuse(clone)
        return lxml_html.tostring(clone, encoding="unicode")

    def _in_clone(self, clone: etree._Element, p0: int, q: int) -> etree._Element:
        """The element of a deep copy of position ``p0``'s element at position ``q``."""
        parents, ranks = self._child_index
        steps = []
        while q != p0:
            steps.append(ranks[q])
            q = parents[q]
        el = clone
        for i in reversed(steps):
            el = el[i]
        return el

    # ---------------------------------------------------------------- links

    @cached_property
    def base_url(self) -> str:
        """The URL relative links resolve against: the page URL joined with the first
        ``<base href>`` of the document (HTML's rule), else the page URL."""
        if self._root is None:
            return self.url
        doc_root = self._root.getroottree().getroot()
        for base in doc_root.iter("base", "{http://www.w3.org/1999/xhtml}base"):
            href = base.get("href")
            if href and href.strip():
                try:
                    return urljoin(self.url, _clean_href(href))
                except ValueError:
                    break
        return self.url

    def anchor_text(self, node: int) -> str:
        """Whitespace-normalised text of an anchor; for an image link (no text) the ``alt``
        texts of its images."""
        text = self._flat_text(int(self._el_pos[node]))
        if text:
            return text
        img_nodes, img_alts = self._img_alts
        lo, hi = np.searchsorted(img_nodes, [node, self.subtree_end[node]])
        return " ".join(chain.from_iterable(alt.split() for alt in img_alts[lo:hi] if alt))

    def img_alts(self) -> tuple[NDArray[np.intp], list[str | None]]:
        """The ``<img>`` nodes (in order) and their ``alt`` attributes (None when absent)."""
        return self._img_alts

    @cached_property
    def _img_alts(self) -> tuple[NDArray[np.intp], list[str | None]]:
        """``<img>`` nodes and their ``alt`` (for image links), read through lxml's C tag
        filter so that no other node needs a proxy."""
        img = self._tag_code.get("img", -2)
        nodes = np.flatnonzero(self.tag_id == img)
        if not len(nodes):
            return nodes, []
        els = (
            list(self._root.iter("img"))
            if self._node_list is None and self._root is not None
            else []
        )
        if len(els) != len(nodes):  # proxies at hand, or other spellings ({ns}img, IMG …)
            els = [self._nodes[p] for p in self._el_pos[nodes].tolist()]
        return nodes, [el.get("alt") for el in els]

    def _flat_text(self, p0: int) -> str:
        """Visible text of the subtree at position ``p0`` on one line (whitespace-normalised,
        a space around block and cell elements): :meth:`text_of` without paragraphs, cheap
        enough to run for every anchor of a page."""
        end, texts, tails = self._end_list, self._texts, self._tails
        skip, kinds = self._skip_pos, self._pos_kind
        if skip[p0]:
            return ""
        stop = end[p0]
        if stop == p0 + 1:  # no children: most anchors
            text = texts[p0]
            return " ".join(text.split()) if text else ""
        parts: list[str] = []
        stack: list[int] = []
        q = p0
        while True:
            while stack and end[stack[-1]] <= q:
                r = stack.pop()
                if kinds[r]:
                    parts.append(" ")
                tail = tails[r]
                if tail:
                    parts.append(tail)
            if q >= stop:
                break
            if skip[q]:
                tail = tails[q]
                if tail and q != p0:
                    parts.append(tail)
                q = end[q]
                continue
            if kinds[q]:
                parts.append(" ")
            text = texts[q]
            if text:
                parts.append(text)
            if q != p0:
                stack.append(q)
            q += 1
        return " ".join("".join(parts).split())

    @cached_property
    def _links(self) -> tuple[Link, ...]:
        base = self.base_url
        # Resolve against the least of the base each href needs, so that the cache of resolved
        # links serves every page of a folder (or of the site), not only this page.
        parts = urlsplit(base)
        origin = f"{parts.scheme}://{parts.netloc}"
        folder = origin + parts.path[: parts.path.rfind("/") + 1] if parts.path else origin + "/"
        out = []
        self._overlong_links = 0
        for node, href in zip(self.anchor_nodes.tolist(), self._hrefs, strict=True):
            if len(href) > MAX_LINK_CHARS and len(href.strip()) > MAX_LINK_CHARS:
                self._overlong_links += 1
                continue
            start = href.lstrip()[:8].lower()
            if start.startswith(_LINK_SCHEMES):
                context = ""
            elif start.startswith("/"):
                context = origin  # "/path" and "//host/path" need only scheme and host
            elif start.startswith("?"):
                context = base
            else:
                context = folder  # relative paths ("a.html", "../b/") need only the folder
            url = _resolve_link(context, _defragmented(href))
            if url is not None and len(url) > MAX_LINK_CHARS:  # grew by percent-encoding
                self._overlong_links += 1
            elif url is not None:
                out.append(Link(url, self.anchor_text(node), node))
        return tuple(out)

    @property
    def overlong_links(self) -> int:
        """``<a href>`` links dropped for being longer than :data:`MAX_LINK_CHARS`."""
        self._links  # noqa: B018  (computed with the links)
        return self._overlong_links

    def series_anchors(self) -> frozenset[int]:
        """Anchor nodes whose ``rel`` names the next or previous page of a series
        (``rel="next"``, ``"prev"``): the page's own word that a link turns its page."""
        return self._series

    def links(self) -> list[Link]:
        """Out-links in document order: ``Link(url, text, node)`` for every ``<a href>`` whose
        href resolves (against :attr:`base_url`) to an http(s) URL; the fragment is dropped and
        the URL made safe (percent-encoded) as Scrapy does for requests.

        Skipped (but still anchors for ALEN and ``n_anchors``): fragment-only and empty hrefs
        (in-page navigation), every other scheme (javascript:, mailto:, tel:, data:, …), and
        URLs longer than :data:`MAX_LINK_CHARS` (counted: :attr:`overlong_links`).
        """
        return list(self._links)

    def document_events(self) -> tuple[NDArray[np.int64], NDArray[np.int8], NDArray[np.int64]]:
        """The page as one flat stream of events in document order: ``(node, kind, length)``
        arrays with kind 0 = the element ``node`` opens, 1 = it closes, 2 = a visible non-blank
        text piece owned by ``node`` (its own ``.text``, or the tail of a child element or
        comment) of ``length`` non-whitespace characters (0 for opens and closes).

        This is a serialisation of the tree (what a SAX parser would report), computed with one
        sort over all nodes and pieces instead of a walk: an element opens at its position and
        its ``.text`` follows; it closes at its subtree's end, deeper elements first, and each
        tail follows the close of the element (or comment) it trails. Hidden elements (script,
        style …) open and close like any element but own no piece. Sequence encodings of pages
        (SMG's H2S translation) are built from it without recursion.
        """
        n = self.n
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int64)
        end_all, el_pos = self._end_all, self._el_pos
        depth_all = _depths(end_all)
        keep = self._piece_len > 0
        ppos, ptail, powner = self._piece_pos[keep], self._piece_tail[keep], self._piece_owner[keep]
        # key1: position in the all-nodes order; key2: closes (0) before opens (1);
        # key3: deeper closes first; key4: an event before the text piece that follows it
        k1 = np.concatenate([el_pos, end_all[el_pos], np.where(ptail, end_all[ppos], ppos)])
        k2 = np.concatenate([np.ones(n), np.zeros(n), np.where(ptail, 0, 1)])
        k3 = np.concatenate([np.zeros(n), -depth_all[el_pos], np.where(ptail, -depth_all[ppos], 0)])
        k4 = np.concatenate([np.zeros(2 * n), np.ones(len(ppos))])
        order = np.lexsort((k4, k3, k2, k1))
        nodes = np.concatenate([np.arange(n), np.arange(n), powner]).astype(np.int64)
        kinds = np.concatenate(
            [np.zeros(n, np.int8), np.ones(n, np.int8), np.full(len(ppos), 2, np.int8)]
        )
        lengths = np.concatenate([np.zeros(2 * n, np.int64), self._piece_len[keep]])
        return nodes[order], kinds[order], lengths[order]

    # ---------------------------------------------------------------- title, paths

    @cached_property
    def title(self) -> str:
        """The page title: the ``<title>`` in ``<head>`` (else one outside ``<svg>``, where it
        is a tooltip), else the first ``<h1>``'s text; whitespace-normalised."""
        names, tids, parents = self.tag_names, self._tid_list, self._parent_list
        t = self._tag_code.get("title", -2)
        candidates = []
        for i in np.flatnonzero(self.tag_id == t).tolist():
            up, in_svg = parents[i], False
            while up >= 0 and not in_svg:
                in_svg = names[tids[up]] == "svg"
                up = parents[up]
            if not in_svg:
                candidates.append((parents[i] < 0 or names[tids[parents[i]]] != "head", i))
        for _, i in sorted(candidates):
            p = int(self._el_pos[i])
            text = " ".join((self._texts[p] or "").split())  # a title holds text only
            if text:
                return text
        h1 = self._tag_code.get("h1", -2)
        for i in np.flatnonzero(self.tag_id == h1).tolist():
            text = self._flat_text(int(self._el_pos[i]))
            if text:
                return text
        return ""

    @cached_property
    def sibling_rank(self) -> NDArray[np.int32]:
        """1-based position of each node among its parent's children with the same tag."""
        n = self.n
        rank = np.ones(n, np.int32)
        if n > 1:
            idx = np.arange(1, n)
            par, tid = self.parent[1:], self.tag_id[1:]
            order = np.lexsort((idx, tid, par))
            sp, st = par[order], tid[order]
            new = np.ones(n - 1, dtype=bool)
            new[1:] = (sp[1:] != sp[:-1]) | (st[1:] != st[:-1])
            group_first = np.maximum.accumulate(np.where(new, np.arange(n - 1), 0))
            rank[idx[order]] = np.arange(n - 1) - group_first + 1
        return rank

    def path(self, node: int) -> str:
        """Tag path from the root, e.g. ``html/body/div[2]/p[3]``: ``[k]`` is the 1-based
        position among same-tag siblings, written only when k > 1 (so ``div`` ≡ ``div[1]`` and a
        block keeps its path on pages where it has no same-tag sibling after it)."""
        self._check_node(node)
        names, tids, parents = self.tag_names, self._tid_list, self._parent_list
        ranks = self._rank_list
        steps = []
        i = node
        while i >= 0:
            r = ranks[i]
            steps.append(names[tids[i]] if r == 1 else f"{names[tids[i]]}[{r}]")
            i = parents[i]
        return "/".join(reversed(steps))

    @cached_property
    def _tid_list(self) -> list[int]:
        return self.tag_id.tolist()

    @cached_property
    def _parent_list(self) -> list[int]:
        return self.parent.tolist()

    @cached_property
    def _rank_list(self) -> list[int]:
        return self.sibling_rank.tolist()


# -------------------------------------------------------------------- helpers


_PLAIN_LOOKUP = etree.ElementDefaultClassLookup()

_ELEMENTS_BEFORE = etree.XPath("count(preceding::*) + count(ancestor::*)")


def _elements_before(el: etree._Element) -> int:
    """Elements before ``el`` in its document's order: its pre-order index among elements."""
    return int(_ELEMENTS_BEFORE(el))


def _all_nodes(root: etree._Element) -> tuple[list[etree._Element], bool]:
    """``list(root.iter())``, avoiding lxml.html's per-node Python class lookup when safe.

    Creating a proxy for an ``lxml.html`` node calls ``HtmlElementClassLookup.lookup``, a Python
    method: about as much time as the rest of the iteration (and 1/4 of a page parse). Scrapy's
    trees come from parsel, which makes a new ``lxml.html.HTMLParser`` for every document, so
    for such a private parser the lookup is switched to lxml's C default for the duration of
    the iteration and then set back to what ``lxml.html.HTMLParser.__init__`` sets. The plain
    proxies must not outlive the build (other code asking the tree for those nodes would get
    them instead of ``HtmlElement``s): the caller drops them, returned flag True. Shared
    parsers (lxml.html's module-level ones, or any other parser class) are left alone.
    """
    parser = root.getroottree().parser
    if (
        type(parser) is lxml_html.HTMLParser
        and parser is not lxml_html.html_parser
        and parser is not getattr(lxml_html, "xhtml_parser", None)
    ):
        parser.set_element_class_lookup(_PLAIN_LOOKUP)
        try:
            return list(root.iter()), True
        finally:
            parser.set_element_class_lookup(lxml_html.HtmlElementClassLookup())
    return list(root.iter()), False


def _close_paragraphs(root: etree._Element) -> bool:
    """Reshape ``root``'s tree as HTML's parsing rules build it: a ``<p>`` ends where a block
    start tag (``_CLOSES_P``) opens inside it, and that block and everything after it up to
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
        if not isinstance(el.tag, str) or el.tag not in _CLOSES_P:
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


def nearest_marked(marked: NDArray[np.bool_], parent: NDArray[np.integer]) -> NDArray[np.int64]:
    """For every node, its nearest ancestor-or-self with ``marked`` (a root is its own answer).

    Pointer jumping: ``up[i]`` is i if marked, else its parent; ``up = up[up]`` doubles the
    distance covered each pass, so O(n log depth) vectorised work and no recursion.
    """
    n = len(parent)
    idx = np.arange(n)
    par = np.asarray(parent, dtype=np.int64).copy()
    par[par < 0] = idx[par < 0]
    up = np.where(marked, idx, par)
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            return up
        up = nxt


def _local_name(tag: str) -> str:
    """``{ns}Name`` → ``name``: XHTML trees and HTML trees get the same tag names."""
    if tag[:1] == "{":
        tag = tag.rpartition("}")[2]
    return tag.lower()


#: CSS ``display`` values → the separation of :meth:`PageModel.text_of`.
_DISPLAY_KIND: dict[str, int] = {
    **dict.fromkeys(
        ("block", "flex", "grid", "list-item", "table", "flow-root", "table-row",
         "table-row-group", "table-header-group", "table-footer-group", "table-caption",
         "-webkit-box", "-ms-flexbox"),
        _PARA,
    ),
    **dict.fromkeys(
        ("inline-block", "inline-flex", "inline-grid", "inline-table", "table-cell",
         "-webkit-inline-box", "-ms-inline-flexbox"),
        _SPACE,
    ),
}  # fmt: skip
_CONTAINER_DISPLAY = frozenset(
    {"flex", "grid", "inline-flex", "inline-grid", "-webkit-box", "-ms-flexbox"}
)
_NOT_A_BOX = frozenset({"inline", "contents", "none"})
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_DISPLAY_WORD = re.compile(rb"display\s*:", re.IGNORECASE)
_SUBJECT_NAMES = re.compile(r"([.#])((?:[-\w]|\\.)+)")
_CSS_DISPLAY = re.compile(r"(?:^|[;{\s])display\s*:\s*([-a-z]+)\s*(!\s*important)?", re.IGNORECASE)
_STYLED = etree.XPath("descendant-or-self::*[contains(@style, 'display')]")

class _PageIndex:
    """Node masks of a page's tags, classes and ids, to match CSS selectors over the arrays."""

    def __init__(self, model: PageModel, names: dict[tuple[str, str], list[int]]) -> None:
        self.model = model
        self.names = names
        self._masks: dict[tuple[str, str], NDArray[np.bool_]] = {}

    def _mask(self, key: tuple[str, str]) -> NDArray[np.bool_]:
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = np.zeros(self.model.n, dtype=bool)
            mask[self.names[key]] = True
        return mask

    def carrying(self, c: _Compound) -> NDArray[np.bool_] | None:
        """Nodes that carry compound ``c`` (None when none can: a class or id not on it)."""
        keys = [("class", x) for x in c.classes] + [("id", x) for x in c.ids]
        if any(k not in self.names for k in keys):
            return None
        m = self.model
        out = np.ones(m.n, dtype=bool)
        if c.tag is not None:
            out = m.tag_id == m.tag_code(c.tag)
        for key in keys:
            out = out & self._mask(key)
        return out

    def matching(self, chain: tuple[tuple[str, _Compound], ...]) -> NDArray[np.bool_] | None:
        """Nodes matching a chain of compounds joined by " " and ">", found left to right:
        the nodes of each compound that are children (">") or descendants (" ") of a node
        matching the part to its left — exactly CSS's right-to-left search, for all at once."""
        m = self.model
        found = self.carrying(chain[-1][1])
        for k in range(len(chain) - 2, -1, -1):
            here = self.carrying(chain[k][1])
            if found is None or here is None or not found.any():
                return None
            if chain[k + 1][0] == ">":
                below = np.zeros(m.n, dtype=bool)
                below[1:] = found[m.parent[1:]]
            else:
                starts = np.flatnonzero(found)
                below = _range_mask(starts + 1, m.subtree_end[starts], m.n)
            found = here & below
        return found


class _Compound(NamedTuple):
    """One compound selector of tag, classes and ids (``div.a.b#c``)."""

    tag: str | None
    classes: frozenset[str]
    ids: frozenset[str]


class _Selector(NamedTuple):
    """A parsed CSS selector and its specificity. ``subject``: what the matched element
    must carry. ``chain``: when the selector is only compounds joined by descendant (" ") and
    child (">") combinators, the subject and then each (combinator, compound) to its left,
    matched over the page arrays; otherwise None, and its XPath (:func:`_css_xpath`)
    decides."""

    text: str
    specificity: tuple[int, int, int]
    subject: _Compound
    chain: tuple[tuple[str, _Compound], ...] | None


_Rule = tuple[str, str, int]


@lru_cache(maxsize=64)  # the pages of a site share their sheets
def _display_rules(sheet: str) -> tuple[_Rule, ...]:
    """The ``display`` rules of a style sheet's top level, one per selector of a rule:
    (selector text, value, important). Rules inside at-rule blocks are skipped.

    Only the blocks holding a ``display`` declaration are read: brace depths come from one
    cumulative sum over the sheet, so a large framework sheet costs no Python loop per rule.
    Not tinycss2 (issue 34): it finds the same rules on all 475 sheet-carrying pages of the
    fixtures and ../shared/data but takes 7.3 ms a page against 0.17 ms, half the add-on's
    15 ms budget (``python benchmarks/library_parts.py``).
    """
    sheet = _CSS_COMMENT.sub(" ", sheet) if "/*" in sheet else sheet
    raw = sheet.encode("utf-8", "surrogatepass")  # byte offsets: braces are ASCII
    hits = [m.start() for m in _DISPLAY_WORD.finditer(raw)]  # a literal: a fast scan
    if not hits:
        return ()
    codes = np.frombuffer(raw, np.uint8)
    opening = codes == ord("{")
    braces = np.flatnonzero(opening | (codes == ord("}")))
    depth = np.cumsum(opening[braces].astype(np.int64) * 2 - 1)  # depth after each brace
    out: list[_Rule] = []
    for k in sorted(set((np.searchsorted(braces, hits, side="right") - 1).tolist())):
        if k < 0 or not opening[braces[k]] or depth[k] != 1 or k + 1 >= len(braces):
            continue  # not inside a top-level rule (an at-rule's block, stray text)
        start = int(braces[k - 1]) + 1 if k else 0
        prelude = raw[start : braces[k]].decode("utf-8", "replace").rsplit(";", 1)[-1].strip()
        found = _CSS_DISPLAY.findall(raw[braces[k] + 1 : braces[k + 1]].decode("utf-8", "replace"))
        if not found or prelude.startswith("@"):
            continue  # after @import …; an at-rule
        value, important = found[-1]
        out += [(t.strip(), value.lower(), int(bool(important))) for t in prelude.split(",")]
    return tuple(out)


@lru_cache(maxsize=1 << 12)
def _css_selector(text: str) -> _Selector | None:
    """A selector compiled to XPath, or None for one that does not apply to the page at rest
    (pseudo-classes, pseudo-elements) or that cssselect cannot read."""
    from cssselect import SelectorError, parse
    from cssselect.parser import CombinedSelector

    if not text or ":" in text:
        return None
    try:
        parsed = parse(text)
        if len(parsed) != 1:
            return None
    except (SelectorError, ValueError):
        return None
    steps: list[tuple[str, _Compound]] = []
    node: object = parsed[0].parsed_tree
    combinator, plain = "", True
    while node is not None:
        part = node.subselector if isinstance(node, CombinedSelector) else node
        compound, ok = _compound(part)
        steps.append((combinator, compound))
        plain = plain and ok
        if not isinstance(node, CombinedSelector):
            break
        combinator, plain = node.combinator, plain and node.combinator in (" ", ">")
        node = node.selector
    chain = tuple(steps) if plain else None
    return _Selector(text, parsed[0].specificity(), steps[0][1], chain)


@lru_cache(maxsize=1 << 10)
def _css_xpath(text: str) -> etree.XPath | None:
    """The XPath of a selector (compiled when a page first needs it), None if it has none."""
    from cssselect import GenericTranslator, SelectorError

    try:
        xpath = GenericTranslator().css_to_xpath(text, prefix="descendant-or-self::")
        return etree.XPath(xpath)
    except (SelectorError, etree.XPathSyntaxError, ValueError):
        return None


def _compound(node: object) -> tuple[_Compound, bool]:
    """The tag, classes and ids of a cssselect compound, and whether that is all it has."""
    from cssselect.parser import Class, Element, Hash

    classes: set[str] = set()
    ids: set[str] = set()
    plain = True
    while node is not None and not isinstance(node, Element):
        if isinstance(node, Class):
            classes.add(node.class_name)
        elif isinstance(node, Hash):
            ids.add(node.id)
        else:
            plain = False  # [attr], :not() …
        node = getattr(node, "selector", None)
    tag = node.element.lower() if isinstance(node, Element) and node.element else None
    return _Compound(tag, frozenset(classes), frozenset(ids)), plain


def _inline_display(style: str) -> tuple[str, int]:
    """The ``display`` value of a ``style`` attribute (last one wins) and its importance."""
    found = _CSS_DISPLAY.findall(";" + style)
    if not found:
        return "", 0
    value, important = found[-1]
    return value.lower(), int(bool(important))


def _tag_kind(name: str) -> int:
    if name in VERBATIM_TAGS:
        return _PRE_START
    if name in BLOCK_TAGS:
        return _PARA
    if name == "br":
        return _LINE
    if name in _SPACED_TAGS:
        return _SPACE
    return 0


def _clean_href(href: str) -> str:
    """Strip surrounding whitespace and remove tabs/newlines inside, as browsers do."""
    href = href.strip()
    if "\n" in href or "\t" in href or "\r" in href:
        href = href.replace("\n", "").replace("\t", "").replace("\r", "")
    return href


def _defragmented(href: str) -> str:
    """``href`` with its fragment replaced by a stand-in that resolves alike.

    A resolved link drops its fragment, and what :func:`_resolve_link` makes of the rest
    depends only on the part before the first ``#`` and on whether a ``#`` and a non-blank
    fragment follow it (``urldefrag`` re-serialises a URL that holds a ``#``, and ``urljoin``
    keeps an empty fragment out of its result). So the links of a page to the many fragments of
    one page (an index, a table of contents) share one cache entry instead of one each.
    """
    head, sep, fragment = href.partition("#")
    if not sep:
        return href
    return head + ("#f" if _clean_href(fragment) else "#")


@lru_cache(maxsize=1 << 12)  # LRU: the navigation links every page repeats stay in
def _resolve_link(base: str, href: str) -> str | None:
    """Absolute, fragment-free, percent-encoded http(s) URL of ``href``, or None to skip it.

    Cached: a site's pages repeat their navigation links, and relative hrefs repeat per base.
    """
    href = _clean_href(href)
    if not href or href.startswith("#"):
        return None  # in-page navigation (or the page itself), not a link to another page
    try:
        url = urldefrag(urljoin(base, href))[0]
    except ValueError:  # e.g. an invalid IPv6 host
        return None
    if not url[:8].lower().startswith(_LINK_SCHEMES):
        return None  # javascript:, mailto:, tel:, data:, ftp: … are not crawlable pages
    try:
        return safe_url_string(url)
    except ValueError:
        return None


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _word_tokens(word: str) -> tuple[str, ...]:
    """``text._TOKEN_RE`` tokens of one whitespace-free word (the NUL marker stays itself)."""
    if word == "\x00":
        return (word,)
    return tuple(_TOKEN_RE.findall(word))


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _token_terms(token: str, keep_numbers: bool) -> tuple[str, ...]:
    """Terms of one (normalised, lower-cased) token, cached: sites repeat their vocabulary."""
    return token_terms(token, keep_numbers)


def _stable_order(values: NDArray[np.int64], bound: int) -> NDArray[np.intp]:
    """Stable argsort of small non-negative integers (< ``bound``): radix sort when they fit
    in 16 bits, which is the common case (values are depths or open-slot counts)."""
    if bound < 1 << 15:
        return np.argsort(values.astype(np.int16), kind="stable")
    return np.argsort(values, kind="stable")


def _subtree_ends(nchild: NDArray[np.intp]) -> NDArray[np.intp]:
    """Subtree end of every position, from pre-order child counts (Łukasiewicz path).

    ``L[0] = 1``, ``L[k+1] = L[k] + nchild[k] − 1``: open child slots before position k. The
    subtree of k ends where the slot k took is gone for good, the first j > k with
    ``L[j] = L[k] − 1`` (L falls by at most 1 per step, so it cannot skip that value).
    With positions sorted by (L, position), the queries (L[k] − 1, k) come in the same order,
    so one sorted ``searchsorted`` answers all of them.
    """
    N = len(nchild)
    luk = np.empty(N + 1, dtype=np.int64)
    luk[0] = 1
    np.cumsum(nchild, out=luk[1:])
    luk[1:] -= np.arange(N, dtype=np.int64)  # 1 + Σ (nchild − 1)
    order = _stable_order(luk, N + 2)
    keys = luk[order] * (N + 1) + order  # sorted (L, position)
    queried = order[order < N]  # positions 0..N-1 in (L, position) order
    found = np.searchsorted(keys, (luk[queried] - 1) * (N + 1) + queried)
    end = np.empty(N, dtype=np.intp)
    end[queried] = order[found]
    return end


def _depths(end: NDArray[np.intp]) -> NDArray[np.intp]:
    """Depth of every position: how many ranges ``[j+1, end[j])`` contain it."""
    N = len(end)
    diff = np.ones(N + 1, dtype=np.intp)
    diff[0] = 0
    diff -= np.bincount(end, minlength=N + 1)
    return np.cumsum(diff)[:N]


def _parents(depth: NDArray[np.intp]) -> NDArray[np.intp]:
    """Parent of every position: the last earlier position one level up (−1 for the root)."""
    N = len(depth)
    if N == 0:
        return np.zeros(0, dtype=np.intp)
    order = _stable_order(depth, N + 1)
    keys = depth[order] * N + order  # sorted (depth, position)
    # the last key below (depth − 1, k), asked in sorted order
    found = np.searchsorted(keys, (depth[order] - 1) * N + order) - 1
    parent = np.empty(N, dtype=np.intp)
    parent[order] = order[np.maximum(found, 0)]
    parent[depth == 0] = -1
    return parent


def _children(parent: NDArray[np.int32]) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """CSR children lists (document order) from the parent array of a pre-order tree."""
    n = len(parent)
    child_start = np.zeros(n + 1, dtype=np.int32)
    if n > 1:
        np.cumsum(np.bincount(parent[1:], minlength=n), out=child_start[1:])
    child_index = (np.argsort(parent[1:], kind="stable") + 1).astype(np.int32)
    return child_start, child_index


def _range_mask(starts: NDArray, ends: NDArray, n: int) -> NDArray[np.bool_]:
    """Boolean mask of the union of the ranges ``[starts[k], ends[k])`` (nesting allowed)."""
    if len(starts) == 0:
        return np.zeros(n, dtype=bool)
    diff = np.bincount(starts, minlength=n + 1) - np.bincount(ends, minlength=n + 1)
    return np.cumsum(diff[:n]) > 0


def _subtree_sums(values: NDArray, subtree_end: NDArray) -> NDArray[np.int64]:
    """Σ ``values`` over every node's subtree: the ICT aggregation f_A (WISDOM §3.2.1)."""
    csum = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=csum[1:])
    return csum[subtree_end] - csum[:-1]


# whitespace as str.split() sees it, as a lookup table over code points below U+3001
_WS_TABLE = np.array([chr(c).isspace() for c in range(0x3001)] + [False], dtype=bool)
_WS_TABLE[0] = False  # NUL: the piece separator of _joined_nonspace_len, never whitespace here


def _joined_nonspace_len(pieces: list[str]) -> tuple[str, NDArray[np.int64]]:
    """``("\\x00".join(pieces), number of non-whitespace characters of each piece)``.

    Vectorised over the joined text instead of ``len("".join(s.split()))`` per piece, which
    allocates every word. NUL separates pieces: libxml2 strings cannot contain it.
    """
    joined = "\x00".join(pieces)
    k = len(pieces)
    if not k:
        return joined, np.zeros(0, np.int64)
    if joined.isascii():
        codes = np.frombuffer(joined.encode("ascii"), np.uint8)
        cand = np.flatnonzero(codes <= 32)
        c = codes[cand]
        space = cand[_WS_TABLE[c]]
    else:
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
        cand = np.flatnonzero((codes <= 32) | (codes >= 0x85))
        c = codes[cand]
        space = cand[_WS_TABLE[np.minimum(c, np.uint32(0x3001))]]
    sep = cand[c == 0]
    bounds = np.empty(k + 1, np.int64)
    bounds[0] = -1
    bounds[1:-1] = sep
    bounds[-1] = len(codes)
    starts = bounds[:-1] + 1
    ends = bounds[1:]
    spaces = np.searchsorted(space, ends) - np.searchsorted(space, starts)
    return joined, (ends - starts) - spaces


# characters lxml refuses in text it is given (libxml2's HTML parser lets some through)
_NOT_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# One step of PageModel.path that is safe to put in an XPath expression: a plain tag name and
# an optional position.
_PLAIN_STEP = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(\[[0-9]+\])?")


# Elements carrying an event-handler attribute (onclick, onload, …), the node itself included.
_WITH_EVENT_HANDLERS = etree.XPath(
    "descendant-or-self::*[@*[starts-with(translate(local-name(), 'ON', 'on'), 'on')]]"
)


# Elements with an attribute that may hold a URL with a scheme, or HTML (srcdoc); plugin elements.
_WITH_URL_SCHEME = etree.XPath("descendant-or-self::*[@*[contains(., ':')] or @srcdoc]")
_PLUGINS = etree.XPath("descendant::*[self::object or self::embed or self::applet]")
_URL_ATTRIBUTES = frozenset({
    "href", "src", "action", "formaction", "data", "poster", "background", "lowsrc", "dynsrc",
    "cite", "codebase", "longdesc", "ping", "srcset", "xlink:href",
    "{http://www.w3.org/1999/xlink}href",
})  # fmt: skip
_ACTIVE_SCHEMES = ("javascript:", "vbscript:", "data:")
_URL_IGNORED = re.compile(r"[\x00-\x20\x7f]+")  # browsers skip these inside a scheme


def _defuse(root: etree._Element) -> None:
    """Make a copied subtree safe to show: drop URL attributes with an active scheme
    (``javascript:``, ``vbscript:``, ``data:``, however spaced or cased, as browsers read them),
    ``srcdoc`` (a whole document), and plugin elements (``object``, ``embed``, ``applet``)."""
    for el in _WITH_URL_SCHEME(root):
        for name, value in list(el.attrib.items()):
            if name.lower() == "srcdoc" or (
                name.lower() in _URL_ATTRIBUTES
                and _URL_IGNORED.sub("", value).lower().startswith(_ACTIVE_SCHEMES)
            ):
                del el.attrib[name]
    for el in _PLUGINS(root):
        _drop_keep_tail(el)


def _drop_keep_tail(el: etree._Element) -> None:
    """Remove ``el`` and its subtree, keeping its tail text in place."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = _NOT_XML_CHARS.sub("", (prev.tail or "") + el.tail)
        else:
            parent.text = _NOT_XML_CHARS.sub("", (parent.text or "") + el.tail)
    parent.remove(el)


def _assemble(events: list[str | int]) -> str:
    """Join text_of events (strings and separator codes) into paragraphs and lines."""
    paras: list[str] = []
    lines: list[str] = []
    buf: list[str] = []
    pre: list[str] = []
    pre_depth = 0

    def end_line() -> None:
        line = " ".join("".join(buf).split())
        if line:
            lines.append(line)
        buf.clear()

    def end_para() -> None:
        end_line()
        if lines:
            paras.append("\n".join(lines))
            lines.clear()

    for ev in events:
        if type(ev) is str:
            (pre if pre_depth else buf).append(ev)
        elif ev == _SPACE:
            (pre if pre_depth else buf).append(" ")
        elif ev == _LINE:
            if pre_depth:
                pre.append("\n")
            else:
                end_line()
        elif ev == _PARA:
            if pre_depth:
                pre.append("\n")
            else:
                end_para()
        elif ev == _PRE_START:
            if not pre_depth:
                end_para()
            pre_depth += 1
        elif ev == _PRE_END:
            pre_depth -= 1
            if not pre_depth:
                text = "\n".join(line.rstrip() for line in "".join(pre).split("\n")).strip("\n")
                if text.strip():
                    paras.append(text)
                pre.clear()
    end_para()
    return "\n\n".join(paras)
