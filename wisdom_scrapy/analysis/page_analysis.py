"""One page → its informative structure: article body, metadata, TOC links and the page's role.

:func:`analyze_page` combines three views of a page: its own structure (the single-page
extractor :func:`wisdom_scrapy.mining.density.single_page_article`), what its site repeats
(:class:`~wisdom_scrapy.mining.repetition.BlockRepetition`: the template, seen from a handful of
pages) and the site's term entropies (WISDOM, :mod:`wisdom_scrapy.mining.wisdom`, meaningful
from :attr:`WisdomParams.warm_pages` pages on).

Site refinement (:class:`SiteView`; measured in ``benchmarks/blog_sites.py``)
    A page's own structure finds the densest prose well (the single-page extractor leads the
    article-extraction benchmark); what it cannot tell alone, the site's repetition can:

    * a long comment thread with a boilerplate class name from a page-wide wrapper with an
      unlucky one: a wrapper holds the site's template boxes (menus, navigation), a thread
      does not;
    * how far the article reaches around its densest paragraph: the body widens to its
      largest ancestor that adds no template box and no boilerplate-marked text (an
      introduction, the section's own link lists, its heading);
    * a post's own list of links from a link box: what the page alone excluded for its
      structure (link lists, teasers) comes back unless the site repeats its text;
    * a block the author repeats in many posts (a signature, a release note's standard
      paragraph) from the theme's template: a repeated block standing among the page's own
      paragraphs is inside the content (:func:`~wisdom_scrapy.mining.repetition.
      embedded_lines`), so it neither stops the widening nor stays excluded;
    * a list page from an article: a page whose titled items hold most of its own text is a
      TOC (:mod:`wisdom_scrapy.mining.listing`), whatever the ratio of anchor text to context
      (teasers and whole posts in a list outweigh their title links).

    When the page shows the site's template (:meth:`SiteView.of`), the role is "toc" for a list
    page, else "article" when the refined body has text, else "other". A page that shows no
    template box (the site's first pages, another layout) is analysed as a page alone.

Not an article (the feed holds articles, each once)
    A page whose article was found is "other" when that article is not the page's own:

    * on a page that shows the site's template, when its densest prose is the template's (a
      share, contact or sign-in page whose only prose besides the footer is a line its names
      mark as boilerplate: :func:`~wisdom_scrapy.mining.density.single_page_article` finds no
      article then, the template boxes being never the body), or when every character the
      article keeps is the site's template;
    * on a page that shows none of it (a print or AMP copy has a layout of its own), when at
      least :data:`COPY_SHARE` of the article's text is in blocks other pages of the site hold
      too, or is a piece of a box the site repeats on more than √N of its N pages (a promotion
      page whose headline and line are the inline parts of the rotating advertisement box:
      :func:`~wisdom_scrapy.mining.repetition.repeated_parts`): most of what it says is said
      elsewhere, by a page that shows the template. (A post's paragraphs are on its full-post
      lists as well, and it stays an article: it shows the template.)

    Both read only the site's block repetition as it stands when the page is analysed (the
    held pages of a cold site are analysed once its template shows): a copy analysed before
    the page it copies was fetched is still an article; the crawl reaches copies through the
    links of their originals, so the original comes first as a rule.

Warm mode (WISDOM §3)
    Node features from the page model and the site's entropies, then two k-MIB searches with
    merging and condensing: article blocks by CLEN_A under the article type constraint, TOC
    blocks by API_A (or by ALEN_A when API cannot score the page's anchors, §4.4). The TOC
    blocks give a TOC page's links (with the list items above); the article blocks give the
    metadata below, and the article body when there is no site view (no ``repetition``, or a
    page that shows none of the site's template) or the single-page extractor finds none: then
    it is the lowest common ancestor of the article blocks without everything that is neither
    in a block nor on the path to one, and without condensed sub-trees.

One finder a page
    When the site view decides a warm page's role and article, k-MIB's searches run only for
    what the page's item takes from them: the TOC search on a list page (its TOC links and
    their blocks), the article search on an article page (its metadata blocks, the article
    entropy), neither on another page; a list page gets no article body either (its item has
    none). The role decision's own figures (``article_context``, ``toc_anchor_text``) and the
    TOC search's (``zero_api_ratio``, ``toc_by_api``) are then left out, and blocks carry no
    figures. ``every_block`` (the ``blocks`` item field, ``scrapy wisdom-show``) runs both
    searches. Without a site view both searches run: they decide the role.

Metadata (§3.3)
    DSTM merges the article's title, date, author … blocks into it ("the distribution of their
    context length is skewed"). A merged (non-skeleton) article block is reported as metadata
    when it is a single paragraph (at most one block-level element with text of its own)
    shorter than the median paragraph of the skeleton blocks — "short" measured against the
    page's own article, not a fixed length. Metadata stays in ``article_text`` (WISDOM's
    informative structure holds it) and is listed in ``metadata`` and as "metadata" blocks.

Headings without a section
    A heading (h1–h6) labels the content after it, up to the next heading of the same or a
    higher rank. When condensing took all of that content out (the link list under "Related
    stories", a pagination bar under its label), the heading is left labelling nothing and is
    excluded with it. Only the page's own structure decides: no word list, no length.

Repeated blocks
    With a :class:`~wisdom_scrapy.mining.repetition.BlockRepetition` of the site
    (``repetition``), article condensing removes a sub-tree below the type constraint's line
    even within the standard-error tolerance when it is a template box the site repeats word
    for word on many pages (an advertisement, a promotion); see that module for the rule. The
    TOC structure drops its blocks that lie in such a box outside the page's list entries
    (:func:`_outside_template`): a page lists what it holds alone, and k-MIB's entropy alone
    rates the anchors of a box the site rotates over a share of its pages as informative
    while the site is small.

Role without the site's view (page level; site-level LAMIS roles come later)
    Decided from the WISDOM blocks found, by what a reader gets from them: A = anchor text
    (ALEN) in the TOC structure, C = context (CLEN, text outside anchors) in the article
    structure and in the TOC structure. ``"toc"`` when A > C, else ``"article"`` when an article
    block holds context, else ``"other"``. One case needs care: a TOC list with abstracts
    (teasers, §1's "block 2") is found by both miners, and TOC condensing takes the link-less
    abstracts out of the TOC structure; their context belongs to the list, so the article
    structure's context inside TOC blocks is not counted — except inside a TOC block that is a
    strict ancestor of the article's skeleton (a container of article and link boxes, which the
    TOC miner can select on an article page: the article is not its abstract).

Cold mode
    With fewer site pages than :attr:`WisdomParams.warm_pages` (32 by default, derived from
    TC_article — see there), or with ``store=None`` and no ``snapshot``, no entropy is used and
    ``single_page`` is True: the article comes from the single-page extractor, refined by the
    site's view when ``repetition`` shows the page's template (list pages are TOCs then, with
    their entries' titles as links: :func:`toc_links_of`); with no repetition the page is truly
    alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from wisdom_scrapy.mining.density import SinglePageArticle, single_page_article
from wisdom_scrapy.mining.listing import LIST_SHARE, item_share, list_entries, not_own_text
from wisdom_scrapy.mining.repetition import (
    block_nodes,
    embedded_lines,
    repeated_parts,
    repeated_text,
    stored_repetition,
    template_boxes,
    url_counted,
)
from wisdom_scrapy.mining.wisdom import (
    DEFAULT_PARAMS,
    InformativeStructure,
    MinedBlock,
    NodeFeatures,
    WisdomParams,
    mine,
    node_features,
    toc_feature,
)
from wisdom_scrapy.page.arrays import nearest_marked
from wisdom_scrapy.page.links import Link
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key, page_turn_numbers

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.mining.repetition import BlockRepetition
    from wisdom_scrapy.store import EntropySnapshot, TermStore

#: a page alone (none of its site's template shows) whose article has at least this share of
#: its text on other pages of the site is a copy (a print or AMP version), not an article:
#: most of what it says is said elsewhere (module docstring, "Not an article")
COPY_SHARE = 0.5

__all__ = [
    "Block",
    "PageAnalysis",
    "analyze_page",
    "clean_features",
    "owner_of",
    "term_weights",
]


@dataclass(frozen=True)
class Block:
    """One informative block of a page.

    ``kind``: "article", "toc" or "metadata" (a short block merged into the article).
    ``node``: its root in the page model; ``path``: the root's tag path (``PageModel.path``);
    ``origin``: "skeleton", "dstm", "cstm<k>" (WISDOM) or "density" (single-page mode).
    ``figures``: CII, API_A, mean API, SII of the mining feature, f_A, ALEN_A, CLEN_A, TLEN_A,
    LAMIS link entropy and number of anchors of the block's sub-tree.
    """

    kind: str
    node: int
    path: str
    origin: str = "skeleton"
    figures: dict[str, float] = field(default_factory=dict)


def term_weights(
    model: PageModel, occ_keep: NDArray[np.bool_], weights: Any = None
) -> dict[str, float]:
    """{term: Σ weight} over the kept term occurrences (weight 1 when ``weights`` is None)."""
    ids = model.term_ids
    if not len(ids):
        return {}
    w = occ_keep.astype(np.float64) if weights is None else np.where(occ_keep, weights, 0.0)
    sums = np.bincount(ids, w, minlength=len(model.vocab))
    vocab = model.vocab
    return {vocab[i]: round(float(sums[i]), 6) for i in np.flatnonzero(sums > 0).tolist()}


def owner_of(model: PageModel) -> NDArray[np.int64]:
    """The node owning each term occurrence of ``model``."""
    return np.repeat(np.arange(model.n), np.diff(model.term_start))


def clean_features(model: PageModel, keep: NDArray[np.bool_]) -> dict[str, float]:
    """Term counts of the text of the kept nodes (a bag of words, as the thesis feeds the
    template- and SST-cleaned pages to mining)."""
    owner = owner_of(model)
    return term_weights(model, keep[owner] & ~model.hidden[owner])


@dataclass
class PageAnalysis:
    """The informative structure of one page (see the module docstring).

    ``role``: "article", "toc" or "other". ``article_text``: the article body, paragraphs
    separated by ``"\\n\\n"`` ("" when there is none); ``article_html`` (computed on first
    access) its cleaned HTML. ``metadata``: texts of the short blocks merged into the article.
    ``toc_links`` (computed on first access): (absolute URL, anchor text) of the page's TOC
    links, in document order (:func:`toc_links_of`): the links of the TOC structure (TOC
    blocks without their condensed parts), and inside a list page's entries
    (``toc_entries``) only those they list (``toc_listed``: their titles); never a link to
    another page of the list.
    ``blocks``: every block found. ``single_page``: analysed without site entropy. ``figures``:
    page-level numbers (pages the entropies come from, mean term entropy of the page and of the
    article, zero-API ratio, whether TOCs were mined by API …). ``features``: the cleaned
    page's feature vector ``{term: weight}``: the term counts of the article body (computed on
    first access), or what a cleaner of :mod:`wisdom_scrapy.analysis.cleaners` set.
    """

    url: str
    role: str
    title: str
    article_text: str = ""
    metadata: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    single_page: bool = False
    figures: dict[str, float] = field(default_factory=dict)
    model: PageModel | None = field(default=None, repr=False)
    article_node: int | None = None
    article_exclude: NDArray[np.bool_] | None = field(default=None, repr=False)
    toc_cover: NDArray[np.bool_] | None = field(default=None, repr=False)
    toc_entries: NDArray[np.bool_] | None = field(default=None, repr=False)
    toc_listed: NDArray[np.bool_] | None = field(default=None, repr=False)
    _html: str | None = field(default=None, repr=False)
    _toc_links: list[Link] | None = field(default=None, repr=False)
    _features: dict[str, float] | None = field(default=None, repr=False)
    _turns: frozenset[int] | None = field(default=None, repr=False)

    @property
    def features(self) -> dict[str, float]:
        """The cleaned page's feature vector (class docstring), computed once."""
        if self._features is None:
            self._features = {}
            if self.model is not None and self.article_node is not None:
                model, body = self.model, self.article_node
                keep = np.zeros(model.n, bool)
                keep[body : model.subtree_end[body]] = True
                if self.article_exclude is not None:
                    keep &= ~self.article_exclude
                self._features = clean_features(model, keep)
        return self._features

    @features.setter
    def features(self, value: dict[str, float]) -> None:
        self._features = value

    @property
    def toc_links(self) -> list[tuple[str, str]]:
        """(absolute URL, anchor text) of the page's TOC links (:attr:`toc_anchor_links`: what
        the page lists, no pagination), computed once."""
        return [(lk.url, lk.text) for lk in self.toc_anchor_links]

    @property
    def page_turn_urls(self) -> list[str]:
        """URLs of the other pages of the page's list that it links to (:func:`page_turns`:
        ``rel="next|prev"``, a pager), in document order without repeats: left out of the TOC
        links, yet the way to the rest of the list."""
        if self.model is None:
            return []
        turns = self.page_turn_nodes
        return list(dict.fromkeys(lk.url for lk in self.model.links() if lk.node in turns))

    @property
    def page_turn_nodes(self) -> frozenset[int]:
        """:func:`page_turns` of the page, computed once: the TOC links and the page turns
        both ask (every link of a long index page compared with the page's URL)."""
        if self._turns is None:
            self._turns = frozenset() if self.model is None else page_turns(self.model)
        return self._turns

    @property
    def toc_anchor_links(self) -> list[Link]:
        """The page's TOC links (class docstring, "TOC links") with their ``<a>`` nodes,
        computed once."""
        if self._toc_links is None:
            cover = self.toc_cover
            if self.model is None or cover is None or not cover.any():
                self._toc_links = []
            else:
                self._toc_links = toc_links_of(self.model, cover, self.toc_entries,
                                               self.toc_listed, self.page_turn_nodes)
        return self._toc_links

    @property
    def article_html(self) -> str:
        """Cleaned HTML of the article body ("" when there is none), computed once."""
        if self._html is None:
            if self.model is None or self.article_node is None:
                self._html = ""
            else:
                self._html = self.model.html_of(self.article_node, exclude=self.article_exclude)
        return self._html


