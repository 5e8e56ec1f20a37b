"""Verbatim repetition of blocks across a site's pages: the site's own evidence for template.

WISDOM's condensing (§3.3) judges a sub-tree of an article by its terms' entropy (CII against
the article type constraint), and :func:`~wisdom_scrapy.mining.wisdom.condense` forgives a
sub-tree of few terms whose CII is below the line by less than one standard error: a mean over
few terms is a poor estimate (§4.2). An advertisement or a promotion box inside the story is
such a sub-tree, and the doubt is misplaced for it: the site shows the *same* block, word for
word, on many pages. That repetition is a measurement of its own, one the
term entropies cannot make (each of the ad's words also appears elsewhere, so its terms look
merely common).

A block's *fingerprint* is a 64-bit hash of the multiset of its subtree's terms (the terms of
:mod:`wisdom_scrapy.page.terms`, as the store counts them): the same text gives the same fingerprint
on every page and in every process (terms hash with :func:`~wisdom_scrapy.page.terms.
stable_hash`), computed for every node at once as prefix-sum differences over the pre-order
term array. :class:`BlockRepetition` counts, per fingerprint, the pages of a site that hold a
block (:func:`block_nodes`) with it, each URL once; and, apart (salted), the pages that hold it
as a *box part* (:func:`box_parts`: an inline piece of a block, such as an advertisement's
headline link), which only the "copy" role rule of :mod:`wisdom_scrapy.analysis.page_analysis`
reads.

The rule (:func:`repeated_blocks`, applied by :func:`~wisdom_scrapy.mining.wisdom.mine`): a
layout sub-tree of an article whose terms put it below the type constraint's line (strict
CII < 1 − TC_article) loses the standard-error benefit of the doubt when it is a *template
box*: its exact text is on more than √N of the site's N pages, and it holds a link to another
page. Each part is the site's own measure, none is fitted to one site:

* √N: a block's text taken as one feature, spread evenly over the df pages that hold it, has
  entropy ``ln df / ln N`` (Appendix A, relationship 1); above 1/2 it is nearer (on the log
  scale WISDOM's entropy uses) to being on every page than to being on one. A page's own
  paragraph, also on its print version or quoted by a teaser, is on a handful; and never fewer
  than ``MIN_PAGES`` = 3 pages count, since a page and one copy of it are two.
  (The article line itself, entropy > TC_article = 0.8, needs df > N^0.8: an advertisement
  rotating over a fixed share of pages — a third on the demo site — reaches it only on sites
  of many hundred pages, so that line would decide by the site's size.)
* a link to another page (not an in-page "#" anchor: :func:`~wisdom_scrapy.mining.wisdom.
  link_anchors`): a template box leads elsewhere (an advertisement, a promotion, "follow us").
  A documentation site repeats labels verbatim on many pages too ("See also", "New in version
  3.9.", "Examples¶" with its permalink): they name the content next to them, link nowhere
  else, and stay (measured offline on the Python documentation with every page in the store:
  removing every repeated block below the line, on ≥ 3 pages and whatever its links, lowered
  its article F1 from 0.982 to 0.968; with both parts it is unchanged).

The counts change what an item holds, so they are kept in the store, not only in the crawl
process: feeding a page (:class:`~wisdom_scrapy.engine.writes.PageUpdate`) stores the set of its
block fingerprints as a record of kind :data:`RECORD_KIND` (key: the URL; value: a version byte,
then the sorted unique fingerprints, its box parts' salted ones among them, as little-endian
uint64), replacing the URL's earlier one.
:func:`stored_repetition` rebuilds a site's counts from them, so the crawl (a resumed one, each
worker of a distributed one), ``scrapy wisdom-show`` and
:func:`~wisdom_scrapy.analysis.page_analysis.analyze_page` with the same store count the same pages.
A record of another version is skipped and counted (:attr:`BlockRepetition.skipped`), never read
wrongly: a change to what is fingerprinted or which blocks count must raise :data:`RECORD_VERSION`.
"""

