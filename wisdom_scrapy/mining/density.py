"""Single-page article extraction from structure alone: the article finder the page analysis
starts from, and its fallback with no site context.

WISDOM and InfoDiscoverer find the article of a page by comparing it with the other pages of its
site (term entropy). A page seen alone — the first pages of a cold crawl, a one-off URL — has no
such context, so :func:`single_page_article` finds the article body from the page's structure:
text and link lengths (WISDOM's TLEN/CLEN/ALEN), how text spreads over a node's children
(WISDOM's SII), tag semantics and the boilerplate cues of class/id names that readability and
boilerpipe use. Everything is computed over the :class:`~wisdom_scrapy.page.model.PageModel` arrays
with vectorised numpy; nothing walks the DOM in Python.

The algorithm
    1. **Text blocks.** Every node's own text belongs to its nearest block-level ancestor-or-self
       (p, div, li, h2 …: a "paragraph" as a reader sees it; found for all nodes at once by
       pointer jumping). Per block: text length L, anchor-text length A, content length
       C = L − A (WISDOM's TLEN, ALEN, CLEN restricted to the block), sentence punctuation P.
    2. **Block value** v, in characters: ``v = C − A + 5·min(P, 20) − 15``. A paragraph of prose
       is worth about its length; links cost what they would have been worth; every block pays a
       fixed cost, so menus, tag lists, share bars and lone labels add up negative. Prose in
       *teaser lists* (≥ 3 sibling items whose text starts with a link to another document:
       headline + summary, "more stories") counts half. Blocks inside a subtree marked as
       boilerplate — class/id cues (comment, sidebar, share, related, advert …, unless an
       article cue such as content/entry/story is there too; ids of ≥ 4 words are heading slugs
       and carry no cue), semantic tags (nav, aside, footer, header, form, figcaption …),
       ``display:none`` — are worth only −15: neutral, neither pulling the body towards them nor
       pushing it away; with the site's template given, so are its boxes outside the page's own
       content (the site's evidence first: repeated with links on many pages is template).
       A marked subtree holding half of the page's prose in ≥ 3 paragraphs is a wrapper with
       an unlucky name (``<body class="has-sidebar">``, an ASP.NET page
       ``<form>``, a "sticky sidebar" plugin's column) and is not marked; a footer whose one
       notice is all the prose of an index page stays marked. When every prose block is
       marked, the marks give way (the names cannot all be right on a page with content);
       with the site's template given, the page has an article only if its densest prose is
       then not the template's, and the template stays out of it (a sign-in page's one line
       in a box named ``login`` is less than its footer's notice: no article).
    3. **Body.** WISDOM's information coverage tree aggregates v bottom-up (one prefix sum):
       V(N) = Σ v over T(N). The body maximises V(N) · (1 − ALEN_A/TLEN_A) · (1 + 0.2·SII),
       with SII the entropy of the children's CLEN_A (WISDOM §3.1.3: an article spreads its
       text over many similar paragraph children; 0 in a ``pre`` listing, whose evenly long
       lines are no paragraphs and would let a long listing outscore its post), × 1.5 for
       schema.org's ``itemprop="articleBody"``; a heading alone is never the body. Among the
       best node's descendants scoring within 2 % of it, the deepest is taken: an ancestor
       that adds nothing is not more of an article. No node with a positive score: no article
       (None), e.g. an index page of link lists.
    4. **Exclusion.** Inside the body: marked boilerplate subtrees (2.; with the site's
       template given, a box marked only by its name or a caption tag that holds none of the
       site's template is the page's own content and stays: :func:`_own_boxes`), link lists
       (anchor text ≥ half of the text, ≥ 2 links), net-negative containers with links and
       no prose, teaser items that hold less than half of the body's prose, and the ``h1``
       (the title is metadata). The anchor text of data-table rows (short cells, some text
       outside links) counts as content there: a reference table linking each name is not a
       link list.
    5. **Metadata.** The title (the ``h1`` in or just before the body, if it belongs to the
       article's header rather than the page's) and the short byline/date blocks (``time``,
       ``address``, class names with byline/author/date) between it and the body's text.

Parameters are in :class:`DensityParams`; the defaults were tuned on the even-indexed pages of
the article-extraction benchmark and checked on the odd-indexed ones (see
``benchmarks/README.md``), and every one is a round number in a range where F1 is flat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
from lxml import etree

from wisdom_scrapy.page.model import BLOCK_TAGS, VERBATIM_TAGS, nearest_marked

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = ["DensityParams", "SinglePageArticle", "single_page_article"]


@dataclass(frozen=True)
class DensityParams:
    """Tuning knobs of :func:`single_page_article` (characters unless said otherwise)."""

    #: fixed cost of every text block: a short label is worth less than nothing
    block_cost: float = 15.0
    #: each character of anchor text costs this much (besides not counting as content)
    anchor_cost: float = 1.0
    #: bonus per sentence punctuation mark (, . ; : ! ? and CJK ones) in a block
    punct_bonus: float = 5.0
    #: punctuation marks counted per block at most
    punct_cap: int = 20
    #: a boilerplate-marked subtree is a wrapper, not boilerplate, if it holds this share of the
    #: page's prose …
    wrapper_share: float = 0.5
    #: … in at least this many paragraphs (a footer notice that is all the prose of an index
    #: page is still a footer)
    wrapper_paragraphs: int = 3
    #: SII weight: the body's score is multiplied by ``1 + sii_weight · SII(children, CLEN_A)``
    sii_weight: float = 0.2
    #: link list: anchor text over text at least this …
    link_list_density: float = 0.5
    #: … with at least this many anchors
    link_list_anchors: int = 2
    #: a list of at least this many sibling items whose text starts with a link is a teaser list
    teaser_items: int = 3
    #: … of at most this many characters each
    teaser_max_len: float = 1000.0
    #: the prose of teaser items counts this much
    teaser_discount: float = 0.5
    #: score multiplier of a node marked as the article body (schema.org ``itemprop=articleBody``)
    body_bonus: float = 1.5
    #: nodes scoring within this share of the best are ties; the deepest wins
    tie_share: float = 0.02
    #: a table row is a data row only if none of its cells is longer than this (a layout
    #: table's content cell is)
    data_cell_max_len: float = 500.0


DEFAULT_PARAMS = DensityParams()


@dataclass
class SinglePageArticle:
    """The article of one page, as node indices of its :class:`~wisdom_scrapy.page.model.PageModel`.

    ``body``: the node whose subtree holds the article. ``exclude``: boolean mask over the page's
    nodes marking removed subtrees inside the body (navigation, share bars, related lists, ads,
    comments, link lists); the article text is ``model.text_of(body, exclude=exclude)``.
    ``metadata``: short blocks next to the body (title, byline, date), in document order.
    ``score``: the body's net content value (characters of prose minus boilerplate costs).
    """

    body: int
    exclude: NDArray[np.bool_]
    metadata: list[int] = field(default_factory=list)
    score: float = 0.0
    #: the part of ``exclude`` judged on structure alone (link lists, link boxes without
    #: prose, teaser items): a page seen alone cannot tell a post's own list of links from a
    #: template box, the site can (:mod:`wisdom_scrapy.analysis.page_analysis`, "Site refinement")
    structural: NDArray[np.bool_] | None = None

    def text(self, model: PageModel) -> str:
        """The article text: ``model.text_of(self.body, exclude=self.exclude)``."""
        return model.text_of(self.body, exclude=self.exclude)


# --------------------------------------------------------------------------------------------
# Tag tables
# --------------------------------------------------------------------------------------------

#: Nodes that make a paragraph of their own (their inline descendants' text is theirs): the
#: page model's paragraph tags, less the void ``hr`` and obsolete ``plaintext`` (no text of
#: their own), plus the hidden containers so their text never flows into a visible block.
_BLOCK_TAGS = (BLOCK_TAGS - {"hr", "plaintext"}) | {"noscript", "template"}
#: Semantic boilerplate: never part of an article body.
_BOILER_TAGS = frozenset(
    {"nav", "aside", "footer", "form", "button", "select", "textarea", "input", "label", "menu",
     "dialog", "header", "figcaption", "caption"}
)  # fmt: skip
#: Caption tags: boilerplate to a page alone, the page's own text where the site shows it.
_CAPTION_TAGS = frozenset({"figcaption", "caption"})
#: Headings: never the body by themselves.
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: The article's title: reported as metadata, never part of the body text.
_TITLE_TAGS = frozenset({"h1"})
#: Boxes: regions of a layout, which a run of loose text blocks does not cross (_sibling_run).
_BOX_TAGS = frozenset(
    {"div", "section", "article", "main", "table", "aside", "nav", "header", "footer", "form",
     "iframe", "menu", "dialog", "body", "head"}
)  # fmt: skip
#: Containers that can be link lists or navigation blocks.
_CONTAINER_TAGS = frozenset(
    {"div", "section", "ul", "ol", "dl", "table", "tbody", "tr", "td", "aside", "nav", "footer",
     "header", "menu", "article", "span", "p", "li", "center", "figure", "font"}
)  # fmt: skip

# class/id cues: general words, as in readability's and boilerpipe's regexes (not per site)
_NEG_EXACT = frozenset(
    {"ad", "ads", "adv", "advert", "advertisement", "advertising", "banner", "breadcrumb",
     "breadcrumbs", "comment", "comments", "footer", "foot", "header", "masthead", "menu", "nav",
     "navbar", "navigation", "sidebar", "share", "sharing", "social", "related", "tags", "tag",
     "widget", "widgets", "promo", "sponsor", "sponsored", "newsletter", "subscribe",
     "subscription", "signup", "popup", "modal", "cookie", "cookies", "gdpr", "pagination",
     "pager", "tools", "toolbar", "print", "rss", "outbrain", "taboola", "disqus", "recirc",
     "recommended", "recommendations", "trending", "popular", "hidden", "hide", "skip", "meta",
     "byline", "author", "caption", "credit", "credits", "copyright", "login", "search",
     "follow", "more", "also", "next", "prev", "previous", "teaser", "teasers", "topics",
     "categories", "category", "dateline", "timestamp", "date", "time", "contact", "shoutbox",
     "skyscraper", "combx", "community", "disclaimer", "legal", "footnote", "dropdown"}
)  # fmt: skip
_NEG_SUBSTR = (
    "comment", "sidebar", "related", "share", "social", "advert", "sponsor", "newsletter",
    "subscri", "breadcrumb", "pagination", "widget", "footer", "masthead", "navbar", "navigation",
    "outbrain", "taboola", "disqus", "recommend", "popular", "trending", "promo", "cookie",
    "byline", "caption", "toolbar", "dropdown", "signup",
)  # fmt: skip
_POS_EXACT = frozenset(
    {"article", "articlebody", "body", "content", "entry", "main", "post", "text", "story",
     "blog", "hentry", "prose", "richtext"}
)  # fmt: skip
_POS_SUBSTR = ("article", "content", "entry", "story", "prose", "richtext", "postbody")
_NEG, _POS, _HIDE, _BODY = 1, 2, 4, 8
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def _trie(words: frozenset[str] | tuple[str, ...]) -> re.Pattern[str]:
    """A regex matching any of ``words``, factored as a trie (``re`` tries the alternatives of
    a flat ``a|b|c`` at every position; a trie rejects a position after one character)."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        alts = [re.escape(c) + emit(sub) for c, sub in sorted(node.items()) if c]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(emit(root))