def toc_links_of(
    model: PageModel,
    cover: NDArray[np.bool_],
    entries: NDArray[np.bool_] | None = None,
    listed: NDArray[np.bool_] | None = None,
    turns: frozenset[int] | None = None,
) -> list[Link]:
    """The links a TOC page lists: those inside ``cover`` (the TOC structure). Inside the
    entries of a list page (``entries``, the sub-trees of its titled items; ``listed``, the
    anchors they list: :func:`~wisdom_scrapy.mining.listing.list_entries`) only the listed
    anchors — the links to the posts, not to an entry's author or tags.

    A link to another page of the list leads to more of the list, not to an entry, and is
    left out when the page says so (:func:`page_turns`): ``rel="next|prev"``, or a pager.
    A URL that differs from the page's by a number alone is no evidence: ``/book/`` →
    ``chapter2.html``, ``/library/`` → ``sqlite3.html`` and ``/archive/`` → ``/archive/2023/``
    have a page turn's shape too. ``turns``: :func:`page_turns` of ``model`` when known."""
    if turns is None:
        turns = page_turns(model)
    pick = np.asarray(cover, bool).copy()
    if entries is not None and listed is not None:
        pick &= ~entries | listed  # inside the entries: their listed anchors only
    return [lk for lk in model.links() if pick[lk.node] and lk.node not in turns]