from __future__ import annotations

import hashlib
import logging
import math
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from wisdom_scrapy.page.model import BLOCK_TAGS, nearest_marked
from wisdom_scrapy.store.counts import KeyCounts
from wisdom_scrapy.store.strings import StringBytes

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.store import TermStore

__all__ = [
    "MIN_PAGES",
    "RECORD_KIND",
    "BlockRepetition",
    "PageRepetition",
    "block_fingerprints",
    "box_parts",
    "decode_blocks",
    "embedded_lines",
    "encode_blocks",
    "merge_stored",
    "page_blocks",
    "repeated_blocks",
    "repeated_parts",
    "repeated_text",
    "stored_repetition",
    "template_boxes",
    "url_counted",
]

logger = logging.getLogger(__name__)

_MIX = np.uint64(0x9E3779B97F4A7C15)
_BLOCKS = BLOCK_TAGS | {"td", "th"}
#: A page and one copy of it (print version, AMP page) are two pages with the same paragraphs.
MIN_PAGES = 3
#: ``TermStore.put_records`` kind of a page's block fingerprints (module docstring).
RECORD_KIND = "blocks"
#: First byte of a record; a record of another version is skipped (and counted) when loading.
#: 2: a record holds the page's box parts too (:func:`box_parts`).
RECORD_VERSION = 2
#: XORed into a box part's fingerprint, so a part is never counted as a block of the same text
#: (the template rules count blocks only; :meth:`BlockRepetition.part_pages_of`).
_PART_SALT = np.uint64(0x5A17C0DE0B0A2E75)


#: each live page model's :func:`block_fingerprints` (read-only): the feed's blocks, the
#: site view and the repetition counts all ask for them, once per page
_FINGERPRINTS: weakref.WeakKeyDictionary[PageModel, NDArray[np.uint64]] = (
    weakref.WeakKeyDictionary())


def block_fingerprints(model: PageModel) -> NDArray[np.uint64]:
    """Per node: a 64-bit hash of the multiset of its subtree's terms (0 without terms).

    Order-free, so it is a prefix-sum difference (one pass for all nodes); two different
    texts of one site with the same words in another order are the rare price of that.
    Computed once per model (a read-only array).
    """
    prints = _FINGERPRINTS.get(model)
    if prints is None:
        prints = _FINGERPRINTS[model] = _fingerprints(model)
        prints.flags.writeable = False
    return prints


def _fingerprints(model: PageModel) -> NDArray[np.uint64]:
    n = model.n
    if n == 0 or not len(model.term_ids):
        return np.zeros(n, dtype=np.uint64)
    v = model.vocab_hashes.view(np.uint64) * _MIX
    v ^= v >> np.uint64(31)
    csum = np.zeros(len(model.term_ids) + 1, dtype=np.uint64)
    np.cumsum(v[model.term_ids], out=csum[1:])
    ts = model.term_start
    return csum[ts[model.subtree_end]] - csum[ts[:-1]]


def page_blocks(model: PageModel) -> NDArray[np.uint64]:
    """The sorted unique fingerprints of the page's blocks (:func:`block_nodes`) that hold
    terms, and of its box parts (:func:`box_parts`, salted): what :class:`BlockRepetition`
    counts of a page, and what the store keeps of it."""
    prints = block_fingerprints(model)
    has_terms = model.term_start[model.subtree_end] > model.term_start[:-1]
    blocks = prints[block_nodes(model) & has_terms]
    return np.unique(np.concatenate([blocks, prints[box_parts(model)] ^ _PART_SALT]))


