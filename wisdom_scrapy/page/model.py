"""Page model: one traversal of an lxml tree → numpy arrays over its element nodes.

Every mining stage (WISDOM k-MIB and sibling merging, InfoDiscoverer blocks, SMG segmentation,
the site style tree) walks a :class:`PageModel` instead of the lxml tree, so the tree is visited
once per page, no stage needs Python recursion (broken pages nest thousands of levels deep), and
bottom-up aggregation (WISDOM's information coverage tree, §3.2.1) is a vectorised prefix-sum.

This module holds the model's state and the build walk; the work over it lives in pure
functions of the modules beside it (:mod:`~wisdom_scrapy.page` lists them), which take arrays,
lists and elements (the CSS reader a :class:`~wisdom_scrapy.page.css.StyledPage` view of the
model) and import nothing from here.

Node numbering
    Element nodes in document (pre-)order, ``0`` is the root passed in. Node ``i``'s subtree is the
    contiguous range ``i .. subtree_end[i] - 1``, so any additive feature ``f`` aggregates as
    ``F = cumsum(f); F_A[i] = F[subtree_end[i]] - F[i]`` (one vectorised pass, no reverse loop).
    Children: ``child_index[child_start[i]:child_start[i + 1]]`` (CSR, in document order).

How it is built (why it is fast)
    Building a Python proxy for each lxml node is the dominant cost, so the only per-node work is
    ``list(root.iter())`` plus C-level ``map`` calls (tag, text, tail, number of children),
    made on each chunk of nodes as it is listed, while it is in the CPU's cache
    (:class:`_NodeReads`); no Python bytecode runs per node (for parsel's private
    ``lxml.html`` parsers even lxml.html's Python class lookup is bypassed during the walk,
    see :func:`_all_nodes`). The tree shape
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
    HTML's rule (:func:`~wisdom_scrapy.page.parse._close_paragraphs`), so no miner sees a
    listing inside a paragraph; the caller's tree is left as it is. Pages without the pattern
    cost one vectorised check.

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
from collections import Counter, defaultdict
from functools import cached_property
from itertools import chain, compress, count, islice, repeat
from operator import attrgetter, is_not, methodcaller
from typing import TYPE_CHECKING, cast

import numpy as np
from lxml import etree
from lxml import html as lxml_html

from wisdom_scrapy.page.arrays import (
    child_ranks,
    csr_children,
    depths_from_ends,
    event_stream,
    first_piece_owner,
    joined_nonspace_len,
    nearest_marked,
    parents_from_depths,
    range_mask,
    sibling_ranks,
    subtree_ends,
    subtree_sums,
)
from wisdom_scrapy.page.css import css_boxes
from wisdom_scrapy.page.links import (
    Link,
    document_base,
    resolve_links,
    series_nodes,
)
from wisdom_scrapy.page.markup import clean_copy, dropped_positions
from wisdom_scrapy.page.parse import CLOSES_P, PARSER_MAX_DEPTH, close_paragraphs, parse_html
from wisdom_scrapy.page.tags import (
    BLOCK_TAGS,
    HIDDEN_TAGS,
    VERBATIM_TAGS,
    local_name,
    tag_kind,
    tag_tables,
)
from wisdom_scrapy.page.terms import stable_hash
from wisdom_scrapy.page.text import (
    TextArrays,
    TextWalk,
    flat_text,
    text_in,
)
from wisdom_scrapy.page.tokens import piece_tokens, term_arrays

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BLOCK_TAGS",
    "HIDDEN_TAGS",
    "VERBATIM_TAGS",
    "PageModel",
    "PageTooComplex",
    "nearest_marked",
]

_TAG = attrgetter("tag")
_TEXT = attrgetter("text")
_TAIL = attrgetter("tail")
#: attributes the build reads on every node of plain proxies besides ``class``
#: (:class:`_NodeReads`): the article finder's cues (``id``, ``style``, ``itemprop``) and the
#: article fields' marks (``itemprop``), which would otherwise reach their elements again
READ_ATTRIBUTES = ("id", "style", "itemprop")
_GET = {name: methodcaller("get", name)
        for name in ("href", "rel", "class", "alt", *READ_ATTRIBUTES)}
# lxml's own ``get``, called unbound on the plain proxies of :func:`_all_nodes`: no method
# look-up a node (a third of a pydoc page's ``class`` read, 0.68-0.82 -> 0.43-0.52 ms)
_PLAIN_GET = etree._Element.get
# with the names as bytes: lxml's ``get`` encodes a ``str`` name to UTF-8 on every call, a
# third of a ``class`` read (0.44 -> 0.34 ms a pydoc page); custom element classes, which may
# override ``get``, keep the ``str`` names of ``_GET``
_PLAIN_KEY = {name: name.encode("ascii") for name in _GET}
# and the getter of lxml's ``tail`` (which no node class of lxml overrides, comments and
# processing instructions included), called on them straight: 0.45-0.50 -> 0.24-0.28 ms a
# pydoc page against ``attrgetter("tail")``'s attribute look-up a node
_PLAIN_TAIL = getattr(vars(etree._Element).get("tail"), "__get__", _TAIL)
# and of its ``text``, which is an element's text (0.51-0.62 -> 0.27-0.37 ms a pydoc page);
# a comment's or PI's class has its own, read nowhere: for them this one gives None
_PLAIN_TEXT = getattr(vars(etree._Element).get("text"), "__get__", _TEXT)
# (an lxml whose class declares them elsewhere gets the attribute reads: the same values)


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
    ``anchor_nodes`` (int32): the ``<a href>`` nodes in order. ``classes``: every node's
    ``class`` attribute (None where absent), a tuple read in the build walk while each node's
    proxy is at hand (several stages read it; listing the page again costs a proxy a node).
    ``root``: the lxml element of
    node 0 (None for an empty model); ``root.iter(*tags)`` lists elements of some tags in node
    order without giving every node a proxy.

    The per-position and per-node sequences of strings, numbers and flags (``classes``, the
    texts, tails and pieces, the lists the text walks and paths index) are tuples, not lists:
    a tuple of atoms drops out of the cyclic garbage collector at the first collection that
    sees it, a list is walked by every collection while the page is in flight (in a crawl of
    the Python docs they were ~85 % of the references a full collection followed).
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
    classes: tuple[str | None, ...]
    # private state for the lazy queries; positions index all lxml nodes (comments included)
    _node_list: list[etree._Element] | None
    root: etree._Element | None
    _root: etree._Element | None
    _tag_code: dict[str, int]
    _hrefs: tuple[str, ...]
    _series: frozenset[int]
    #: (node, ``style``) of the elements whose ``style`` names ``display``, in node order,
    #: when the build read them (plain proxies); None: the CSS reader searches the tree
    _styled: list[tuple[int, str]] | None
    #: the ``alt`` of each element tagged ``img`` when the build read them, else None
    _read_img_alts: list[str | None] | None
    # per position: an element's .text; a comment's or PI's own text is never read (they are
    # skipped), and where the build read plain proxies (:func:`_all_nodes`) it is None here
    _texts: tuple[str | None, ...]
    _tails: tuple[str | None, ...]
    _pieces: tuple[str, ...]
    _piece_len: NDArray[np.int64]
    _piece_owner: NDArray[np.intp]
    _piece_pos: NDArray[np.intp]
    _piece_tail: NDArray[np.bool_]
    _joined: str
    _end_all: NDArray[np.intp]
    _pos_tid: NDArray[np.int32]
    _hidden_all: NDArray[np.bool_]
    _el_pos: NDArray[np.intp]
    _tags_plain: bool
    # every ``a`` node (href or not) and its ``rel``, read in the build
    _a_rels: tuple[NDArray[np.intp], tuple[str | None, ...]]
    # per position: the values of READ_ATTRIBUTES the build read (plain proxies), else empty
    _read_attributes: dict[str, tuple[str | None, ...]]
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
        return cls._build([], _NodeReads(), url, keep_numbers)

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
        :class:`PageTooComplex` before it is modelled (:func:`_all_nodes` lists at most
        ``max_nodes + 1`` nodes, and counts the elements in C only past that), and so does
        reading the terms of a page of more than ``max_nodes // 4`` distinct words, numbers aside
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
        model = cls._from_element(root, url, keep_numbers, max_nodes)
        if model._block_in_paragraph():
            # model the page as a browser builds it, from a copy: the caller's tree stays as is
            base_url = model.base_url
            shaped = copy.deepcopy(root)
            if close_paragraphs(shaped):
                model = cls._from_element(shaped, url, keep_numbers)
                model.base_url = base_url  # the copy has no document around it (<base href>)
        if max_nodes is not None:
            model.max_words = max_nodes // 4
        return model

    @classmethod
    def _from_element(
        cls, root: etree._Element, url: str, keep_numbers: bool, max_nodes: int | None = None
    ) -> PageModel:
        reads = _NodeReads()
        nodes, plain = _all_nodes(root, max_nodes, reads)
        model = cls._build(nodes, reads, url, keep_numbers)
        if plain:  # let the plain proxies go: element() re-creates the tree's own ones lazily
            model._node_list = None
        return model

    def _block_in_paragraph(self) -> bool:
        """Whether some ``<p>`` holds an element that would have closed it in a browser.
        The closers are marked per distinct tag, then looked up by tag id (``np.isin``'s sort
        of the page's tag ids cost more than the rest of the check)."""
        p = self._tag_code.get("p")
        if p is None:
            return False
        closer = self.tag_mask(CLOSES_P)
        paras = np.flatnonzero(self.tag_id == p)
        inside = range_mask(paras + 1, self.subtree_end[paras], self.n)
        return bool((inside & closer).any())

    @classmethod
    def _build(
        cls, nodes: list[etree._Element], reads: _NodeReads, url: str, keep_numbers: bool
    ) -> PageModel:
        """Fill every array from ``nodes`` = ``list(root.iter())`` (all lxml nodes, pre-order)
        and their ``reads``, taken as they were listed (:class:`_NodeReads`).

        "Positions" index ``nodes`` (elements, comments and PIs); "nodes" index elements only.
        ``reads.plain``: the elements are lxml's plain ``_Element`` proxies
        (:func:`_all_nodes`), whose attributes, texts and tails are read with lxml's own
        ``get`` and getters called straight (no subclass to defer to; a comment's text is then
        None: never read)."""
        plain = reads.plain

        def attribute(name: str, elements: Iterable[etree._Element]) -> tuple[str | None, ...]:
            if plain:
                return tuple(map(_PLAIN_GET, elements, repeat(_PLAIN_KEY[name])))
            return tuple(map(_GET[name], elements))

        model = cls.__new__(cls)
        model.url = url
        model.keep_numbers = keep_numbers
        model._node_list = nodes
        model.root = model._root = nodes[0] if nodes else None
        N = len(nodes)

        # --- the per-node reads (tag, number of children, text, tail), taken while listing
        tag_codes = reads.tag_codes
        pos_code = np.array(reads.codes, dtype=np.intp)
        nchild = np.array(reads.nchild, dtype=np.intp)
        texts: tuple[str | None, ...] = tuple(reads.texts)
        tails: tuple[str | None, ...] = tuple(reads.tails)

        # --- per distinct tag (not per node): element tag ids, hidden / dummy / anchor tags
        name_code, code_tid, code_hidden, code_dummy = tag_tables(tag_codes)  # code order
        model.tag_names = list(name_code)
        model._tags_plain = all(map(_is_plain_tag, tag_codes))
        model._tag_code = name_code
        pos_tid = code_tid[pos_code]
        pos_is_el = pos_tid >= 0

        # --- tree shape over all positions (module docstring), then restricted to elements
        end_all = subtree_ends(nchild)
        depth_all = depths_from_ends(end_all)
        parent_all = parents_from_depths(depth_all)
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
        hidden_all = range_mask(hidden_starts, end_all[hidden_starts], N)
        model.hidden = hidden_all[el_pos]
        model.dummy = model.hidden | code_dummy[pos_code[el_pos]]

        # --- anchors: <a href> (any href, javascript: included: it is still a link to a reader)
        a_tid = name_code.get("a", -2)
        a_nodes = np.flatnonzero(model.tag_id == a_tid)
        anchors = list(map(nodes.__getitem__, el_pos[a_nodes].tolist()))
        hrefs = attribute("href", anchors)
        has_href = _truth_mask(map(is_not, hrefs, repeat(None)))
        rels = attribute("rel", anchors)
        model._series = series_nodes(a_nodes.tolist(), rels)
        model._a_rels = (a_nodes, rels)
        model._hrefs = cast("tuple[str, ...]", tuple(compress(hrefs, has_href)))
        model.anchor_nodes = a_nodes[has_href].astype(np.int32)
        model.is_anchor = np.zeros(n, dtype=bool)
        model.is_anchor[model.anchor_nodes] = True
        model.in_anchor = range_mask(model.anchor_nodes, subtree_end[model.anchor_nodes], n)

        model.classes = (tuple(compress(reads.classes, pos_is_el.tolist())) if plain
                         else attribute("class", compress(nodes, pos_is_el.tolist())))
        model._read_attributes = (
            {name: tuple(values) for name, values in reads.attributes.items()} if plain else {}
        )
        styles = model._read_attributes.get("style")
        model._styled = None if styles is None else _display_styles(styles, node_of_pos)
        model._read_img_alts = reads.img_alts

        # --- visible text pieces: text(p) belongs to p, tail(p) to p's parent element
        text_mask = _truth_mask(map(bool, texts))
        text_mask &= pos_is_el
        text_mask &= ~hidden_all
        tail_mask = _truth_mask(map(bool, tails))
        if N:
            tail_mask[0] = False  # the root's tail is outside the page
        tail_pos = np.flatnonzero(tail_mask)
        tail_owner = node_of_pos[parent_all[tail_pos]]
        tail_visible = ~model.hidden[tail_owner]
        tail_mask[tail_pos] = tail_visible
        pieces = cast("tuple[str, ...]",
                      tuple(chain(compress(texts, text_mask), compress(tails, tail_mask))))
        text_pos = np.flatnonzero(text_mask)
        piece_owner = np.concatenate([node_of_pos[text_pos], tail_owner[tail_visible]])
        model._piece_pos = np.concatenate([text_pos, tail_pos[tail_visible]])
        model._piece_tail = np.arange(len(pieces)) >= len(text_pos)
        model._joined, model._piece_len = joined_nonspace_len(pieces)
        model.own_len = np.bincount(piece_owner, weights=model._piece_len, minlength=n).astype(
            np.int64
        )

        # --- information coverage tree (WISDOM §3.2.1): subtree sums as prefix-sum differences
        model.tlen = subtree_sums(model.own_len, subtree_end)
        model.alen = subtree_sums(np.where(model.in_anchor, model.own_len, 0), subtree_end)
        model.clen = model.tlen - model.alen
        model.n_anchors = subtree_sums(model.is_anchor, subtree_end).astype(np.int32)

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
        return csr_children(self.parent)

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
        return range_mask(starts, self.subtree_end[starts], self.n)

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
        (``p`` ≡ ``p[1]``, :meth:`path`), so the query names it so. When every tag of the page
        is its own lower-case local name (``_tags_plain``: any HTML parse), XPath's name test
        matches exactly the elements of the model's tag id and counts element siblings only,
        as :meth:`path`'s ranks do (comments, PIs and entities are neither nodes nor elements),
        so the query can only find the node itself; on other pages (namespaced XHTML, mixed
        case) a name may match several tag ids or none, and what the query finds is taken only
        at the node's own place in document order (counted in C, a cost that grows with the
        page), else the list decides.
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
                if (isinstance(found, list) and len(found) == 1 and (
                        self._tags_plain
                        or _elements_before(found[0]) - self._root_before == node)):
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

    def attribute_at(
        self, name: str, nodes: Sequence[int] | NDArray[np.integer]
    ) -> list[str | None]:
        """The value of attribute ``name`` of each of ``nodes`` (None where absent), in the
        order given: from the build's reads for ``class``, :data:`READ_ATTRIBUTES` and the
        ``href`` of ``<a href>`` nodes (no element reached: a list page asks the href of each
        entry's title), else read on the elements of the kept node list."""
        asked = np.asarray(nodes, np.intp)
        if name == "class":
            return list(map(self.classes.__getitem__, asked.tolist()))
        if name == "href" and self.is_anchor[asked].all():  # the build read an <a href>'s
            return list(map(self._hrefs.__getitem__,
                            np.searchsorted(self.anchor_nodes, asked).tolist()))
        positions = self._el_pos[asked].tolist()
        read = self._read_attributes.get(name)
        if read is not None:
            return list(map(read.__getitem__, positions))
        listed = self._node_list
        if listed is not None:  # the build's own listing, kept (not made of plain proxies)
            return [listed[p].get(name) for p in positions]
        # an attribute the build did not read: from the nodes' own elements, never a listing
        # of the whole page kept for the model's life (what ``_nodes`` would make)
        return [el.get(name) for el in self.elements(nodes)]

    def nodes_with(self, name: str) -> NDArray[np.intp]:
        """The nodes that carry attribute ``name`` (whatever its value, ``""`` included), in
        node order: from the build's reads for :data:`READ_ATTRIBUTES`, where most pages
        have none (``tuple.count``, C-level, tells) and the others one C-level scan."""
        read = self._read_attributes.get(name)
        if read is None:
            return np.flatnonzero(_truth_mask(map(is_not, self.attribute_values(name),
                                                  repeat(None))))  # fmt: skip
        if read.count(None) == len(read):
            return np.zeros(0, np.intp)
        return np.flatnonzero(_truth_mask(map(is_not, read, repeat(None)))[self._el_pos])

    def rel_anchors(self) -> tuple[NDArray[np.intp], list[str]]:
        """The ``a`` nodes (with an ``href`` or not) that carry a ``rel`` attribute, in node
        order, and its values, as the build read them."""
        a_nodes, rels = self._a_rels
        if rels.count(None) == len(rels):
            return np.zeros(0, np.intp), []
        has = _truth_mask(map(is_not, rels, repeat(None)))
        return a_nodes[has], list(compress(rels, has.tolist()))  # type: ignore[arg-type]

    @property
    def hrefs(self) -> tuple[str, ...]:
        """The ``href`` of each of :attr:`anchor_nodes`, in order, as the build read it."""
        return self._hrefs

    @property
    def names_are_tags(self) -> bool:
        """Every element's lxml tag is its model tag name (no namespace, no upper case: any
        HTML parse), so an XPath name test or an lxml tag filter matches exactly the nodes of
        that model tag."""
        return self._tags_plain

    def attributes(self, names: Sequence[str]) -> dict[str, list[str | None]]:
        """For each of ``names``, the attribute's value on every node (None where absent), in
        node order: one listing of the page's elements and one C-level ``map`` per name (a
        presentation style needs the display attributes of every node, so this beats
        :meth:`element` per node). The listing uses plain proxies where safe
        (:func:`_all_nodes`), read and dropped here: lxml.html's per-node class lookup would
        cost more than the reads. ``class`` and the build's other reads
        (:data:`READ_ATTRIBUTES`, plain proxies) come from the build: no listing."""
        if self.n == 0:
            return {name: [] for name in names}
        if all(name == "class" or name in self._read_attributes for name in names):
            return {name: self.attribute_at(name, range(self.n)) for name in names}
        nodes = self._node_list
        if nodes is None:
            nodes = _all_nodes(self._root)[0]
        out = {}
        for name in names:
            values = np.array(list(map(methodcaller("get", name), nodes)), dtype=object)
            out[name] = values[self._el_pos].tolist()
        return out

    def elements(self, nodes: Sequence[int] | NDArray[np.integer]) -> list[etree._Element]:
        """The lxml elements of ``nodes`` (in the order given), each reached from its nearest
        already reached ancestor by child indices: only the nodes and their ancestors get a
        Python proxy, not every node of the page as a listing would (for a few hundred nodes
        of a page of thousands). Proxies are made by the tree's class lookup as it stands, so
        a caller may read them under a plain lookup and drop them. lxml finds a child by its
        index from the first child, so a child is reached from the last one reached under the
        same parent when that is nearer: nodes in ascending order cost linear time however
        many children a parent has."""
        if self._root is None:
            return []
        parents, ranks = self._child_index
        reached: dict[int, etree._Element] = {0: self._root}
        last: dict[int, tuple[int, etree._Element]] = {}  # parent position → (rank, child)
        out = []
        for p in self._el_pos[np.asarray(nodes, dtype=np.intp)].tolist():
            chain = []
            while p not in reached:
                chain.append(p)
                p = parents[p]
            for q in reversed(chain):
                reached[q] = _child_at(reached[p], ranks[q], last.get(p))
                last[p] = (ranks[q], reached[q])
                p = q
            out.append(reached[p])
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
        finds them, grouped by owner node (then piece order): tokenised in bulk
        (:func:`~wisdom_scrapy.page.tokens.piece_tokens`), then the page's word budget
        (:attr:`max_words`) is checked before any token is turned into terms
        (:func:`~wisdom_scrapy.page.tokens.term_arrays`), the costly step.
        """
        n = self.n
        toks = piece_tokens(self._pieces, self._piece_len > 0)
        self._overlong_tokens = 0
        distinct = toks.distinct
        if not distinct:
            return [], np.zeros(0, np.int32), np.zeros(n + 1, np.int64)
        if self.max_words is not None and len(distinct) > self.max_words:
            # numbers are cheap (no stemming): only words count, and only on a page this wide
            n_words = sum(1 for tok in distinct if not tok.isdigit())
            if n_words > self.max_words:
                raise PageTooComplex(f"{n_words:,} distinct words > {self.max_words:,}")
        vocab, term_ids, term_start, self._overlong_tokens = term_arrays(
            toks, self._piece_owner, n, self.keep_numbers)
        return vocab, term_ids, term_start

    @property
    def vocab(self) -> list[str]:
        """Page-local term vocabulary: ``vocab[term_id]`` is the term (see ``page/terms.py``)."""
        return self._terms[0]

    @cached_property
    def vocab_hashes(self) -> NDArray[np.int64]:
        """:func:`~wisdom_scrapy.page.terms.stable_hash` of each term of :attr:`vocab`
        (read-only), hashed once for the page: its block fingerprints and its link record's
        shingles both start from them."""
        hashes = np.fromiter(map(stable_hash, self.vocab), np.int64, len(self.vocab))
        hashes.flags.writeable = False
        return hashes

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
    def _end_list(self) -> tuple[int, ...]:
        return tuple(self._end_all.tolist())

    @cached_property
    def _pos_kind(self) -> tuple[int, ...]:
        """Per position: how :meth:`text_of` separates it (0 inline, or an event code): by its
        tag, or as a box where the page's own CSS displays an inline element as one."""
        return tuple(self._pos_kinds.tolist())

    @cached_property
    def _pos_kinds(self) -> NDArray[np.int8]:
        """:attr:`_pos_kind` as an array."""
        kind_of_tid = [tag_kind(name) for name in self.tag_names]
        kinds = np.array([*kind_of_tid, 0], dtype=np.int8)  # −1 (non-element) → 0
        out = kinds[self._pos_tid]
        for pos, kind in self._css_boxes.items():
            out[pos] = max(int(out[pos]), kind)
        return out

    @cached_property
    def _css_boxes(self) -> dict[int, int]:
        """Positions the page's own CSS (``<style>`` sheets and ``style`` attributes) displays
        as a box, with their separation (:func:`~wisdom_scrapy.page.css.css_boxes`)."""
        root = self._root
        if root is None:
            return {}
        style = self._tag_code.get("style", -2)
        sheets = [self._texts[p] or "" for p in np.flatnonzero(self._pos_tid == style).tolist()]
        boxes = css_boxes(self, root, sheets, lambda: self._element_nodes, self._styled)
        el_pos = self._el_pos
        return {int(el_pos[i]): kind for i, kind in boxes.items()}

    @cached_property
    def _element_nodes(self) -> dict[etree._Element, int]:
        """Element → node index, for the results of an XPath query on the tree."""
        nodes = self._nodes
        return {nodes[p]: i for i, p in enumerate(self._el_pos.tolist())}

    @cached_property
    def _child_index(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Per position: its parent position and its index among the parent's children
        (comments and processing instructions included, as lxml indexes children)."""
        parent, rank = child_ranks(self._end_all)
        return tuple(parent.tolist()), tuple(rank.tolist())

    @cached_property
    def _skip_pos(self) -> tuple[bool, ...]:
        """Per position: no text of its own in any output (comment, PI, hidden element)."""
        return tuple(self._skip_array.tolist())

    @cached_property
    def _skip_array(self) -> NDArray[np.bool_]:
        return (self._pos_tid < 0) | self._hidden_all

    @cached_property
    def _text_arrays(self) -> TextArrays:
        """The text walk's facts as arrays (:func:`~wisdom_scrapy.page.text.text_in` orders a
        large subtree's events with them); which positions have a text or a tail to give is
        where the build found the visible pieces."""
        n_pos = len(self._end_all)
        has_text = np.zeros(n_pos, bool)
        has_tail = np.zeros(n_pos, bool)
        has_text[self._piece_pos[~self._piece_tail]] = True
        has_tail[self._piece_pos[self._piece_tail]] = True
        return TextArrays(self._end_all, self._pos_kinds, self._skip_array, has_text, has_tail)

    @cached_property
    def _text_walk(self) -> TextWalk:
        """The per-position lists :mod:`~wisdom_scrapy.page.text` walks."""
        return TextWalk(self._end_list, self._pos_kind, self._skip_pos, self._texts, self._tails)

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
        return text_in(self._text_walk, p0, excluded, lambda: self._text_arrays)

    def html_of(
        self, node: int = 0, *, exclude: Iterable[int] | NDArray[np.bool_] | None = None
    ) -> str:
        """Cleaned HTML of ``node``'s subtree: a copy without hidden subtrees (scripts, styles,
        …), comments, processing instructions, ``exclude``d subtrees and ``on*`` attributes,
        and defused (:func:`~wisdom_scrapy.page.markup.defuse`: no ``javascript:`` URL, no
        plugin element). Text after a
        removed element (its tail) is kept. The page's tree is not modified."""
        if self.n == 0:
            return ""
        p0 = self._check_node(node)
        excluded = self._exclude_positions(exclude) or ()
        if self._skip_pos[p0] or p0 in excluded:
            return ""
        end = self._end_list
        drop = dropped_positions(end, self._skip_pos, p0, excluded)
        clone = copy.deepcopy(self.element(node))
        clone.tail = None
        # Reach nodes in the clone by their child indices from ``node`` (a proxy per step, not
        # one per node of the clone), all before the first removal shifts them.
        targets = [self._in_clone(clone, p0, q) for q in drop]
        # the page's CSS boxes (its style sheets stay behind) go along as style attributes
        dropped = range_mask(np.array(drop, np.intp), np.array([end[q] for q in drop], np.intp),
                              len(end)) if drop else None  # fmt: skip
        boxes = [
            (self._in_clone(clone, p0, q), kind)
            for q, kind in self._css_boxes.items()
            if p0 < q < end[p0] and (dropped is None or not dropped[q])
        ]
        return clean_copy(clone, targets, boxes)

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
        return document_base(self._root, self.url)

    def anchor_text(self, node: int) -> str:
        """Whitespace-normalised text of an anchor; for an image link (no text) the ``alt``
        texts of its images."""
        return self.anchor_texts([node])[0]

    def anchor_texts(self, nodes: list[int]) -> list[str]:
        """:meth:`anchor_text` of each of ``nodes``: their positions read in one array look-up,
        the image links' subtrees found in one search (a page has hundreds of links)."""
        if not nodes:  # no link kept: the text walk is not built for nothing
            return []
        walk = self._text_walk
        texts = [flat_text(walk, p) for p in self._el_pos[nodes].tolist()]
        empty = [k for k, text in enumerate(texts) if not text]
        if empty:
            img_nodes, img_alts = self._img_alts
            at = np.asarray(nodes, dtype=np.intp)[empty]
            los = np.searchsorted(img_nodes, at).tolist()
            his = np.searchsorted(img_nodes, self.subtree_end[at]).tolist()
            for k, lo, hi in zip(empty, los, his, strict=True):
                texts[k] = " ".join(
                    chain.from_iterable(alt.split() for alt in img_alts[lo:hi] if alt))
        return texts

    def img_alts(self) -> tuple[NDArray[np.intp], list[str | None]]:
        """The ``<img>`` nodes (in order) and their ``alt`` attributes (None when absent)."""
        return self._img_alts

    @cached_property
    def _img_alts(self) -> tuple[NDArray[np.intp], list[str | None]]:
        """``<img>`` nodes and their ``alt`` (for image links): as the build read them (the
        elements tagged ``img``: all of the nodes when as many), else through lxml's C tag
        filter so that no other node needs a proxy."""
        img = self._tag_code.get("img", -2)
        nodes = np.flatnonzero(self.tag_id == img)
        if not len(nodes):
            return nodes, []
        read = self._read_img_alts
        if read is not None and len(read) == len(nodes):
            return nodes, list(read)
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
        return flat_text(self._text_walk, p0)

    @cached_property
    def _links(self) -> tuple[Link, ...]:
        links, self._overlong_links = resolve_links(
            self.base_url, self.anchor_nodes.tolist(), self._hrefs, self.anchor_texts)
        return links

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

    @cached_property
    def link_nodes(self) -> NDArray[np.int64]:
        """The anchor node of each of :meth:`links`, in their order (read-only, computed
        once: the site view, the template boxes and WISDOM's features all ask)."""
        nodes = np.fromiter((link.node for link in self._links), np.int64, len(self._links))
        nodes.flags.writeable = False
        return nodes

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
        keep = self._piece_len > 0
        return event_stream(
            self._end_all, self._el_pos, self._piece_pos[keep], self._piece_tail[keep],
            self._piece_owner[keep], self._piece_len[keep])

    def first_text_owner(self) -> NDArray[np.int64]:
        """Per node: the node owning the first visible non-blank text piece of its sub-tree
        in document order (:meth:`document_events`), ``n`` when it has none; one sort of the
        pieces instead of the whole event stream's."""
        keep = self._piece_len > 0
        return first_piece_owner(self._end_all, self._el_pos, self._piece_pos[keep],
                                 self._piece_tail[keep], self._piece_owner[keep],
                                 self.subtree_end)  # fmt: skip

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
        return sibling_ranks(self.parent, self.tag_id)

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
    def _tid_list(self) -> tuple[int, ...]:
        return tuple(self.tag_id.tolist())

    @cached_property
    def _parent_list(self) -> tuple[int, ...]:
        return tuple(self.parent.tolist())

    @cached_property
    def _rank_list(self) -> tuple[int, ...]:
        return tuple(self.sibling_rank.tolist())