_DIGITS = re.compile(r"\d+")
#: characters that point a link forwards or backwards ("Next »", "‹ Older")
_ARROWS = frozenset("«»‹›←→⟵⟶⇐⇒◀▶<>")


def page_turns(model: PageModel) -> frozenset[int]:
    """Anchor nodes of ``model`` that turn the page of its list, with the page's evidence:
    ``rel="next|prev"``, or a pager. A pager is a group of sibling links (those under the
    link's nearest ancestor holding another link) with pager anchors (:func:`_pager_anchor`)
    that all lead to another page of the list
    (:func:`~wisdom_scrapy.page.urls.page_turn_numbers`) or to the page itself, one of them
    to the page's neighbour (its number ± 1: "1 2 3 … Next »" on page 2). A chapter list
    links number 1 too, which is no page turn of ``/book/``; a year index at ``/archive/``
    has no "2"; module or post titles are no pager anchors: none is a pager. A link whose
    siblings are no pager is a page turn alone when its anchor holds an arrow ("Older »")
    and it leads to a neighbour; a plain "Older posts" without ``rel`` and outside a pager
    is not told from an entry and stays."""
    links = model.links()
    turns = set(model.series_anchors())
    nodes = np.fromiter((lk.node for lk in links), np.int64, len(links))
    by_url = {url: _turn_numbers(model.url, url) for url in {lk.url for lk in links}}
    numbers = [by_url[lk.url] for lk in links]
    judged: dict[range, bool] = {}  # sibling group -> whether it is a pager
    for k, link in enumerate(links):
        if numbers[k] is None or link.node in turns:
            continue
        group = _sibling_links(model, nodes, link.node)
        if group not in judged:
            judged[group] = _is_pager(model, links, numbers, group)
        if judged[group]:
            turns.update(links[j].node for j in group)
        elif _ARROWS & set(link.text) and _is_pager(model, links, numbers, range(k, k + 1)):
            turns.add(link.node)
    return frozenset(turns)