def box_parts(model: PageModel) -> NDArray[np.bool_]:
    """The pieces of text a box that leads elsewhere is made of: inline elements holding
    terms whose parent is a block holding a link to another page (as a template box does:
    :func:`template_boxes`), other than the block's whole text (an advertisement's headline
    link and its line beside the label "Advertisement"; not a menu item's only link).

    A block's fingerprint is that of its whole text, so a page whose only text is one piece
    of a box the site repeats (a promotion page, whose headline and line are those of the
    advertisement box) matches no block of the site; its pieces do
    (:meth:`BlockRepetition.part_pages_of`). Counted apart from blocks (salted): the template
    rules read blocks only. A piece that is its block's whole text is matched by the block.
    (On the Python documentation's pages this adds 15–19 % to a page's fingerprints; all
    inline children of blocks would add 50–60 %.)"""
    has_terms = model.term_start[model.subtree_end] > model.term_start[:-1]
    blocks = block_nodes(model)
    parent = np.maximum(model.parent, 0)
    leads = template_boxes(model, blocks)[parent] & (model.parent >= 0)
    prints = block_fingerprints(model)
    return ~blocks & has_terms & leads & (prints != prints[parent])


def encode_blocks(prints: NDArray[np.uint64]) -> bytes:
    """A page's :func:`page_blocks` as a store record (module docstring)."""
    return bytes([RECORD_VERSION]) + np.asarray(prints, dtype="<u8").tobytes()


def decode_blocks(blob: bytes) -> NDArray[np.uint64]:
    """Inverse of :func:`encode_blocks`; ValueError for a record of another version or size,
    or whose fingerprints are not sorted and unique (damaged: they count once a page)."""
    if not blob or blob[0] != RECORD_VERSION or (len(blob) - 1) % 8:
        version = blob[0] if blob else None
        raise ValueError(f"blocks record of version {version} or wrong size ({len(blob)} bytes)")
    prints = np.frombuffer(blob, dtype="<u8", offset=1).astype(np.uint64)
    if bool((prints[1:] <= prints[:-1]).any()):
        raise ValueError("blocks record whose fingerprints are not sorted and unique")
    return prints


