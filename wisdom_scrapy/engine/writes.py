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
transaction, and every read of the store sees the pages still queued. :class:`PageWrites` keeps
the crawl's account of them: the pages stored (checked to be still there), the ones the store
refused (retried), the ones lost (counted and named once).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wisdom_scrapy.mining.repetition import RECORD_KIND, encode_blocks, page_blocks
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store.base import (
    EntropySnapshot,
    Link,
    StoreError,
    StoreLost,
    TermChanges,
    TermStore,
)
from wisdom_scrapy.store.strings import StringTable

if TYPE_CHECKING:
    import numpy as np
    from lxml import etree
    from numpy.typing import NDArray

__all__ = [
    "FeedResult",
    "PageUpdate",
    "PageWrites",
    "RetryQueue",
    "WriteBehind",
    "feed_model",
    "feed_page",
    "feed_tree",
]

logger = logging.getLogger(__name__)
#: Every this many pages stored for a site, the store's page count for it is checked to be at
#: least that many (one cheap call; a full check at the crawl's end: :meth:`PageWrites.finish`).
STORE_CHECK_EVERY = 100


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
    batching), for a site's block records and page terms while no page of the site is queued
    (a broad crawl reads those of the sites it left: :class:`~wisdom_scrapy.engine.sites.Sites`),
    and for one page's block record (the queued page's, else the store's). Writes (a retry's)
    go after the queued pages, so a page's last version wins.

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

    def link_count(self, site: str) -> int:
        self.flush()
        return self.store.link_count(site)

    def page_terms(self, site: str,
                   urls: Sequence[str] | None = None) -> dict[str, list[str]]:
        if any(s == site for s, _ in self._queue):  # the site's only, as for its records
            self.flush()
        return self.store.page_terms(site, urls)

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


class PageWrites:
    """A crawl's page writes and what became of each page: ``store`` written behind
    (:attr:`store`, the :class:`WriteBehind` every component reads through), the pages it
    stored counted and checked to be still there, the ones it refused kept for a retry, the
    ones lost counted under ``wisdom/pages_lost`` and named at ERROR, once each.

    What it knows leaves through callables, so it works the same in any host: ``count(name,
    n)`` (the crawl's stats), ``stored(site, url)`` (a page reached the store: the waits'
    repetition counts it), ``stop()`` (the store's data is gone: the crawl should end).
    """

    def __init__(self, store: TermStore, batch_pages: int, *,
                 count: Callable[[str, int], None],
                 stored: Callable[[str, str], None],
                 stop: Callable[[], None]) -> None:  # fmt: skip
        self.store = WriteBehind(store, batch_pages, self._written)
        self.count = count
        self.stored = stored
        self.stop = stop
        self.retry_queue = RetryQueue()  # page updates the store refused, retried later
        #: URLs stored by this crawl, per site: checked to be still there (:meth:`check`).
        #: Kept here, not in the sites' contexts: the site registry reads through this
        #: object's write-behind store, so it is built after it and the writes sit below it.
        self.stored_urls: dict[str, StringTable] = {}
        self.lost_urls: set[str] = set()  # counted under wisdom/pages_lost

    def add(self, update: PageUpdate, limit: int | None = None) -> None:
        """Write ``update`` behind (:meth:`WriteBehind.add`)."""
        self.store.add(update, limit=limit)

    def replace(self, update: PageUpdate) -> PageUpdate | None:
        """Forget the refused version of ``update``'s page, kept for a retry (the newer one
        replaces it); it is returned, None when none was kept."""
        return self.retry_queue.discard(update)

    def flush(self) -> None:
        """Write the queued pages, then retry the ones the store refused earlier (at idle, at
        close: every page gets its last chance before it is counted lost)."""
        self.store.flush()
        self.retry()

    def finish(self) -> None:
        """At the crawl's end: a last write and retry, then the pages never stored are counted
        lost, and every site's pages stored are looked up to be still there."""
        self.flush()
        self.lose(self.retry_queue.urls(), "were never stored")
        for site in self.stored_urls:
            self.check(site, final=True)

    def lose(self, urls: list[str], why: str) -> None:
        """Count under ``wisdom/pages_lost`` and log at ERROR, with their URLs, the pages of
        ``urls`` not counted yet."""
        new = [url for url in dict.fromkeys(urls) if url not in self.lost_urls]
        if new:
            self.lost_urls.update(new)
            self.count("wisdom/pages_lost", len(new))
            logger.error("wisdom_scrapy: %d pages %s: %s", len(new), why, " ".join(new))

    def check(self, site: str, final: bool) -> None:
        """Check that the pages this crawl stored for ``site`` are still in the store: a store
        can lose them with no call failing (a Redis without persistence restarted empty, a
        SQLite file deleted). Mid-crawl only the page count is compared with what this crawl
        stored (one cheap call), at the end every URL is looked up."""
        urls = self.stored_urls.get(site) or StringTable()
        try:
            if not final and self.store.page_count(site) >= len(urls):
                return
            missing = self.store.missing_pages(site, sorted(urls))
        except StoreLost as exc:
            self.store_lost(exc, stop=not final)
            return
        except StoreError as exc:
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: cannot check the pages stored for %s: %s", site, exc)
            return
        self.lose(missing, "stored by this crawl are missing from the store (it lost them: "
                           "restarted empty, or its data was removed)")

    def store_lost(self, exc: StoreLost, stop: bool = True) -> None:
        """The store's data is gone (its file was deleted): every page this crawl stored is lost
        and so will be the next ones, so the crawl should stop (``stop``)."""
        self.lose([u for urls in self.stored_urls.values() for u in urls], f"lost: {exc}")
        if stop:
            self.stop()

    def retry(self) -> None:
        """Store the pages a failing store refused earlier (after a success, at idle, at the
        end); stops at the first failure."""
        if not len(self.retry_queue):
            return
        try:
            for result in self.retry_queue.retry(self.store.store):  # the queue stays behind
                self._stored(result)
                self.count("wisdom/store/retried", 1)
        except StoreError as exc:
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: %d pages still not stored: %s",
                           len(self.retry_queue), exc)

    def _written(self, updates: list[PageUpdate], outcome: Outcome) -> None:
        """A batch written (:class:`WriteBehind`): each page counted, or, when the store
        refused the batch, each queued for a retry."""
        if isinstance(outcome, StoreError):
            for update in updates:
                self._unstored(update, outcome)
            return
        for result in outcome:
            self._stored(result)
        self.retry()

    def _stored(self, result: FeedResult) -> None:
        self.stored(result.site, result.url)
        self.count("wisdom/pages_fed" if result.changed else "wisdom/pages_unchanged", 1)
        self.count("wisdom/terms", result.terms)
        self.count("wisdom/links", result.links)
        urls = self.stored_urls.get(result.site)
        if urls is None:
            urls = self.stored_urls[result.site] = StringTable()
        urls.id(result.url)
        if len(urls) % STORE_CHECK_EVERY == 0:
            self.check(result.site, final=False)

    def _unstored(self, update: PageUpdate, exc: StoreError) -> None:
        """A page the store failed to take: queued for a retry, or lost when the queue is full."""
        self.count("wisdom/store_errors", 1)
        if self.retry_queue.add(update):
            logger.warning("wisdom_scrapy: page %s not stored yet (retried later): %s",
                           update.url, exc)
        else:
            self.lose([update.url], f"not stored (retry queue full): {exc}")
        if isinstance(exc, StoreLost):
            self.store_lost(exc)


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