def _sibling_links(model: PageModel, nodes: NDArray[np.int64], node: int) -> range:
    """Positions (in ``nodes``, the page's link anchors in document order) of the links under
    the nearest ancestor of ``node`` that holds another link (empty when none does)."""
    end, parent = model.subtree_end, model.parent
    a = int(parent[node])
    while a >= 0:
        lo, hi = np.searchsorted(nodes, [a, end[a]]).tolist()
        if hi - lo >= 2:
            return range(lo, hi)
        a = int(parent[a])
    return range(0)


def _is_pager(model: PageModel, links: list[Link], numbers: list[tuple[int, int] | None],
              group: range) -> bool:
    """Whether the links at ``group`` are a pager (:func:`page_turns`)."""
    return bool(group) and all(
        links[j].url == model.url or (
            (pair := numbers[j]) is not None and _pager_anchor(links[j].text, pair[1]))
        for j in group) and any(
        (pair := numbers[j]) is not None and abs(pair[0] - pair[1]) == 1 for j in group)


def _pager_anchor(text: str, number: int) -> bool:
    """Whether ``text``, the anchor of a link to page ``number`` of the list, reads as a
    pager's: a number or arrows ("2", "…", "»"), an arrowed word ("Next »") or a word or two
    whose number, if any, is the page's ("Older posts", "Page 2"); an entry's title ("Post 7
    on roses", "Chapter 2: Setup") is longer."""
    words = text.split()
    return (not any(c.isalpha() for c in text) or bool(_ARROWS & set(text))
            or (len(words) <= 2 and all(int(d) == number for d in _DIGITS.findall(text))))


def _turn_numbers(page: str, target: str) -> tuple[int, int] | None:
    """(page number, target number) when one of the two URLs is another page of the other's
    list (either way: "2" on page 1, "1" on page 2), else None."""
    pair = page_turn_numbers(page, target)
    if pair is not None:
        return pair
    back = page_turn_numbers(target, page)
    return None if back is None else (back[1], back[0])