_TOKEN = re.compile(r"[a-z0-9]+")
_NEG_SUBSTR_RE = _trie(_NEG_SUBSTR)
_POS_SUBSTR_RE = _trie(_POS_SUBSTR)


@lru_cache(maxsize=1 << 14)
def _name_cue(value: str | None) -> int:
    """Boilerplate (``_NEG``) / article (``_POS``) cue bits of a class or id value: one of the
    exact words as a whole token, or one of the substrings anywhere (``relatedPosts``,
    ``comments-area``, ``sharebar``). camelCase is split first (``adSlot`` → ``ad slot``)."""
    if not value:
        return 0
    if not value.islower():
        value = _CAMEL.sub(" ", value)
    text = value.lower()
    tokens = _TOKEN.findall(text)
    neg = not _NEG_EXACT.isdisjoint(tokens) or _NEG_SUBSTR_RE.search(text) is not None
    pos = not _POS_EXACT.isdisjoint(tokens) or _POS_SUBSTR_RE.search(text) is not None
    return (_NEG if neg else 0) | (_POS if pos else 0)


@lru_cache(maxsize=1 << 14)
def _id_cue(value: str | None) -> int:
    """Cue bits of an id: as for a class name, except for slugs of headings (≥ 4 words:
    ``id="getting-a-little-more-advanced"``, Sphinx/Markdown/MediaWiki section anchors), whose
    words are the page's content, not its template's."""
    if not value or len(_TOKEN.findall(value.lower())) >= _SLUG_WORDS:
        return 0
    return _name_cue(value)