class BlockRepetition:
    """Per site: on how many pages each block fingerprint was seen (see the module docstring).

    ``add`` a page; ``pages_of`` a page's nodes. A count is the number of distinct URLs
    holding the fingerprint, so a page fetched again with other blocks must take its earlier
    ones back. About 12 bytes per distinct block text of the site
    (:class:`~wisdom_scrapy.store.counts.KeyCounts`: most of a site's block texts are on one
    page, so their number grows with the pages) and 28 per page: a digest of its blocks (a
    page has hundreds of blocks, 8 bytes each, which the store keeps). A page that comes
    back changed takes its earlier blocks back: read from the store first (one record:
    :meth:`keep_blocks`), or kept here (``keep``: a page whose earlier version the store did
    not hold, until it does). Else (:meth:`takes_back`) the caller counts the site again from
    the store, which holds each page's latest blocks.
    """

    def __init__(self) -> None:
        self._counts = KeyCounts()  # fingerprint (as int64) -> pages
        self._digests = StringBytes()  # URL -> digest of its fingerprints (_digest)
        self._kept: dict[str, bytes] = {}  # URL -> its fingerprints (int64 bytes): see above
        #: URL -> the fingerprints of its counted version, read from the store for the next
        #: version to take back (:meth:`keep_blocks`), until it does
        self._earlier: dict[str, bytes] = {}
        #: records skipped by :meth:`merge_records`: of another version, or damaged
        self.skipped = 0

    @property
    def n_pages(self) -> int:
        return len(self._digests)

    def __contains__(self, url: str) -> bool:
        return url in self._digests

    def add(self, url: str, model: PageModel) -> bool:
        return self.add_blocks(url, page_blocks(model))

    def takes_back(self, url: str, prints: NDArray[np.uint64]) -> bool:
        """Whether counting ``url`` with the blocks ``prints`` would take back blocks of an
        earlier version of it that are not kept here (see the class docstring)."""
        old = self._digests.get(url)
        return (old is not None and url not in self._kept and url not in self._earlier
                and old != _digest(_keys(prints)))

    def keep_blocks(self, url: str, prints: NDArray[np.uint64]) -> bool:
        """Keep ``prints`` as the blocks of the counted page ``url`` (its record read from the
        store before it comes back changed), if they are the ones counted (their digest),
        until its next version takes them back; whether they are."""
        keys = _keys(prints)
        if self._digests.get(url) != _digest(keys):
            return False
        self._earlier[url] = keys.tobytes()
        return True

    def forget_blocks(self, url: str) -> None:
        """Stop keeping the blocks of ``url`` (``keep``: the store holds them now)."""
        self._kept.pop(url, None)

    def only_kept(self) -> BlockRepetition:
        """A repetition of this one's kept pages alone, still kept (a site counted again keeps
        them: the store's other pages join it)."""
        kept = BlockRepetition()
        for url, data in self._kept.items():
            kept.add_blocks(url, np.frombuffer(data, dtype=np.uint64), keep=True)
        return kept

    def add_blocks(self, url: str, prints: NDArray[np.uint64], *, keep: bool = False) -> bool:
        """Count the page ``url`` with its :func:`page_blocks`, replacing what an earlier
        version of it counted; False when nothing changed. ``keep``: keep its blocks, to take
        them back should it change again. ValueError when the earlier ones cannot be taken
        back (:meth:`takes_back`)."""
        keys = _keys(prints)
        digest = _digest(keys)
        old = self._digests.get(url)
        earlier = self._earlier.pop(url, None)
        if old == digest:
            return False
        if old is not None:
            kept = self._kept.get(url, earlier)
            if kept is None:
                raise ValueError(f"the earlier blocks of {url} are not kept: count the site "
                                 "again from the store")
            self._counts.remove(np.frombuffer(kept, dtype=np.int64))
        if keep:
            self._kept[url] = keys.tobytes()
        else:
            self._kept.pop(url, None)
        self._digests[url] = digest
        self._counts.add(keys)
        return True

    def merge_records(self, records: Mapping[str, bytes]) -> int:
        """Add the stored pages (:data:`RECORD_KIND` records, URL -> blob) this one does not
        know (its own pages are as recent); returns how many. Unreadable records are skipped
        and counted in :attr:`skipped`."""
        added = 0
        for url, blob in records.items():
            if url in self:
                continue
            try:
                prints = decode_blocks(blob)
            except ValueError:
                self.skipped += 1
                continue
            self.add_blocks(url, prints)
            added += 1
        return added

    def counts_exactly(self, records: Mapping[str, bytes]) -> bool:
        """Whether the stored pages ``records`` (URL -> blob) are exactly the pages counted
        here, each with the blocks counted: what :meth:`merge_records` of them would count
        again from nothing."""
        if len(records) != self.n_pages:
            return False  # else equal when each stored page is one counted, with its blocks
        for url, blob in records.items():
            digest = self._digests.get(url)
            try:
                if digest is None or digest != _digest(_keys(decode_blocks(blob))):
                    return False
            except ValueError:
                return False
        return True

    def pages_of(
        self, model: PageModel, nodes: NDArray[np.intp] | None = None
    ) -> NDArray[np.int64]:
        """Per node of ``model`` (or of ``nodes`` only, when given): the pages of the site
        holding a block with its text."""
        prints = block_fingerprints(model)
        return self._counts.lookup((prints if nodes is None else prints[nodes]).view(np.int64))

    def part_pages_of(self, model: PageModel) -> NDArray[np.int64]:
        """Per node of ``model``: the pages of the site holding a box part (:func:`box_parts`)
        with its text."""
        return self._counts.lookup((block_fingerprints(model) ^ _PART_SALT).view(np.int64))

    def page_view(self, url: str, prints: NDArray[np.uint64]) -> PageRepetition | None:
        """What an analysis of the counted page ``url``, whose blocks are ``prints``
        (:func:`page_blocks`), reads of this repetition, compact enough to send to a worker
        process (:class:`PageRepetition`); None for a page it has not counted."""
        if url not in self:
            return None
        # each of the page's texts as a block and as a box part (part_pages_of of its blocks)
        prints = np.asarray(prints, dtype=np.uint64)
        keys = _keys(np.unique(np.concatenate([prints, prints ^ _PART_SALT])))
        return PageRepetition(keys, self._counts.lookup(keys), self.n_pages)