def analyze_page(
    html: str | bytes | None,
    url: str,
    store: TermStore | None = None,
    *,
    site: str | None = None,
    model: PageModel | None = None,
    snapshot: EntropySnapshot | None = None,
    target_terms: Callable[[str], Collection[str] | None] | None = None,
    params: WisdomParams | None = None,
    repetition: BlockRepetition | None = None,
    every_block: bool = False,
) -> PageAnalysis:
    """Analyse one page: its role, article body and metadata, TOC links and blocks.

    ``html`` (str or bytes) is parsed unless ``model`` (a :class:`PageModel` of the page, e.g.
    the one the spider middleware built) is given. Entropies come from ``snapshot`` if given,
    else from ``store`` for ``site`` (default: the URL's host, as the store is fed). Below
    ``params.warm_pages`` known pages the page is analysed alone (module docstring).
    ``target_terms(url)`` returns the terms of a fetched linked page, or None when it has not
    been fetched: it enables WISDOM's anchor precision index for TOC blocks.
    ``repetition``: the site's block repetition counts (module docstring, "Repeated blocks");
    by default the store's for ``site`` (:func:`~wisdom_scrapy.mining.repetition.
    stored_repetition`), so the page gets the crawl's item with the crawl's store.
    ``every_block``: run both k-MIB searches on every warm page and give each block its
    figures, for the block diagnostics (the items' ``blocks``, ``scrapy wisdom-show``); by
    default a search runs only where its answer is used (module docstring, "One finder a
    page").
    """
    params = params or DEFAULT_PARAMS
    if model is None:
        if html is None:
            raise ValueError("analyze_page needs html or a model")
        model = PageModel.from_html(html, url)
    entropy: NDArray[np.float64] | None = None
    n_pages = 0
    if snapshot is not None:
        n_pages = snapshot.n_pages
        if params.is_warm(n_pages):
            entropy = snapshot.entropy(model.vocab)
    elif store is not None:
        site = site or host_key(url)
        n_pages = store.page_count(site)
        if params.is_warm(n_pages):
            values = store.entropy(site, model.vocab)
            entropy = np.fromiter((values[t] for t in model.vocab), np.float64, len(model.vocab))
    if repetition is None and store is not None:
        repetition = stored_repetition(store, site or host_key(url))
    if model.n == 0:
        return PageAnalysis(url, "other", "", single_page=entropy is None, model=model,
                            figures={"site_pages": float(n_pages)})  # fmt: skip
    site_view = SiteView.of(model, repetition) if repetition is not None else None
    if entropy is None:
        result = _single_page(model, url, n_pages, site_view)
    else:
        result = _warm(model, url, entropy, n_pages, target_terms, params, site_view,
                       every_block)
    if result.role == "article" and repetition is not None:
        result.role = _article_or_other(result, site_view, repetition)
    return result


def _kept_text(result: PageAnalysis) -> NDArray[np.bool_]:
    """Node mask of the article's kept nodes that own text."""
    model, body = result.model, result.article_node
    assert model is not None and body is not None
    kept = np.zeros(model.n, dtype=bool)
    kept[body : model.subtree_end[body]] = True
    if result.article_exclude is not None:
        kept &= ~result.article_exclude
    return kept & (model.own_len > 0)


def _article_or_other(
    result: PageAnalysis, site_view: SiteView | None, repetition: BlockRepetition
) -> str:
    """"article", or "other" for a page whose article is not one of its own (module
    docstring, "Not an article"): all of its kept text is the site's template, or, on a page
    that shows none of the site's template, most of it is on other pages of the site too."""
    model = result.model
    if model is None or result.article_node is None:
        return result.role
    text = _kept_text(result)
    own = model.own_len
    if site_view is not None:
        mine = text & ~model.subtree_mask(site_view.template)
        return "article" if own[mine].sum() > 0 else "other"
    pages = repetition.pages_of(model)
    counted = url_counted(repetition, result.url)
    block = nearest_marked(block_nodes(model), model.parent)
    boxed = repeated_parts(model, repetition)
    elsewhere = text & ((pages[block] >= (2 if counted else 1)) | boxed[block])
    share = float(own[elsewhere].sum()) / max(1.0, float(own[text].sum()))
    result.figures["text_elsewhere"] = share
    return "other" if share >= COPY_SHARE else "article"


# --------------------------------------------------------------------------------------------
# warm mode
# --------------------------------------------------------------------------------------------


def _block_figures(f: NodeFeatures, node: int, feature: str) -> dict[str, float]:
    m = f.model
    return {
        "cii": float(f.cii[node]),
        "api_a": float(f.api_a[node]),
        "mean_api": float(f.mean_api[node]),
        "scored_anchors": float(f.known_a[node]),
        "sii": float(f.sii(feature)[node]),
        "f_a": float(f.feature(feature)[node]),
        "alen_a": float(m.alen[node]),
        "clen_a": float(m.clen[node]),
        "tlen_a": float(m.tlen[node]),
        "link_entropy": float(f.link_entropy[node]),
        "anchors": float(m.n_anchors[node]),
    }


def _body_and_exclude(
    model: PageModel, structure: InformativeStructure
) -> tuple[int, NDArray[np.bool_]]:
    """The LCA of the blocks and the node mask text_of must skip under it."""
    roots = [b.node for b in structure.blocks]
    body = model.lca(roots)
    keep = structure.covered(model)
    parent = model.parent
    for r in roots:  # the paths from the blocks up to the body stay (their own text joins them)
        p = int(parent[r])
        while p >= body and not keep[p]:
            keep[p] = True
            if p == body:
                break
            p = int(parent[p])
    keep[body] = True
    n = model.n
    in_body = np.zeros(n, dtype=bool)
    in_body[body : model.subtree_end[body]] = True
    exclude = in_body & ~keep
    return body, exclude


