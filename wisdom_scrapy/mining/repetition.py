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
:mod:`wisdom_scrapy.text`, as the store counts them): the same text gives the same fingerprint
on every page and in every process (terms hash with :func:`~wisdom_scrapy.structure.
stable_hash`), computed for every node at once as prefix-sum differences over the pre-order
term array. :class:`BlockRepetition` counts, per fingerprint, the pages of a site that hold a
block (:func:`block_nodes`) with it, each URL once.

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

The counts live in the crawl process (:class:`~wisdom_scrapy.extraction.Extractor`, per site):
a restarted crawl or another worker starts counting afresh, and until a block is seen on more
than √N pages condensing treats it as before.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from wisdom_scrapy.dom import BLOCK_TAGS
from wisdom_scrapy.structure import stable_hash

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.dom import PageModel

__all__ = [
    "MIN_PAGES", "BlockRepetition", "block_fingerprints", "repeated_blocks", "repeated_text"
]

_MIX = np.uint64(0x9E3779B97F4A7C15)
_BLOCKS = BLOCK_TAGS | {"td", "th"}
#: A page and one copy of it (print version, AMP page) are two pages with the same paragraphs.
MIN_PAGES = 3


def block_fingerprints(model: PageModel) -> NDArray[np.uint64]:
    """Per node: a 64-bit hash of the multiset of its subtree's terms (0 without terms).

    Order-free, so it is a prefix-sum difference (one pass for all nodes); two different
    texts of one site with the same words in another order are the rare price of that.
    """
    n = model.n
    if n == 0 or not len(model.term_ids):
        return np.zeros(n, dtype=np.uint64)
    per_term = np.fromiter((stable_hash(t) for t in model.vocab), np.int64, len(model.vocab))
    v = per_term.view(np.uint64) * _MIX
    v ^= v >> np.uint64(31)
    csum = np.zeros(len(model.term_ids) + 1, dtype=np.uint64)
    np.cumsum(v[model.term_ids], out=csum[1:])
    ts = model.term_start
    return csum[ts[model.subtree_end]] - csum[ts[:-1]]


class BlockRepetition:
    """Per site: on how many pages each block fingerprint was seen (see the module docstring).

    ``add`` a page once per URL (a URL seen again is not counted again); ``pages_of`` a page's
    nodes. About 100 bytes per distinct block text of the site (Python dict entries).
    """

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self._urls: set[str] = set()

    @property
    def n_pages(self) -> int:
        return len(self._urls)

    def add(self, url: str, model: PageModel) -> None:
        if url in self._urls:
            return
        self._urls.add(url)
        prints = block_fingerprints(model)
        has_terms = model.term_start[model.subtree_end] > model.term_start[:-1]
        counts = self._counts
        for h in np.unique(prints[block_nodes(model) & has_terms]).tolist():
            counts[h] = counts.get(h, 0) + 1

    def pages_of(self, model: PageModel) -> NDArray[np.int64]:
        """Per node of ``model``: the pages of the site holding a block with its text."""
        get = self._counts.get
        prints = block_fingerprints(model).tolist()
        return np.fromiter((get(h, 0) for h in prints), np.int64, len(prints))


def repeated_text(model: PageModel, repetition: BlockRepetition) -> NDArray[np.bool_]:
    """Block nodes of ``model`` whose exact text is on more than √N of the site's N pages
    (and on ``MIN_PAGES``): the site's template by repetition alone (module docstring). Only
    blocks are counted (:func:`block_nodes`), so an inline link inside a paragraph
    ("bandcamp") is never template because a menu item has the same word."""
    pages = repetition.pages_of(model)
    return (pages >= MIN_PAGES) & (pages > math.sqrt(repetition.n_pages)) & block_nodes(model)


def block_nodes(model: PageModel) -> NDArray[np.bool_]:
    """Nodes whose element is a block (HTML's block tags and table cells): what a reader sees
    as a box of the page, whether or not text flows around it."""
    return model.tag_mask(_BLOCKS)


def repeated_blocks(model: PageModel, repetition: BlockRepetition) -> NDArray[np.bool_]:
    """Nodes of ``model`` that are template boxes by the site's repetition (module docstring):
    their exact text is on more than √N of the site's N pages (and on ``MIN_PAGES``), and
    they hold a link."""
    from wisdom_scrapy.mining.wisdom import link_anchors

    links = np.zeros(model.n + 1, dtype=np.int64)
    links[link_anchors(model) + 1] = 1
    csum = np.cumsum(links)  # links among nodes < i: csum[i]
    has_link = csum[model.subtree_end] > csum[: model.n]
    return repeated_text(model, repetition) & has_link