class PageRepetition(BlockRepetition):
    """A :class:`BlockRepetition` reduced to one page's blocks: the counts of the page's own
    :func:`page_blocks`, each also as the other kind (block or box part), and the site's page
    count. For that page, :func:`repeated_text` and the pages holding its blocks' texts as
    box parts (all an analysis reads) are what the whole repetition gives: they read only
    block nodes that hold terms, and such a node's fingerprint is one of the page's blocks."""

    def __init__(self, keys: NDArray[np.int64], counts: NDArray[np.int64], n_pages: int) -> None:
        super().__init__()
        self._counts = KeyCounts.from_arrays(keys, counts)
        self._n_pages = n_pages

    @property
    def n_pages(self) -> int:
        return self._n_pages


def _keys(prints: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Fingerprints as the int64 keys the counts take."""
    return np.asarray(prints, dtype=np.uint64).view(np.int64)


def _digest(keys: NDArray[np.int64]) -> bytes:
    """8 bytes that tell a page's blocks from another version's: BLAKE2b of the keys, in the
    order :func:`page_blocks` and the records give them (sorted)."""
    return hashlib.blake2b(keys.tobytes(), digest_size=8).digest()


def merge_stored(repetition: BlockRepetition, store: TermStore, site: str) -> int:
    """Add to ``repetition`` the pages of ``site`` the store holds block records of and it
    lacks; returns how many. Unreadable records are skipped, counted in ``skipped`` and logged.
    """
    before = repetition.skipped
    added = repetition.merge_records(store.records(site, RECORD_KIND))
    if repetition.skipped > before:
        logger.warning("wisdom_scrapy: %d block records of %s skipped (of another version, or "
                       "damaged)", repetition.skipped - before, site)  # fmt: skip
    return added


def stored_repetition(store: TermStore, site: str) -> BlockRepetition | None:
    """The site's block repetition as the store knows it (None when it holds no block record
    of the site): what the crawl counted, for any process reading the same store."""
    repetition = BlockRepetition()
    merge_stored(repetition, store, site)
    return repetition if repetition.n_pages or repetition.skipped else None


def url_counted(repetition: BlockRepetition, url: str) -> bool:
    """Whether ``repetition`` counts the page ``url`` among its pages (a
    :class:`PageRepetition` is made for a counted page only)."""
    return isinstance(repetition, PageRepetition) or url in repetition


def repeated_text(model: PageModel, repetition: BlockRepetition) -> NDArray[np.bool_]:
    """Block nodes of ``model`` whose exact text is on more than √N of the site's N pages
    (and on ``MIN_PAGES``): the site's template by repetition alone (module docstring). Only
    blocks are counted (:func:`block_nodes`), so an inline link inside a paragraph
    ("bandcamp") is never template because a menu item has the same word. Only the blocks'
    counts are looked up."""
    blocks = np.flatnonzero(block_nodes(model))
    out = np.zeros(model.n, dtype=bool)
    out[blocks] = _on_many(repetition.pages_of(model, blocks), repetition.n_pages)
    return out


def repeated_parts(model: PageModel, repetition: BlockRepetition) -> NDArray[np.bool_]:
    """Block nodes of ``model`` whose exact text is a box part (:func:`box_parts`) on more
    than √N of the site's N pages (and on ``MIN_PAGES``): a piece of a box the site repeats,
    by the measure of :func:`repeated_text`."""
    return _on_many(repetition.part_pages_of(model), repetition.n_pages) & block_nodes(model)


def _on_many(pages: NDArray[np.int64], n_pages: int) -> NDArray[np.bool_]:
    """Whether each count is on more than √N of a site's N pages and on ``MIN_PAGES``."""
    return (pages >= MIN_PAGES) & (pages > math.sqrt(n_pages))