_SLUG_WORDS = 4


@lru_cache(maxsize=1 << 10)
def _itemprop_cue(value: str | None) -> int:
    if not value:
        return 0
    return _POS | _BODY if "articlebody" in value.lower() else 0


@lru_cache(maxsize=1 << 12)
def _style_cue(value: str | None) -> int:
    return _HIDE if value and _HIDDEN_STYLE.search(value) else 0


# --------------------------------------------------------------------------------------------
# Node arrays
# --------------------------------------------------------------------------------------------


def _root(model: PageModel) -> etree._Element:
    """The model's root element, without making the model list every node's proxy."""
    root = getattr(model, "root", None)
    if root is None:
        root = getattr(model, "_root", None)
    if root is None or not isinstance(root, etree._Element):
        root = model.element(0)
    return root


#: Tags whose class/id/hiding attributes are read (inline formatting and links are not: their
#: cues add nothing that the surrounding block's do not, and attribute reads cost time).
_CUE_TAGS = frozenset(
    {"div", "section", "article", "aside", "nav", "header", "footer", "ul", "ol", "li", "p",
     "span", "table", "td", "figure", "main", "form", "body", "blockquote"}
)  # fmt: skip
#: (attribute, cue function, minimum TLEN of the nodes it is read on) besides ``class``, read
#: on every node by the model (:attr:`PageModel.classes`). A hidden or ``articleBody`` node
#: only matters when it holds some text.
_CUE_ATTRIBUTES = (
    ("id", _id_cue, 20),
    ("style", _style_cue, 20),
    ("itemprop", _itemprop_cue, 100),
)


def _attribute_cues(
    model: PageModel,
) -> tuple[NDArray[np.int64], NDArray[np.intp], list[str | None]]:
    """Cue bits of every node from its class, id, itemprop and hiding attributes.

    Only visible container-like nodes with text are read (``_CUE_TAGS``): a cue on a node
    without text changes no block value. The values come from the model's build walk
    (:meth:`PageModel.attribute_at`: no element is reached), ``id``, ``style`` and
    ``itemprop`` only on the nodes with enough text for them. Returns (cues, the nodes read,
    their class values).
    """
    n = model.n
    tagged = np.flatnonzero(model.tag_mask(_CUE_TAGS))
    read = tagged[(model.tlen[tagged] > 0) & ~model.hidden[tagged]]
    classes = model.attribute_at("class", read)
    sel_cues = _per_distinct(_name_cue, classes)
    tlen = model.tlen[read]
    for name, fn, min_len in _CUE_ATTRIBUTES:
        some = np.flatnonzero(tlen >= min_len)
        if len(some):
            sel_cues[some] |= _per_distinct(fn, model.attribute_at(name, read[some]))
    cues = np.zeros(n, np.int64)
    cues[read] = sel_cues
    return cues, read, classes


def _per_distinct(
    fn: Callable[[str | None], Any], values: list[str | None], dtype: type = np.int64
) -> NDArray[Any]:
    """``fn`` of each of ``values`` as an array, asked once per distinct value: a page repeats
    its class names (a thousand values, a few dozen distinct) and most nodes have no ``id``
    or ``style`` at all, and a dict look-up costs a fraction of a cache hit of ``fn``."""
    distinct = dict.fromkeys(values)
    for value in distinct:
        distinct[value] = fn(value)
    return np.fromiter(map(distinct.__getitem__, values), dtype, len(values))


#: UTF-8 bytes → 1 for sentence punctuation , . ; : ! ?, 2 for the NUL piece separator,
#: 3 for the lead bytes of the CJK marks 。、 (E3 80 xx) and ，；：！？ (EF BC xx), else 0.
_BYTE_KIND = bytes(
    1 if byte in b",.;:!?" else 2 if byte == 0 else 3 if byte in (0xE3, 0xEF) else 0
    for byte in range(256)
)
_CJK_MARKS = frozenset(
    {(0xE3, 0x80, 0x81), (0xE3, 0x80, 0x82)}
    | {(0xEF, 0xBC, last) for last in (0x8C, 0x9B, 0x9A, 0x81, 0x9F)}
)