# -------------------------------------------------------------------- helpers


_PLAIN_LOOKUP = etree.ElementDefaultClassLookup()

_ELEMENTS_BEFORE = etree.XPath("count(preceding::*) + count(ancestor::*)")


def _is_plain_tag(tag: object) -> bool:
    """An lxml ``.tag`` that XPath's name test reads as the model does: not an element's
    (comments, PIs, entities: never matched by a name), or already its lower-case local name."""
    return not isinstance(tag, str) or tag == local_name(tag)


def _child_at(
    parent: etree._Element, rank: int, near: tuple[int, etree._Element] | None
) -> etree._Element:
    """Child ``rank`` of ``parent``, walked to from ``near`` (a child before it, with its
    rank) when that is nearer than the first child."""
    if near is not None and 0 <= rank - near[0] < rank:
        el = near[1]
        for _ in range(rank - near[0]):
            el = el.getnext()
        return el
    return parent[rank]


def _display_styles(
    styles: tuple[str | None, ...], node_of_pos: NDArray[np.integer]
) -> list[tuple[int, str]]:
    """(node, ``style``) of the elements whose ``style`` names ``display``, for the CSS reader
    (:func:`~wisdom_scrapy.page.css.css_boxes`): ``styles`` per position, most of them None,
    which a C-level ``compress`` skips."""
    present = cast("Iterable[tuple[int, str]]", compress(enumerate(styles), styles))
    return [(int(node_of_pos[p]), style) for p, style in present if "display" in style]