def block_nodes(model: PageModel) -> NDArray[np.bool_]:
    """Nodes whose element is a block (HTML's block tags and table cells): what a reader sees
    as a box of the page, whether or not text flows around it."""
    return model.tag_mask(_BLOCKS)


def repeated_blocks(model: PageModel, repetition: BlockRepetition) -> NDArray[np.bool_]:
    """Nodes of ``model`` that are template boxes by the site's repetition (module docstring):
    their exact text is on more than √N of the site's N pages (and on ``MIN_PAGES``), and
    they hold a link."""
    return template_boxes(model, repeated_text(model, repetition))


def template_boxes(model: PageModel, template: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """The nodes of ``template`` (:func:`repeated_text`) that hold a link to another page."""
    from wisdom_scrapy.mining.wisdom import link_anchors

    links = np.zeros(model.n + 1, dtype=np.int64)
    links[link_anchors(model) + 1] = 1
    csum = np.cumsum(links)  # links among nodes < i: csum[i]
    return template & (csum[model.subtree_end] > csum[: model.n])


def embedded_lines(model: PageModel, template: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """The nodes of ``template`` (:func:`repeated_text`) inside the page's own content.

    The content is where the page's own paragraphs are: a node whose children include a
    *paragraph of the page's own* (a block with no block inside it, holding terms and text
    outside links — a link alone is navigation — whose text the site does not repeat), and
    the blocks the site does not repeat nested in such a node (a quote or a section of the
    post, even one whose lines are all repeated). A template node whose parent is in the
    content is embedded, with every template node inside it. The
    page's *frame* — the smallest node holding all its template boxes (:func:`template_boxes`:
    menus, share bars, footers) — and the nodes above it are never content: a page that sets
    its paragraphs straight into its ``body``, beside the header and its menu, has no content
    container, and its repeated lines there ("This page last modified on …") are the theme's.

    A theme's box (a menu, a share bar, a "filed in" line, a footer) stands among the theme's
    boxes or beside the container of the page's content, and a container is no paragraph. A
    block an author repeats in many posts (an editors' signature, a release note's standard
    paragraph and dependency listing) stands among the post's own paragraphs: the theme's body
    element holds it, and it is the post's text however often the site repeats it. Inline
    advertisements among the paragraphs are boilerplate by their markup cues
    (:mod:`~wisdom_scrapy.mining.density`), not by this rule."""
    n = model.n
    if n < 2:
        return np.zeros(n, dtype=bool)
    parent = model.parent
    has_terms = model.term_start[model.subtree_end] > model.term_start[:-1]
    blocks = block_nodes(model)
    csum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(blocks, out=csum[1:])
    paragraph = blocks & (csum[model.subtree_end] - csum[:-1] == 1)  # no block inside
    own = paragraph & ~template & has_terms & (model.clen > 0)
    own[0] = False
    holds = np.zeros(n, dtype=bool)
    holds[parent[own]] = True
    boxes = np.flatnonzero(template_boxes(model, template))
    if len(boxes):  # a node holding the whole frame of template boxes holds the layout
        a = model.lca(boxes)
        while a >= 0:
            holds[a] = False
            a = int(parent[a])
    # a block the site does not repeat takes its content status from its nearest ancestor
    # that is not such a block (or holds a paragraph itself)
    passing = blocks & ~template & ~holds
    content = holds | (passing & holds[nearest_marked(~passing, parent)])
    out = template & content[np.maximum(parent, 0)]
    out[0] = False
    return template & model.subtree_mask(out)