def _piece_punctuation(joined: str, n_pieces: int) -> NDArray[np.int64] | None:
    """Punctuation marks in each NUL-separated piece of ``joined`` (None if the count differs).

    Works on the UTF-8 bytes, classified by one ``bytes.translate`` (C): NUL and ASCII
    punctuation are single bytes that never occur inside a multi-byte sequence, so one
    ``flatnonzero`` pass finds the separators, the marks and the candidate CJK marks, whose
    three bytes are then checked on those few positions only.
    """
    raw = joined.encode("utf-8", "surrogatepass")
    kind = np.frombuffer(raw.translate(_BYTE_KIND), np.uint8)
    where = np.flatnonzero(kind)
    what = kind[where]
    seps = where[what == 2]
    if len(seps) + 1 != n_pieces:
        return None
    marks = where[what == 1]
    lead = where[what == 3]
    if len(lead):
        data = np.frombuffer(raw, np.uint8)
        lead = lead[lead + 2 < len(data)]
        key = (data[lead].astype(np.int64) << 16) | (data[lead + 1].astype(np.int64) << 8)
        key |= data[lead + 2]
        codes = np.array(sorted((a << 16) | (b << 8) | c for a, b, c in _CJK_MARKS))
        marks = np.concatenate([marks, lead[np.isin(key, codes)]])
    return np.bincount(np.searchsorted(seps, marks), minlength=n_pieces)


def _punctuation(model: PageModel) -> NDArray[np.int64]:
    """Sentence punctuation marks in every node's own visible text (text + children's tails).

    Uses the page model's joined text pieces when it has them (no second read of the tree);
    otherwise reads ``.text`` and ``.tail`` of every element (C-level maps).
    """
    n = model.n
    joined = getattr(model, "_joined", None)
    owner = getattr(model, "_piece_owner", None)
    if isinstance(joined, str) and isinstance(owner, np.ndarray):
        if len(owner) == 0:
            return np.zeros(n, np.int64)
        counts = _piece_punctuation(joined, len(owner))
        if counts is not None:
            return np.bincount(owner, weights=counts, minlength=n).astype(np.int64)
    out = np.zeros(n, np.int64)
    els = list(_root(model).iter(etree.Element))
    parents = model.parent.astype(np.int64)
    for attr, owners in ((_TEXT, np.arange(n)), (_TAIL, parents)):
        pieces = [s.replace("\x00", "") if s else "" for s in map(attr, els)]
        counts = _piece_punctuation("\x00".join(pieces), n)
        if counts is None:  # pragma: no cover - NULs were removed above
            continue
        ok = owners >= 0
        out += np.bincount(owners[ok], weights=counts[ok], minlength=n).astype(np.int64)
    out[model.hidden] = 0
    return out


_TEXT = attrgetter("text")
_TAIL = attrgetter("tail")


def _subtree_sum(values: NDArray, subtree_end: NDArray) -> NDArray[np.float64]:
    """Σ ``values`` over every node's subtree (pre-order ranges → prefix-sum differences)."""
    csum = np.zeros(len(values) + 1, np.float64)
    np.cumsum(values, out=csum[1:])
    return csum[subtree_end] - csum[:-1]


def _range_mask(starts: NDArray, ends: NDArray, n: int) -> NDArray[np.bool_]:
    """Mask of the union of the node ranges ``[starts[k], ends[k])``."""
    if len(starts) == 0:
        return np.zeros(n, bool)
    diff = np.bincount(starts, minlength=n + 1) - np.bincount(ends, minlength=n + 1)
    return np.cumsum(diff[:n]) > 0