def _list_region(
    model: PageModel, toc: InformativeStructure, article_skeleton: list[int]
) -> NDArray[np.bool_]:
    """Node mask of the TOC blocks that are link lists rather than wrappers of the article:
    every TOC block except those that are strict ancestors of an article skeleton node. Inside
    such a list, context the TOC condensing took out (abstracts, teasers) is the list's, not
    an article's."""
    n = model.n
    end = model.subtree_end
    roots = [
        b.node for b in toc.blocks if not any(b.node < s < end[b.node] for s in article_skeleton)
    ]
    if not roots:
        return np.zeros(n, dtype=bool)
    r = np.array(roots, dtype=np.int64)
    diff = np.bincount(r, minlength=n + 1) - np.bincount(end[r], minlength=n + 1)
    return np.cumsum(diff[:n]) > 0


def _outside_template(
    model: PageModel, toc: InformativeStructure, site_view: SiteView
) -> InformativeStructure:
    """``toc`` without its blocks that lie in one of the site's template boxes
    (:attr:`SiteView.boxes`) outside the page's list entries (:attr:`SiteView.items`).
    k-MIB judges anchors by their terms' entropy, which rates a box the site rotates over a
    share of its pages (an advertisement) as informative while the site is small (its terms'
    entropy grows with the site, the box's share of pages stays); the site's repetition
    tells the box from the page's own list already (its text on more than √N of the N pages,
    with a link elsewhere: :mod:`~wisdom_scrapy.mining.repetition`), and a page lists what it
    holds alone. The text alone is fingerprinted, so a short entry of the page's own list
    ("open()", "Introduction": each page's leads elsewhere) is as repeated as a box: inside
    the entries, and inside a kept block, a box stays. The page's navigation (``nav``,
    ``aside``, ``menu``) counts as a box from the first page on, as it does for the list
    entries (:func:`~wisdom_scrapy.mining.listing.not_own_text`): a sidebar listing the
    site's posts is the site's, however few of the pages fed so far carry it."""
    in_box = not_own_text(model, site_view.boxes) & ~model.subtree_mask(site_view.items)
    blocks = [b for b in toc.blocks if not in_box[b.node]]
    if len(blocks) == len(toc.blocks):
        return toc
    return replace(toc, blocks=blocks, skeleton=[s for s in toc.skeleton if not in_box[s]])


