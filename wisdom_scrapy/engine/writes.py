"""What a fetched page writes into the term-entropy store: the store feed, not Scrapy's feed
exports. The spider middleware calls it for each response.

A page's terms and out-links come from its :class:`~wisdom_scrapy.page.model.PageModel`, the model
the analysis works on, so there is one definition of a page's visible text and it is computed once
per page. In a crawl the model is built from the tree Scrapy already parsed
(``response.selector.root``): the page is parsed once however many stages look at it.

With its counts and links, a fed page's block fingerprints are stored (a record of kind
:data:`~wisdom_scrapy.mining.repetition.RECORD_KIND`): the site's block repetition, which changes
what an article keeps, is then the same for every process that reads the store.

A crawl writes its pages behind (:class:`WriteBehind`): a batch of page updates in one store
transaction, and every read of the store sees the pages still queued.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wisdom_scrapy.mining.repetition import RECORD_KIND, encode_blocks, page_blocks
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store.base import EntropySnapshot, Link, StoreError, TermChanges, TermStore

if TYPE_CHECKING:
    import numpy as np
    from lxml import etree
    from numpy.typing import NDArray

__all__ = [
    "FeedResult",
    "PageUpdate",
    "RetryQueue",
    "WriteBehind",
    "feed_model",
    "feed_page",
    "feed_tree",
]


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

    def discard(self, update: PageUpdate) -> PageUpdate | None:
        """Forget the kept version of ``update``'s page (a newer one is being written); it is
        returned (None when none was kept)."""
        return self._updates.pop((update.site, update.url), None)

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


#: What :class:`WriteBehind` reports of a batch: the pages' results, or why none was stored.
Outcome = list[FeedResult] | StoreError


class WriteBehind(TermStore):
    """``store`` with page updates written behind: :meth:`add` queues a page's update, and the
    queue is written as one batch (:meth:`TermStore.batch`: one SQLite transaction) when it
    holds ``limit`` pages, or at :meth:`flush` (the crawl calls it at spider idle and close).

    Every read goes to ``store`` and sees the queued pages as if written: the queue is written
    first, except for :meth:`page_count`, answered as the store's count plus the queued pages
    it does not hold yet (the analysis reads it per page: a batch per page would undo the
    batching), for a site's block records while no page of the site is queued (a broad
    crawl reads those of the sites it left: :class:`~wisdom_scrapy.engine.sites.Sites`), and for one
    page's block record (the queued page's, else the store's). Writes (a
    retry's) go after the queued pages, so a page's last version wins.

    Each batch's outcome goes to ``report`` with its updates: the pages' results, or the
    :class:`StoreError` that stored none of them (SQLite rolls the whole batch back).
    """

    def __init__(self, store: TermStore, limit: int,
                 report: Callable[[list[PageUpdate], Outcome], None]) -> None:
        self.store = store
        self.uri = store.uri
        # a store that does not group writes gains nothing from a queue, only later writes
        self.limit = limit if store.batches_writes else 1
        self.report = report
        self._queue: OrderedDict[tuple[str, str], PageUpdate] = OrderedDict()
        self._new: dict[tuple[str, str], bool] = {}  # queued page not in the store yet

    def add(self, update: PageUpdate, limit: int | None = None) -> None:
        """Queue ``update`` (replacing a queued older version of the page); write the queue
        when it holds ``limit`` (default: the store's) pages."""
        self._queue[(update.site, update.url)] = update
        if len(self._queue) >= (self.limit if limit is None else limit):
            self.flush()

    def flush(self) -> None:
        """Write the queued updates now, in one batch, and report its outcome."""
        if not self._queue:
            return
        updates = list(self._queue.values())
        self._queue.clear()
        self._new.clear()
        try:
            with self.store.batch():
                outcome: Outcome = [update.apply(self.store) for update in updates]
        except StoreError as exc:
            outcome = exc
        except Exception as exc:  # a bug: reported as a failed batch (retried, or counted)
            self.report(updates, StoreError(f"{type(exc).__name__}: {exc}"))
            raise
        self.report(updates, outcome)

    def queued_urls(self) -> dict[str, list[str]]:
        """URLs of the queued pages, per site."""
        urls: dict[str, list[str]] = {}
        for site, url in self._queue:
            urls.setdefault(site, []).append(url)
        return urls

    def __len__(self) -> int:
        return len(self._queue)

    # -- TermStore: reads see the queue, writes follow it ------------------------------------

    def page_count(self, site: str) -> int:
        unknown = [url for (s, url) in self._queue if s == site and (s, url) not in self._new]
        if unknown:
            missing = set(self.store.missing_pages(site, unknown))
            self._new.update(((site, url), url in missing) for url in unknown)
        queued_new = sum(1 for key in self._queue if key[0] == site and self._new[key])
        return self.store.page_count(site) + queued_new

    def add_page(self, site: str, url: str, counts: Mapping[str, int],
                 links: Sequence[tuple[str, str]] = ()) -> bool:
        self.flush()
        return self.store.add_page(site, url, counts, links)

    def put_records(self, site: str, kind: str, records: Mapping[str, bytes]) -> None:
        if kind == RECORD_KIND:  # page updates write this kind
            self.flush()
        self.store.put_records(site, kind, records)

    def records(self, site: str, kind: str) -> dict[str, bytes]:
        if kind == RECORD_KIND and any(s == site for s, _ in self._queue):  # the site's only
            self.flush()
        return self.store.records(site, kind)

    def record(self, site: str, kind: str, key: str) -> bytes | None:
        if kind == RECORD_KIND:  # a queued page's is the one it writes
            queued = self._queue.get((site, key))
            if queued is not None:
                return encode_blocks(queued.blocks)
        return self.store.record(site, kind, key)

    def term_sums(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        self.flush()
        return self.store.term_sums(site, terms)

    def all_term_sums(self, site: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        self.flush()
        return self.store.all_term_sums(site)

    def entropy(self, site: str, terms: Iterable[str]) -> dict[str, float]:
        self.flush()
        return self.store.entropy(site, terms)

    def snapshot(self, site: str) -> EntropySnapshot:
        self.flush()
        return self.store.snapshot(site)

    def term_changes(self, site: str, since: int | None) -> TermChanges:
        self.flush()
        return self.store.term_changes(site, since)

    def links(self, site: str) -> dict[str, list[Link]]:
        self.flush()
        return self.store.links(site)

    def missing_pages(self, site: str, urls: Iterable[str]) -> list[str]:
        self.flush()
        return self.store.missing_pages(site, urls)

    def sites(self) -> list[str]:
        self.flush()
        return self.store.sites()

    def batch(self) -> AbstractContextManager[None]:
        return self.store.batch()

    def persistence_warning(self) -> str | None:
        return self.store.persistence_warning()

    def close(self) -> None:
        """Write the queue, then close the store."""
        try:
            self.flush()
        finally:
            self.store.close()

    def __repr__(self) -> str:
        return repr(self.store)


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