def _teaser_items(
    model: PageModel, min_items: int, max_len: float
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Nodes inside teaser items: lists of ≥ ``min_items`` sibling items whose text starts with
    a link (a headline linking elsewhere, then a summary), making up at least half of their
    parent's children with text — "more stories", "related", index-like lists.
    Returns (mask of nodes inside teaser items, mask of the items themselves).

    An item's first text is found for all nodes at once: the first text-bearing node at or
    after it in pre-order, if it is inside its subtree.
    """
    n = model.n
    texty = np.flatnonzero(model.own_len > 0)
    if len(texty) == 0 or n < 2:
        return np.zeros(n, bool), np.zeros(n, bool)
    k = np.searchsorted(texty, np.arange(n))
    first = texty[np.minimum(k, len(texty) - 1)]
    lead = (k < len(texty)) & (first < model.subtree_end) & model.in_anchor[first]
    parent = model.parent.astype(np.int64)
    lead &= model.clen > 0  # a headline with a summary, not a bare link
    lead &= model.tlen <= max_len  # an item, not a page region
    lead &= 2 * model.tlen <= model.tlen[np.maximum(parent, 0)]  # one of several
    lead[0] = False
    with_text = (model.tlen > 0) & ~model.dummy
    with_text[0] = False
    children = np.bincount(parent[with_text], minlength=n)

    def items_of_lists(lead: NDArray[np.bool_]) -> NDArray[np.bool_]:
        items = np.bincount(parent[lead], minlength=n)
        lists = (items >= min_items) & (2 * items >= children)
        return lead & lists[np.maximum(parent, 0)]

    item = items_of_lists(lead)
    if item.any():  # the headline must lead elsewhere: not "#fragment" (a back-reference)
        candidates = np.flatnonzero(item)
        anchor = first[candidates].copy()  # in an <a href>: climb to it (a few levels)
        up = ~model.is_anchor[anchor] & (anchor > 0)
        while up.any():
            anchor[up] = parent[anchor[up]]
            up = ~model.is_anchor[anchor] & (anchor > 0)
        lead[candidates] = _leaves_page(model, anchor)
        item = items_of_lists(lead & item)
    item_nodes = np.flatnonzero(item)
    return _range_mask(item_nodes, model.subtree_end[item_nodes], n), item


def _leaves_page(model: PageModel, anchors: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per anchor node: its ``href`` leads to another document (not ``#…``, not
    ``javascript:``); True where it cannot be told."""
    hrefs = model.hrefs
    pos = np.searchsorted(model.anchor_nodes, anchors)
    ok = pos < len(model.anchor_nodes)
    ok[ok] = model.anchor_nodes[pos[ok]] == anchors[ok]
    out = np.ones(len(anchors), bool)
    for k in np.flatnonzero(ok).tolist():
        href = hrefs[pos[k]].strip().lower()
        out[k] = bool(href) and not href.startswith(("#", "javascript:"))
    return out


def _sii(
    model: PageModel, values: NDArray[np.float64], keep: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """WISDOM's SII over children (§3.1.3) for every node: entropy of the children's share of
    ``values`` with log base m = number of non-dummy children; 0 with fewer than two."""
    n = model.n
    child = np.arange(1, n)
    par = model.parent[1:].astype(np.int64)
    use = keep[1:]
    child, par = child[use], par[use]
    m = np.bincount(par, minlength=n)
    total = np.bincount(par, weights=values[child], minlength=n)
    w = np.zeros(len(child))
    np.divide(values[child], total[par], out=w, where=total[par] > 0)
    plogp = np.zeros(len(child))
    np.multiply(w, np.log(w, out=np.zeros_like(w), where=w > 0), out=plogp)
    h = -np.bincount(par, weights=plogp, minlength=n)
    out = np.zeros(n)
    ok = m > 1
    out[ok] = h[ok] / np.log(m[ok])
    return np.clip(out, 0.0, 1.0)


# --------------------------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------------------------


def single_page_article(
    model: PageModel,
    *,
    params: DensityParams = DEFAULT_PARAMS,
    template: NDArray[np.bool_] | None = None,
    content: NDArray[np.bool_] | None = None,
) -> SinglePageArticle | None:
    """Find the article body of a page seen alone (see the module docstring for the method).

    ``template``: the template boxes of the page's site (nodes whose text, holding a link, its
    other pages repeat: :func:`~wisdom_scrapy.mining.repetition.repeated_blocks`). A page alone
    cannot tell a page-wide wrapper with an unlucky class name from a long comment thread, nor
    whether the introduction and link lists around the densest paragraph belong to the article;
    the site can. With it, a boilerplate-named subtree is a wrapper only if it holds some of the
    site's template (menus, navigation), the template boxes outside the page's own content weigh
    as boilerplate whatever their names (:func:`_site_boxes`: a near-empty post is a short
    article or none, never its sidebar) once the site's evidence has decided that the page has
    an article of its own (:func:`_own_prose_wins`, when every prose block is marked), and
    the body is widened to its largest ancestor that
    adds no template and no boilerplate-marked text (:func:`_widen`), and a body that is one
    loose paragraph or list among its parent's over the run of loose text blocks around it
    (:func:`_sibling_run`: content written straight into ``<body>``); ``content`` marks the
    template nodes that stand inside the page's own content
    (:func:`~wisdom_scrapy.mining.repetition.embedded_lines`): still the site's template for the
    wrapper test, no border for the widening. Returns None when the page
    has no visible text or no block that reads like prose.
    """
    n = model.n
    if n == 0 or model.tlen[0] <= 0:
        return None
    p = params
    cues, cue_nodes, classes = _attribute_cues(model)
    # inside a listing (pre), class names are syntax classes ("comment", "meta", "tag" of a
    # highlighter), not the page's template: no cue there, or the listing loses its comments
    verbatim_tag = model.tag_mask(VERBATIM_TAGS)
    verbatim = np.flatnonzero(verbatim_tag)
    listing = _range_mask(verbatim, model.subtree_end[verbatim], n)
    cues[listing & ~verbatim_tag] = 0
    tag_block = model.tag_mask(_BLOCK_TAGS)
    tag_block[0] = True
    hidden = model.hidden | ((cues & _HIDE) > 0)

    # 1. text blocks
    block_of = nearest_marked(tag_block, model.parent)
    own = model.own_len.astype(np.float64)
    L = np.bincount(block_of, weights=own, minlength=n)
    A = np.bincount(block_of, weights=np.where(model.in_anchor, own, 0.0), minlength=n)
    P = np.bincount(block_of, weights=_punctuation(model), minlength=n)
    C = L - A
    has_text = L > 0

    # 2. block values
    v = C + p.punct_bonus * np.minimum(P, p.punct_cap) - p.anchor_cost * A
    v -= p.block_cost
    v[~has_text] = 0.0
    teaser, teaser_start = _teaser_items(model, p.teaser_items, p.teaser_max_len)
    v[teaser & (v > 0)] *= p.teaser_discount
    pos_v = np.maximum(v, 0.0)
    Pos = _subtree_sum(pos_v, model.subtree_end)

    boiler_tag = model.tag_mask(_BOILER_TAGS)
    marked = (((cues & _NEG) > 0) & ((cues & _POS) == 0)) | boiler_tag | hidden
    marked[0] = False
    paragraphs = _subtree_sum(v > 0, model.subtree_end)
    wrapper = (Pos >= p.wrapper_share * Pos[0]) & (paragraphs >= p.wrapper_paragraphs)
    if template is not None:  # a page-wide wrapper holds the site's template; comments do not
        wrapper &= _subtree_sum(template.astype(np.float64), model.subtree_end) > 0
    marked &= ~wrapper  # a page-wide wrapper with an unlucky name is not boilerplate
    starts = np.flatnonzero(marked)
    site_box = _site_boxes(model, template, content)
    in_boiler = _range_mask(starts, model.subtree_end[starts], n) | site_box
    v_eff = np.where(in_boiler & has_text, -p.block_cost, v)
    v_eff[hidden] = 0.0

    # 3. body: the node with the largest aggregated value, damped / boosted
    weight = _body_weight(model, p, cues, listing)
    no_body = hidden | model.tag_mask(_HEADING_TAGS)  # a title alone is no article
    if not (v_eff > 0).any():  # every prose block is marked: ignore the names' marks
        marked[:] = False
        if not _own_prose_wins(model, p, v, site_box, no_body, weight):
            return None  # the site's template is the page's prose: no article of its own
        in_boiler = site_box  # the site's template stays template: a short article, or none
        v_eff = np.where(site_box & has_text, -p.block_cost, v)
        if not (v_eff > 0).any():
            return None
    V = _subtree_sum(v_eff, model.subtree_end)
    body = _densest(model, p, V * weight, in_boiler | no_body)
    if body is None:
        return None
    outside = np.zeros(n, bool)  # the body's children outside the article (_sibling_run)
    if template is not None:
        body = _widen(model, body, in_boiler | hidden)
        body, outside = _sibling_run(model, body, in_boiler | hidden)
    score = float(V[body])  # of the body returned, widened or not

    # 4. exclusion inside the body
    lo, hi = body + 1, int(model.subtree_end[body])
    exclude = np.zeros(n, bool)
    structural = np.zeros(n, bool)
    if hi > lo:
        sub = slice(lo, hi)
        container = model.tag_mask(_CONTAINER_TAGS)[sub]
        alen4, V4, Pos4, data_row = _data_table_values(
            model, p, block_of, v, v_eff, in_boiler, V, Pos
        )
        link_list = (
            container
            & (alen4[sub] >= p.link_list_density * model.tlen[sub])
            & (model.n_anchors[sub] >= p.link_list_anchors)
        )
        no_prose = container & (Pos4[sub] <= 0) & (V4[sub] < 0) & (alen4[sub] > 0)
        minor = Pos[sub] < p.wrapper_share * Pos[body]
        teasers = teaser_start[sub] & minor & ~data_row[sub]
        # the title is metadata, not body text — on a page seen alone; the site's own article
        # container holding its heading says otherwise (``template`` given: site refinement)
        title = model.tag_mask(_TITLE_TAGS)[sub] & (template is None)
        structural[sub] = link_list | no_prose | teasers
        if template is not None:  # the site decides over names (:func:`_own_boxes`)
            marked[sub] &= ~_own_boxes(model, cues, template, content)[sub]
        exclude[sub] = marked[sub] | structural[sub] | hidden[sub] | title
        structural[sub] &= ~(marked[sub] | hidden[sub] | title)
        exclude |= outside

    # 5. metadata
    metadata = _metadata(model, cue_nodes, classes, body, exclude)
    return SinglePageArticle(body, exclude, metadata, score, structural)


def _body_weight(
    model: PageModel, p: DensityParams, cues: NDArray[np.int64], listing: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Per node, what its aggregated value V is multiplied by for the body's score: damped by
    its link density, raised by the spread of its text over its children (SII) and by the
    ``articleBody`` mark (module docstring, step 3)."""
    tlen = model.tlen.astype(np.float64)
    link_density = np.divide(model.alen, tlen, out=np.zeros(model.n), where=tlen > 0)
    sii = _sii(model, model.clen.astype(np.float64), ~model.dummy)
    # a listing's lines (the spans of highlighted code) are one block, not evenly spread
    # paragraphs: no SII there, or a long listing outscores the article around it
    sii[listing] = 0.0
    weight = (1.0 - link_density) * (1.0 + p.sii_weight * sii)
    weight[(cues & _BODY) > 0] *= p.body_bonus
    return weight


def _densest(
    model: PageModel, p: DensityParams, score: NDArray[np.float64], blocked: NDArray[np.bool_]
) -> int | None:
    """The node of the best ``score`` outside ``blocked``, or the deepest of its descendants
    within ``p.tie_share`` of it (an ancestor that adds nothing is not more of an article);
    None when no node scores above 0."""
    score = np.where(blocked, -np.inf, score)
    best = float(score.max())
    if not best > 0:
        return None
    top = int(np.argmax(score))
    end = int(model.subtree_end[top])
    ties = top + np.flatnonzero(score[top:end] >= best * (1.0 - p.tie_share))
    return int(ties[np.argmax(model.depth[ties])])


def _own_prose_wins(
    model: PageModel,
    p: DensityParams,
    v: NDArray[np.float64],
    site_box: NDArray[np.bool_],
    no_body: NDArray[np.bool_],
    weight: NDArray[np.float64],
) -> bool:
    """Whether a page whose every prose block is marked (by a name, a tag or the site's
    template) has an article of its own: the body found with every mark ignored, the site's
    template boxes (``site_box``) included, holds prose outside those boxes. The role is
    decided with the site's evidence before its template is set aside to pick the body: a
    sign-in or contact page whose one line sits in a box named so, beside a footer notice of
    more prose, is no article (issue 30), while a documentation page whose whole text an
    unlucky name marks (``id="topics-cache"``) is one. Without a site view (``site_box``
    empty) the page's densest prose is its own."""
    if not site_box.any():
        return True
    body = _densest(model, p, _subtree_sum(v, model.subtree_end) * weight, no_body)
    if body is None:
        return False
    inside = slice(body, int(model.subtree_end[body]))
    return bool(((v[inside] > 0) & ~site_box[inside]).any())


def _site_boxes(
    model: PageModel, template: NDArray[np.bool_] | None, content: NDArray[np.bool_] | None
) -> NDArray[np.bool_]:
    """Nodes inside the site's template boxes that stand outside the page's own content.

    Text the site repeats on many pages, holding links (a sidebar's category list and month
    archive, "Posted by … Posted in …"), is the theme's whatever its names and its prose: it
    weighs as boilerplate and is never the body. A post that is a video and one line is then a
    one-line article, and a post with no text of its own no article, rather than the sidebar's
    text. Template inside the content (an editors' signature among the post's paragraphs,
    :func:`~wisdom_scrapy.mining.repetition.embedded_lines`) is the post's. Nothing without a
    site view (``template`` None): a page alone cannot tell its template."""
    if template is None:
        return np.zeros(model.n, bool)
    border = np.flatnonzero(template if content is None else template & ~content)
    return _range_mask(border, model.subtree_end[border], model.n)


def _own_boxes(
    model: PageModel,
    cues: NDArray[np.int64],
    template: NDArray[np.bool_],
    content: NDArray[np.bool_] | None,
) -> NDArray[np.bool_]:
    """Boxes inside a body that only their names or caption tags mark as boilerplate, and that
    hold none of the site's template: the page's own content. A DocBook manual's
    ``div.sidebar`` / ``div.note`` ("BACK TO BASICS", "TIP") and a post's image captions carry
    text no other page of the site repeats; a comment thread or a share bar named so holds the
    site's repeated labels and links ("Reply", "Share"), and stays out. On a page alone (no
    site view) the names decide, as readability's and boilerpipe's do."""
    named = ((cues & _NEG) > 0) & ((cues & _POS) == 0)
    captions = model.tag_mask(_CAPTION_TAGS)
    # repeated among the post's own paragraphs (``content``) is repeated all the same
    repeated = template if content is None else template | content
    holds = _subtree_sum(repeated.astype(np.float64), model.subtree_end) > 0
    return (named | captions) & ~holds


def _widen(model: PageModel, body: int, blocked: NDArray[np.bool_]) -> int:
    """The largest ancestor-or-self of ``body`` none of whose text outside ``body``'s subtree
    lies in a ``blocked`` node: the article grows over its own headings, introduction and
    lists up to the first container that also holds template."""
    text_blocked = np.flatnonzero(blocked & (model.own_len > 0))
    end, parent = model.subtree_end, model.parent
    while body > 0:
        up = int(parent[body])
        lo, hi = np.searchsorted(text_blocked, [up, end[up]])
        if hi > lo:  # blocked text somewhere in the ancestor: is it all inside the body?
            inside = np.searchsorted(text_blocked[lo:hi], [body, end[body]])
            if inside[1] - inside[0] < hi - lo:
                break
        body = up
    return body


def _sibling_run(
    model: PageModel, body: int, blocked: NDArray[np.bool_]
) -> tuple[int, NDArray[np.bool_]]:
    """The widened ``body``, when it is a loose text block (a paragraph, list or listing, not
    a box: :data:`_BOX_TAGS`), grown over its siblings: the contiguous run of its parent's
    children around it that are loose text blocks too and hold no ``blocked`` text.

    A page whose content has no container of its own (its headings, paragraphs and lists
    written straight into ``<body>``, after the site's header) has the page-wide container as
    the only node that holds it all; that container holds the template, so the widening stops
    at one paragraph or list. The run takes the neighbours up to the first box or template:
    a box beside the body (a ``div`` of navigation the site does not repeat word for word, a
    comment thread's wrapper) is a region of the layout, not a paragraph of the article; and a
    body that is a box is the article's own container, whose loose neighbours (the post's
    heading and byline) are its metadata.
    Returned as the parent and the mask of its children outside the run (excluded), or
    ``body`` and an empty mask when no sibling with text joins it."""
    n = model.n
    none = np.zeros(n, bool)
    boxes = model.tag_mask(_BOX_TAGS)
    if body == 0 or boxes[body]:
        return body, none
    up = int(model.parent[body])
    kids = model.children(up)
    end = model.subtree_end
    csum = np.concatenate([[0], np.cumsum(blocked & (model.own_len > 0))])
    free = csum[end[kids]] == csum[kids]  # per child: no blocked text in its subtree
    free &= ~boxes[kids]
    k = int(np.flatnonzero(kids == body)[0])
    first, last = k, k
    while first > 0 and free[first - 1]:
        first -= 1
    while last + 1 < len(kids) and free[last + 1]:
        last += 1
    joined = np.r_[kids[first:k], kids[k + 1 : last + 1]]
    if not (model.tlen[joined] > 0).any() or _loose_text_outside(model, up, kids, first, last):
        return body, none
    outside = np.r_[kids[:first], kids[last + 1 :]]
    return up, _range_mask(outside, end[outside], n)


def _loose_text_outside(
    model: PageModel, parent: int, kids: NDArray[np.integer[Any]], first: int, last: int
) -> bool:
    """Whether ``parent`` holds text of its own outside the run ``kids[first:last + 1]``: its
    text before a first child outside the run, the tails of the children outside it and of
    the run's last child. An article given as ``parent`` minus its children outside the run
    would keep that text (a footer's loose copyright line after the template's box), so the
    run is not taken then."""
    element = model.element(parent)
    if first > 0 and (element.text or "").strip():
        return True
    edges = [*kids[:first].tolist(), *kids[last:].tolist()]
    return any((model.element(kid).tail or "").strip() for kid in edges)


_CELL_TAGS = frozenset({"td", "th"})


def _data_table_values(
    model: PageModel,
    p: DensityParams,
    block_of: NDArray[np.int64],
    v: NDArray[np.float64],
    v_eff: NDArray[np.float64],
    in_boiler: NDArray[np.bool_],
    V: NDArray[np.float64],
    Pos: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """ALEN, V and Pos for step 4 with the anchor text of data-table rows counted as content.

    A reference table (package | popularity | size | description, the first column linking
    each name) is made of short, often linked cells: every row pays the block cost and its
    links cost their length, so the table looks like a link list or a net-negative block and
    would be removed. A row is *data* when ≥ 2 of its ``td``/``th`` cells hold text, at least
    one cell holds text outside links (a navigation table links every cell), no cell is longer
    than ``data_cell_max_len`` and it holds no nested row (a layout table's row holds a page
    region). For the containers that hold such rows (the row itself, its table and above), its
    anchor text counts as content: ALEN loses it, and it adds to the rows' values instead of
    costing. Nodes inside a row (cells, lists in a cell) keep the plain values.
    Returns (ALEN, V, Pos, data-row mask).
    """
    n = model.n
    tag = model.tag_mask(("tr",))
    cell = model.tag_mask(_CELL_TAGS)
    cell[0] = False
    par = model.parent.astype(np.int64)
    cells = np.flatnonzero(cell & tag[np.maximum(par, 0)])
    owner = par[cells]
    texts = np.bincount(owner, weights=model.tlen[cells] > 0, minlength=n)
    prose = np.bincount(owner, weights=model.clen[cells] > 0, minlength=n)
    long = np.bincount(owner, weights=model.tlen[cells] > p.data_cell_max_len, minlength=n)
    nested = _subtree_sum(tag, model.subtree_end) > 1
    data_row = tag & (texts >= 2) & (prose >= 1) & (long == 0) & ~nested
    if not data_row.any():
        return model.alen.astype(np.float64), V, Pos, data_row
    rows = np.flatnonzero(data_row)
    ends = model.subtree_end[rows]
    in_rows = _range_mask(rows, ends, n)
    inside = _range_mask(rows + 1, ends, n)
    w = np.where(model.in_anchor & in_rows & ~in_boiler, model.own_len, 0).astype(np.float64)
    gain = 2.0 * p.anchor_cost * np.bincount(block_of, weights=w, minlength=n)
    alen4 = np.where(inside, model.alen, model.alen - _subtree_sum(w, model.subtree_end))
    V4 = np.where(inside, V, _subtree_sum(v_eff + gain, model.subtree_end))
    Pos4 = np.where(inside, Pos, _subtree_sum(np.maximum(v + gain, 0.0), model.subtree_end))
    return alen4, V4, Pos4, data_row


_META_NAMES = ("byline", "author", "date", "time", "published", "updated", "dateline")
_META_TAGS = frozenset({"time", "address"})
_NAV_TAGS = frozenset({"nav", "menu", "footer", "aside"})
_META_MAX_LEN = 200


def _metadata(
    model: PageModel,
    cue_nodes: NDArray[np.intp],
    classes: list[str | None],
    body: int,
    exclude: NDArray[np.bool_],
) -> list[int]:
    """Title / byline / date nodes next to the body (see the module docstring, step 5).

    The title is the first ``h1`` inside the body, else the last one before it, if the smallest
    ancestor holding both is mostly the body (the article's own header, not the page's). The
    scope of the other metadata is that ancestor, else the body's parent. Candidates are
    ``time``/``address`` elements and nodes whose class names a byline, author or date, that
    are short (≤ 200 characters), not in navigation, and come before the body's first text
    (after it come comments, with their own authors and dates); only the outermost of nested
    candidates is kept.
    """
    n = model.n
    end = model.subtree_end
    out: list[int] = []
    h1 = model.tag_code("h1")
    title = -1
    if h1 >= 0:
        heads = np.flatnonzero((model.tag_id == h1) & (model.tlen > 0))
        inside = heads[(heads > body) & (heads < end[body])]
        before = heads[heads < body]
        if len(inside):
            title = int(inside[0])
        elif len(before):
            title = int(before[-1])
    scope = int(model.parent[body]) if body > 0 else 0
    if title >= 0:
        common = scope
        while common > 0 and not common <= title < end[common]:
            common = int(model.parent[common])
        if 2 * model.tlen[body] >= model.tlen[common]:  # the article's header, not the page's
            out.append(title)
            scope = common
    starts = np.flatnonzero(exclude)
    text_nodes = ~_range_mask(starts, end[starts], n)  # in the body's text
    text_nodes[:body] = False
    text_nodes[end[body] :] = False
    kept = np.flatnonzero(text_nodes & (model.own_len > 0))
    # candidates lie in the scope and before the body's first text: only the class names of
    # that stretch are asked (a handful of nodes, not every cue node of the body)
    stop = min(int(kept[0]) if len(kept) else int(end[body]), int(end[scope]))
    navs = np.flatnonzero(model.tag_mask(_NAV_TAGS))
    cand = model.tag_mask(_META_TAGS)
    lo, hi = np.searchsorted(cue_nodes, [scope, stop])
    cand[cue_nodes[lo:hi]] |= _per_distinct(_meta_name, classes[lo:hi], bool)
    cand &= (model.tlen > 0) & (model.tlen <= _META_MAX_LEN) & ~text_nodes
    cand &= ~_range_mask(navs, end[navs], n)
    cand[:scope] = False
    cand[stop:] = False
    idx = np.flatnonzero(cand)
    if len(idx):  # keep only the outermost candidates
        cand &= ~_range_mask(idx + 1, end[idx], n)
    out += np.flatnonzero(cand).tolist()
    return sorted(set(out))


@lru_cache(maxsize=1 << 12)
def _meta_name(cls: str | None) -> bool:
    text = (cls or "").lower()
    return any(name in text for name in _META_NAMES)