def _truth_mask(flags: Iterable[bool]) -> NDArray[np.bool_]:
    """A writable boolean array of ``flags``, filled through a ``bytearray`` (C-level, a byte
    a flag): cheaper than ``np.fromiter``'s conversion an item (the build's text and tail
    masks, ~3,600 flags a pydoc page: 0.100 -> 0.068 ms)."""
    return np.frombuffer(bytearray(flags), dtype=bool)


def _elements_before(el: etree._Element) -> int:
    """Elements before ``el`` in its document's order: its pre-order index among elements."""
    return int(_ELEMENTS_BEFORE(el))


class _NodeReads:
    """The build walk's per-node reads (tag code, number of children, text, tail and, on
    plain proxies, ``class``, :data:`READ_ATTRIBUTES` and the ``alt`` of ``img`` elements),
    taken chunk by chunk as :func:`_listed` lists the nodes.

    Each read is a C-level ``map``; over a whole page's list each would walk its proxies and
    libxml2 nodes again (~0.5 MB for a pydoc page), out of the CPU's cache by then on a busy
    machine. A chunk is read while its proxies, just made, and its nodes are still cached:
    the listing and five reads of 106 pydoc pages, min 2.51 / median 5.70 ms a page -> 1.81 /
    3.34 (chunks of 64 to 1,024 nodes measure alike; :data:`_CHUNK`). ``class`` is read on
    every position of a chunk with lxml's own ``get`` (libxml2 gives no attribute of a
    comment or PI: None) and the build keeps the elements'; other proxies' ``get`` may be a
    subclass' and is called on elements only, by the build. The other attributes are read
    the same way and kept per position (:meth:`PageModel.attribute_at`; the CSS reader's
    ``style`` naming ``display`` among them): in the chunk, three more reads cost ~0.05-0.3 ms
    a pydoc page, where reaching the ~290 elements the article finder asks for them cost ~0.7
    ms, the article fields' query for ``itemprop`` ~0.6 and the CSS reader's search of the
    tree for ``style`` 0.5. The ``alt`` of the elements tagged ``img`` (:attr:`img_alts`, for
    the image links' texts) costs a scan of the chunk's codes: 0.02 ms a pydoc page where a
    walk of the tree for them took 0.34."""

    __slots__ = ("attributes", "classes", "codes", "img_alts", "nchild", "plain", "tag_codes",
                 "tails", "texts")  # fmt: skip

    def __init__(self) -> None:
        self.plain = False  # set by _all_nodes before the listing
        self.tag_codes: defaultdict[object, int] = defaultdict(count().__next__)
        self.codes: list[int] = []
        self.nchild: list[int] = []
        self.texts: list[str | None] = []
        self.tails: list[str | None] = []
        self.classes: list[str | None] = []  # every position's, plain proxies only
        #: every position's value of each of READ_ATTRIBUTES, plain proxies only
        self.attributes: dict[str, list[str | None]] = {name: [] for name in READ_ATTRIBUTES}
        #: the ``alt`` (None when absent) of each element tagged ``img``, in order; None where
        #: the proxies are not plain
        self.img_alts: list[str | None] | None = None

    def __call__(self, chunk: list[etree._Element]) -> None:
        self.codes += map(self.tag_codes.__getitem__, map(_TAG, chunk))
        self.nchild += map(len, chunk)
        if self.plain:
            self.texts += map(_PLAIN_TEXT, chunk)
            self.tails += map(_PLAIN_TAIL, chunk)
            self.classes += map(_PLAIN_GET, chunk, repeat(_PLAIN_KEY["class"]))
            for name, values in self.attributes.items():
                values += map(_PLAIN_GET, chunk, repeat(_PLAIN_KEY[name]))
            img = self.tag_codes.get("img")
            if img is not None and img in (codes := self.codes[-len(chunk) :]):
                cast("list[str | None]", self.img_alts).extend(map(
                    _PLAIN_GET, compress(chunk, map(img.__eq__, codes)), repeat(_PLAIN_KEY["alt"])))
        else:
            self.texts += map(_TEXT, chunk)
            self.tails += map(_TAIL, chunk)


