"""Feeding pages into the term-entropy store: what the spider middleware does for each response.

A page's terms and out-links come from its :class:`~wisdom_scrapy.dom.PageModel`, the model the
analysis works on, so there is one definition of a page's visible text and it is computed once
per page. In a crawl the model is built from the tree Scrapy already parsed
(``response.selector.root``): the page is parsed once however many stages look at it.

With its counts and links, a fed page's block fingerprints are stored (a record of kind
:data:`~wisdom_scrapy.mining.repetition.RECORD_KIND`): the site's block repetition, which changes
what an article keeps, is then the same for every process that reads the store.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wisdom_scrapy.dom import PageModel
from wisdom_scrapy.mining.repetition import RECORD_KIND, encode_blocks, page_blocks
from wisdom_scrapy.urls import host_key

if TYPE_CHECKING:
    import numpy as np
    from lxml import etree
    from numpy.typing import NDArray

    from wisdom_scrapy.store.base import TermStore

__all__ = ["FeedResult", "PageUpdate", "RetryQueue", "feed_model", "feed_page", "feed_tree"]


@dataclass(frozen=True)
class FeedResult:
    """What feeding one page did: ``changed`` is False for an unchanged, already stored page."""

    site: str
    changed: bool
    terms: int
    links: int
    url: str = ""


@dataclass(frozen=True)
class PageUpdate:
    """What the store keeps of one page: its term counts and out-links under its site, and its
    block fingerprints (:func:`~wisdom_scrapy.mining.repetition.page_blocks`)."""

    site: str
    url: str
    counts: Mapping[str, int]
    links: list[tuple[str, str]]
    blocks: NDArray[np.uint64]

    @classmethod
    def of(cls, model: PageModel, site: str | None = None) -> PageUpdate:
        links = [(link.url, link.text) for link in model.links()]
        return cls(site or host_key(model.url), model.url, model.page_counts(), links,
                   page_blocks(model))  # fmt: skip

    def apply(self, store: TermStore) -> FeedResult:
        # blocks first: a page the store holds has its blocks record (a retry writes both)
        store.put_records(self.site, RECORD_KIND, {self.url: encode_blocks(self.blocks)})
        changed = store.add_page(self.site, self.url, self.counts, self.links)
        return FeedResult(self.site, changed, sum(self.counts.values()), len(self.links), self.url)


def feed_model(store: TermStore, model: PageModel, *, site: str | None = None) -> FeedResult:
    """Add a modelled page's term counts and out-links to ``store`` under ``site``.

    ``site`` defaults to the page's host (with port). Pages with no visible term still count as
    pages of the site (N grows, as WISDOM's entropy over the site's pages requires).
    """
    return PageUpdate.of(model, site).apply(store)


class RetryQueue:
    """Page updates the store failed to take, kept (counts and links, not the page) to be
    applied again later, oldest first; at most ``limit`` pages.

    Applying an update twice is harmless (the store ignores an unchanged page), so a retry
    after a lost reply cannot count a page twice.
    """

    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self._updates: OrderedDict[tuple[str, str], PageUpdate] = OrderedDict()

    def __len__(self) -> int:
        return len(self._updates)

    def add(self, update: PageUpdate) -> bool:
        """Keep ``update`` for a retry; False (not kept) when the queue is full."""
        key = (update.site, update.url)
        if key not in self._updates and len(self._updates) >= self.limit:
            return False
        self._updates[key] = update  # a newer version of a page replaces the older
        return True

    def retry(self, store: TermStore) -> Iterator[FeedResult]:
        """Apply the kept updates in order; stops (raising StoreError) at the first failure,
        which stays queued with the ones after it."""
        while self._updates:
            key, update = next(iter(self._updates.items()))
            result = update.apply(store)
            del self._updates[key]
            yield result

    def urls(self) -> list[str]:
        return [url for _, url in self._updates]


def feed_tree(
    store: TermStore,
    root: etree._Element,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> FeedResult:
    """Feed one parsed page (an lxml tree, e.g. ``response.selector.root``)."""
    model = PageModel.from_tree(root, url, keep_numbers=keep_numbers)
    return feed_model(store, model, site=site)


def feed_page(
    store: TermStore,
    html: str | bytes,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> bool:
    """Feed a saved page (what the middleware does for a response). False if unchanged or empty.

    An empty or unparsable page is not fed (a crawl counts it under ``wisdom/skipped/empty``).
    """
    model = PageModel.from_html(html, url, keep_numbers=keep_numbers)
    if model.n == 0:
        return False
    return feed_model(store, model, site=site).changed