def _own_lengths(model: PageModel) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per node: own context length and own anchor-text length."""
    own = model.own_len
    return np.where(model.in_anchor, 0, own), np.where(model.in_anchor, own, 0)


def _searches(site_view: SiteView | None, found: bool, every_block: bool) -> tuple[bool, bool]:
    """Which k-MIB searches a warm page needs, (article, TOC) (module docstring, "One finder
    a page"): both without a site view (they decide the role) or with ``every_block``; with
    one, the TOC search for a list page (its TOC links) and the article search for a page
    whose article the site view found (its metadata), nothing for another page."""
    if site_view is None or every_block:
        return True, True
    return found and not site_view.is_list, site_view.is_list


def _warm(
    model: PageModel,
    url: str,
    entropy: NDArray[np.float64],
    n_pages: int,
    target_terms: Callable[[str], Collection[str] | None] | None,
    params: WisdomParams,
    site_view: SiteView | None = None,
    every_block: bool = False,
) -> PageAnalysis:
    is_list = site_view is not None and site_view.is_list
    found = None  # the site view's article (module docstring, "Site refinement")
    if site_view is not None and (every_block or not is_list):
        found = _article_of(model, site_view)
    with_article, with_toc = _searches(site_view, found is not None, every_block)
    empty = InformativeStructure("article", "clen", [], np.zeros(model.n, dtype=bool), [])
    article, toc = empty, replace(empty, kind="toc", feature="")
    f: NodeFeatures | None = None
    figures: dict[str, float] = {}  # those of the searches that ran
    if with_article or with_toc:
        # API (the targets' terms) only serves the TOC search
        f = node_features(model, entropy, n_pages=n_pages,
                          target_terms=target_terms if with_toc else None)
    if f is not None and with_article:
        # the site's template boxes (none shown: no site view) lose condensing's benefit of doubt
        repeated = site_view.boxes if site_view is not None else None
        article = mine(f, "article", params, repeated=repeated)
    if f is not None and with_toc:
        toc_mode, zero_ratio = toc_feature(f, params)
        toc = mine(f, "toc", params, feature=toc_mode)
        if site_view is not None:
            toc = _outside_template(model, toc, site_view)
        figures.update(zero_api_ratio=zero_ratio, toc_by_api=float(toc.feature == "api"))
    art_cover = article.covered(model) if article.blocks else np.zeros(model.n, dtype=bool)
    toc_cover = toc.covered(model) if toc.blocks else np.zeros(model.n, dtype=bool)
    role = "other"
    if with_article and with_toc:
        own_c, own_a = _own_lengths(model)
        toc_region = _list_region(model, toc, article.skeleton)
        context = int(own_c[art_cover & ~toc_region].sum() + own_c[toc_cover & toc_region].sum())
        anchors = int(own_a[toc_cover].sum())
        figures.update(article_context=float(context), toc_anchor_text=float(anchors))
        role = ("toc" if anchors > context else "article" if article.blocks and context > 0
                else "other")  # fmt: skip
    if site_view is not None:  # the site decides (module docstring, "Site refinement")
        role = "toc" if is_list else "article" if found is not None else "other"
        if is_list:
            toc_cover = toc_cover | model.subtree_mask(site_view.items)
    result = PageAnalysis(url, role, model.title, single_page=False, model=model)
    if site_view is not None and is_list:
        result.toc_entries = model.subtree_mask(site_view.items)
        result.toc_listed = site_view.listed
    meta_nodes = _article_and_metadata(result, article, found, art_cover, entropy,
                                       None if f is None else f.layout)  # fmt: skip
    meta_set = set(meta_nodes)
    for b in article.blocks:
        kind = "metadata" if b.node in meta_set else "article"
        result.blocks.append(_block(f, b, kind, "clen", every_block))
    for b in toc.blocks:
        result.blocks.append(_block(f, b, "toc", toc.feature, every_block))
    if toc_cover.any():
        result.toc_cover = toc_cover
    page_en = float(entropy[model.term_ids].mean()) if len(model.term_ids) else float("nan")
    figures.update(site_pages=float(n_pages), page_entropy=page_en,
                   article_entropy=result.figures.get("article_entropy", float("nan")),
                   list_share=site_view.list_share if site_view is not None else 0.0)
    result.figures = {k: figures[k] for k in _WARM_FIGURES if k in figures}
    return result


#: the page figures of a warm page, in the order the items list them (those of a search that
#: did not run are left out: :func:`_searches`)
_WARM_FIGURES = ("site_pages", "page_entropy", "article_entropy", "article_context",
                 "toc_anchor_text", "zero_api_ratio", "toc_by_api", "list_share")


def _block(f: NodeFeatures | None, mined: MinedBlock, kind: str, feature: str,
           with_figures: bool) -> Block:
    """The :class:`Block` of a block a search found (so ``f`` is there), with its figures
    when asked (``every_block``: they are the block diagnostics, and the API ones need the
    TOC search's anchor precision)."""
    assert f is not None
    figures = _block_figures(f, mined.node, feature) if with_figures else {}
    return Block(kind, mined.node, f.model.path(mined.node), mined.origin, figures)


def _article_and_metadata(
    result: PageAnalysis,
    article: InformativeStructure,
    found: SinglePageArticle | None,
    art_cover: NDArray[np.bool_],
    entropy: NDArray[np.float64],
    layout: NDArray[np.bool_] | None,
) -> list[int]:
    """Set the article body, its text and metadata of a warm page in ``result`` (the site
    view's article ``found``, else the LCA of the k-MIB article blocks), and its
    ``article_entropy`` figure (mean term entropy over the article blocks); returns the
    metadata blocks' nodes."""
    model = result.model
    assert model is not None
    if found is None and not article.blocks:
        return []
    if found is not None:
        body, exclude = found.body, found.exclude.copy()
    else:
        body, exclude = _body_and_exclude(model, article)
    exclude |= _orphan_headings(model, body, exclude)
    result.article_node, result.article_exclude = body, exclude
    # the maximal excluded sub-trees are enough for text_of (it skips whole sub-trees)
    top = exclude.copy()
    top[1:] &= ~exclude[model.parent[1:]]
    result.article_text = model.text_of(body, exclude=np.flatnonzero(top))
    if result.role == "article" and not result.article_text.strip():
        # e.g. a lone heading that orphan-heading removal dropped: no article to emit
        result.role = "other"
    meta_nodes = (_metadata_blocks(model, article, exclude, layout)
                  if article.blocks and layout is not None else [])  # fmt: skip
    result.metadata = [" ".join(model.text_of(i).split()) for i in meta_nodes]
    ts, ids = model.term_start, model.term_ids
    owner_kept = np.repeat(art_cover, np.diff(ts)) if len(ids) else np.zeros(0, bool)
    if owner_kept.any():
        result.figures["article_entropy"] = float(entropy[ids[owner_kept]].mean())
    return meta_nodes


@dataclass(frozen=True)
class SiteView:
    """What the site's block repetition shows of one page (module docstring, "Site
    refinement"): ``template`` — nodes whose text the site's other pages repeat; ``boxes`` —
    those of them holding a link (menus, share bars, navigation); ``items`` — the page's titled
    items and ``list_share`` the share of its own text they hold; ``listed`` — the anchors
    the page lists, its entries' titles (:mod:`wisdom_scrapy.mining.listing`)."""

    template: NDArray[np.bool_]
    boxes: NDArray[np.bool_]
    items: NDArray[np.bool_]
    list_share: float
    listed: NDArray[np.bool_]

    @classmethod
    def of(cls, model: PageModel, repetition: BlockRepetition) -> SiteView | None:
        """The view of ``model``, or None while the page shows none of the site's template
        boxes (the site's first pages, a page of another layout): it is then a page alone."""
        template = repeated_text(model, repetition)
        boxes = template_boxes(model, template)
        if not boxes.any():
            return None
        items, listed = list_entries(model, template, boxes)
        return cls(template, boxes, items, item_share(model, template, items), listed)

    @property
    def is_list(self) -> bool:
        return self.list_share >= LIST_SHARE


def _article_of(model: PageModel, site_view: SiteView | None) -> SinglePageArticle | None:
    """The article body of the page, by its structure, corrected by what the site knows
    (module docstring, "Site refinement"): with ``site_view``, sub-trees the page alone
    excluded for their structure (link lists, link boxes, teasers) come back unless the site
    repeats their text outside the page's own content (a block repeated among the post's own
    paragraphs is the post's: :func:`~wisdom_scrapy.mining.repetition.embedded_lines`)."""
    if site_view is None:
        return single_page_article(model)
    embedded = embedded_lines(model, site_view.template)
    found = single_page_article(model, template=site_view.boxes, content=embedded)
    if found is None or found.structural is None:
        return found
    exclude = found.exclude.copy()
    own = found.structural & ~(site_view.template & ~embedded)
    exclude &= ~(own & model.subtree_mask(own & exclude))
    return replace(found, exclude=exclude)


_HEADING_RANK = {f"h{r}": r for r in range(1, 7)}


def _orphan_headings(model: PageModel, body: int, exclude: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Node mask of the kept headings under ``body`` whose section keeps no text (module
    docstring): no kept non-heading text between the heading and the next kept heading of
    the same or a higher rank (or the end of the body). Array work, plus one step per heading."""
    n = model.n
    lo, hi = body, int(model.subtree_end[body])
    ranks = np.array([_HEADING_RANK.get(t, 0) for t in model.tag_names] + [0], dtype=np.int8)
    rank = ranks[model.tag_id]
    heads = np.flatnonzero((rank > 0) & ~exclude)
    heads = heads[(heads >= lo) & (heads < hi)]
    orphans = np.zeros(n, dtype=bool)
    if not len(heads):
        return orphans
    end = model.subtree_end
    in_heading = np.zeros(n + 1, dtype=np.int64)
    np.add.at(in_heading, heads, 1)
    np.add.at(in_heading, end[heads], -1)
    content = (model.own_len > 0) & ~exclude & (np.cumsum(in_heading[:n]) == 0)
    csum = np.concatenate([[0], np.cumsum(content)])
    head_list, rank_list = heads.tolist(), rank[heads].tolist()
    for k, h in enumerate(head_list):
        stop = next((g for g, r in zip(head_list[k + 1 :], rank_list[k + 1 :], strict=True)
                     if r <= rank_list[k] and g >= end[h]), hi)  # fmt: skip
        if csum[stop] == csum[end[h]]:
            orphans[h : end[h]] = True
    return orphans


def _metadata_blocks(
    model: PageModel,
    article: InformativeStructure,
    exclude: NDArray[np.bool_],
    layout: NDArray[np.bool_],
) -> list[int]:
    """Merged article blocks that are one short paragraph (see the module docstring).

    Paragraphs are layout nodes with text of their own (:func:`~wisdom_scrapy.mining.wisdom.
    layout_nodes`) that the article keeps; "short" is shorter (TLEN_A) than the median
    paragraph of the skeleton blocks. Array work only: no text is built.
    """
    merged = [b for b in article.blocks if b.origin != "skeleton"]
    if not merged:
        return []
    end = model.subtree_end
    para = layout & (model.own_len > 0) & ~exclude
    lengths = np.concatenate([model.tlen[s : end[s]][para[s : end[s]]] for s in article.skeleton])
    if not len(lengths):
        return []
    median = float(np.median(lengths))
    return [
        b.node
        for b in merged
        if model.tlen[b.node] < median and int(para[b.node : end[b.node]].sum()) <= 1
    ]


# --------------------------------------------------------------------------------------------
# cold mode
# --------------------------------------------------------------------------------------------


def _single_page(
    model: PageModel, url: str, n_pages: int, site_view: SiteView | None = None
) -> PageAnalysis:
    result = PageAnalysis(url, "other", model.title, single_page=True, model=model)
    result.figures = {"site_pages": float(n_pages)}
    if site_view is not None and site_view.is_list:
        result.role = "toc"
        result.toc_cover = result.toc_entries = model.subtree_mask(site_view.items)
        result.toc_listed = site_view.listed
        result.figures["list_share"] = site_view.list_share
        return result
    found = _article_of(model, site_view)
    if found is None:
        return result
    text = model.text_of(found.body, exclude=found.exclude)
    if not text.strip():
        return result
    result.role = "article"
    result.article_node = found.body
    result.article_exclude = found.exclude
    result.article_text = text
    result.metadata = [t for t in (" ".join(model.text_of(i).split()) for i in found.metadata) if t]
    result.blocks.append(Block("article", found.body, model.path(found.body), "density"))
    result.blocks += [Block("metadata", i, model.path(i), "density") for i in found.metadata]
    return result