#: nodes listed and read at a time (:class:`_NodeReads`): ~50 KB of proxies and libxml2
#: nodes, within a core's cache; 64, 256 and 1,024 measured alike on pydoc pages
_CHUNK = 256


def _all_nodes(
    root: etree._Element, max_nodes: int | None = None, reads: _NodeReads | None = None
) -> tuple[list[etree._Element], bool]:
    """``list(root.iter())``, avoiding lxml.html's per-node Python class lookup when safe;
    :class:`PageTooComplex` for a tree of more than ``max_nodes`` elements (:func:`_listed`).
    ``reads`` (told whether the proxies are plain) reads the nodes as they are listed.

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
        if reads is not None:
            reads.plain = True
            reads.img_alts = []
        parser.set_element_class_lookup(_PLAIN_LOOKUP)
        try:
            return _listed(root, max_nodes, reads), True
        finally:
            parser.set_element_class_lookup(lxml_html.HtmlElementClassLookup())
    return _listed(root, max_nodes, reads), False


def _listed(
    root: etree._Element, max_nodes: int | None, reads: _NodeReads | None = None
) -> list[etree._Element]:
    """``list(root.iter())``, or :class:`PageTooComplex` when the tree holds more than
    ``max_nodes`` elements; each chunk listed is given to ``reads``. Every element is a node
    of the listing (comments and processing instructions are too), so a listing of at most
    ``max_nodes`` nodes needs no count: only past that are the elements counted (in C, an
    XPath ``count``), and a page refused has had no more than ``max_nodes + 1`` nodes listed.
    Saves the count on every other page (0.37 ms a pydoc page). No proxy listed outlives a
    refusal (they may be plain ones)."""
    nodes_it = root.iter()
    nodes: list[etree._Element] = []
    chunk: list[etree._Element] = []
    unbounded = max_nodes is None
    while True:
        size = _CHUNK if unbounded else min(_CHUNK, cast("int", max_nodes) + 1 - len(nodes))
        if size == 0:  # max_nodes + 1 listed: count the elements
            elements = int(root.xpath("count(descendant-or-self::*)"))
            if elements > cast("int", max_nodes):
                del nodes, nodes_it, chunk  # the traceback keeps this frame: no proxy with it
                raise PageTooComplex(f"{elements:,} elements > {max_nodes:,}")
            unbounded = True
            continue
        chunk = list(islice(nodes_it, size))
        if not chunk:
            return nodes
        nodes += chunk
        if reads is not None:
            reads(chunk)

# One step of PageModel.path that is safe to put in an XPath expression: a plain tag name and
# an optional position.
_PLAIN_STEP = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(\[[0-9]+\])?")
