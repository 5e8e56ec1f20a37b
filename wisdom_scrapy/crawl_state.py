"""State one crawl shares between wisdom_scrapy's components: settings, the store, stats, the
pages waiting for analysis. The extension (:mod:`wisdom_scrapy.extension`) is Scrapy's hooks
that hold it; this is what they hold and the bookkeeping of each page.

The crawl's :class:`~wisdom_scrapy.extension.WisdomExtension` creates it, so the store is opened
once, at crawl start (a bad ``WISDOM_STORE_URI`` stops the crawl there with an error that names
it), and closed once, when the engine stops; every other component reaches it through that
extension.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.asyncio import sleep
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.misc import load_object
from scrapy.utils.reactor import is_asyncio_reactor_installed
from scrapy.utils.response import get_base_url

import wisdom_scrapy.adapter  # noqa: F401  (registers the page items' ItemAdapter)
from wisdom_scrapy.engine.cleaning import Cleaners
from wisdom_scrapy.engine.link_graph import StructureTracker
from wisdom_scrapy.engine.offload import RemoteAnalyzer, analyse_job
from wisdom_scrapy.engine.sites import Sites
from wisdom_scrapy.engine.waits import (
    ExtractionParams,
    Extractor,
    PageSource,
    TermIndex,
    WaitingPage,
    run_sync,
)
from wisdom_scrapy.engine.worker_pool import WorkerPool
from wisdom_scrapy.engine.writes import PageUpdate, PageWrites
from wisdom_scrapy.in_flight import PagesInFlight
from wisdom_scrapy.items import LATE_ITEMS_META, ArticleItem, PageItem, SiteStructureItem, TocItem
from wisdom_scrapy.page.links import MAX_LINK_CHARS
from wisdom_scrapy.page.model import PageModel, PageTooComplex
from wisdom_scrapy.page.parse import PARSER_MAX_DEPTH, looks_binary
from wisdom_scrapy.page.terms import MAX_TERM_CHARS
from wisdom_scrapy.resume import PendingPages
from wisdom_scrapy.settings import WisdomSettings, crawl_does_not_start
from wisdom_scrapy.signals import AnalysisSignal
from wisdom_scrapy.store import StoreError, open_store, redact_uri
from wisdom_scrapy.store.strings import SeenStrings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["WisdomRuntime"]

logger = logging.getLogger(__name__)
#: Pages a worker process may have queued for analysis before the crawl waits (each holds its
#: page model meanwhile): a few a worker keep it busy while the crawl process models the next
#: pages, and bound the models held.
SUBMITTING_PER_WORKER = 8
#: The items one page leaves as.
PAGE_ITEMS = (ArticleItem, TocItem, PageItem)
#: Progress lines of a close flush: one every tenth of its pages.
PROGRESS_LINES = 10
#: Exit status of a crawl forced to stop with pages whose items never left (:meth:`WisdomRuntime.
#: forced_stop`); Scrapy's own is 0 then.
EXIT_PAGES_LOST = 1


class WisdomRuntime:
    """The settings, store and stats of one crawler; get it with :meth:`of`. ``site_items``
    gives the site-level items that leave at close after the pages (:meth:`flush_at_close`),
    called with the stage ``"close"``."""

    def __init__(
        self, crawler: Crawler, site_items: Callable[[str], list[Any]] = lambda stage: []
    ) -> None:
        self.crawler = crawler
        self.settings = WisdomSettings.for_crawl(crawler.settings)
        if not self.settings.enabled:
            raise NotConfigured  # bare: Scrapy logs no "Disabled" warning per component
        self.stats = crawler.stats
        try:
            store = open_store(self.settings.store_uri)
        except StoreError as exc:
            error = StoreError(f"WISDOM_STORE_URI={redact_uri(self.settings.store_uri)!r}: {exc}")
            crawl_does_not_start(error)
            raise error from exc
        #: the crawl's page writes and what became of them (stored, retried, lost)
        self.writes = PageWrites(store, self.settings.store_batch_pages, count=self.inc,
                                 stored=self._page_stored, stop=self._stop_store_lost)
        # pages are written behind, in batches; every component reads through it
        self.store = self.writes.store
        logger.info("wisdom_scrapy: term-entropy store %r", self.store)
        warning = self.store.persistence_warning()
        if warning:
            logger.warning("wisdom_scrapy: %s; pages it loses are found at spider close and "
                           "counted under wisdom/pages_lost", warning)
        #: the pages in flight, from the feed's model of their response to their item passing
        #: the item pipelines: one record each (:mod:`wisdom_scrapy.in_flight`)
        self.in_flight = PagesInFlight()
        #: late items (pages that left the waits, site-level items), emitted with the next
        #: response's output
        self.ready: list[Any] = []
        self._stopping = False  # the crawl is being stopped: the store is lost
        #: the spider is closing: its last items are leaving, no request can be scheduled
        self.closing = False
        #: the close flush ran to its end (:meth:`flush_at_close`)
        self.flushed = False
        self._closed = False  # the store is closed (:meth:`close`)
        self._late_request_pending = False
        #: URLs whose PageItem this crawl took: a second one for a URL is dropped (each URL
        #: leaves once, even when Scrapy fetched it twice: a start URL has ``dont_filter``)
        self.taken_urls = SeenStrings()
        self.site_items = site_items  # (class docstring)
        self._losses_logged: set[str] = set()  # kinds of page losses logged (once each)
        params = ExtractionParams(
            warmup_pages=self.settings.warmup_pages,
            # the site view needs only the site's template; the other cleaners learn from
            # entropies, which need the full warm-up
            until_template=self.settings.warmup_derived and self.settings.cleaner == "wisdom",
            toc_targets_ratio=self.settings.toc_targets_ratio,
            max_pending_tocs=self.settings.max_pending_tocs,
            max_held_pages=self.settings.max_held_pages,
            item_fields=self.settings.item_fields,
        )
        #: each site's state, in one place: its snapshot, waits, link structure, cleaner
        self.sites = Sites(self.store, count=self.inc, horizon=self.settings.site_horizon)
        self.cleaners = Cleaners(
            self.settings.cleaner,
            self.store,
            sample_pages=self.settings.styletree_pages,
            count=self.inc,
            sites=self.sites,
        )
        analyze = self.cleaners.analyzer(self.settings.wisdom,
                                         every_block="blocks" in self.settings.item_fields)
        terms = TermIndex()  # the crawl's: the extractor's and its worker analyses'
        #: the crawl's worker analyses (None: in this process); the extractor sees them as its
        #: :class:`~wisdom_scrapy.engine.waits.Offload`, this keeps their pool and close
        self.remote = self._remote(analyze, terms)
        self.extractor = Extractor(
            self.store, params, analyze, count=self.inc, sites=self.sites, remote=self.remote,
            terms=terms, listener=AnalysisSignal(crawler.signals, partial(self.failed, "report")))
        #: the sites' link structure (fed with every page, so a crawl without focusing has it)
        self.tracker = StructureTracker(
            self.store,
            min_pages=self.settings.focus_min_pages,
            params=self.settings.wisdom,
            growth=self.settings.structure_growth,
            max_iter=self.settings.hits_max_iter,
            count=self.inc,
            timer=lambda name, seconds: self.inc(name, round(seconds * 1e6)),
            in_flight=self.pages_in_flight,
            sites=self.sites,
            vocab=terms.vocab,  # one vocabulary for the crawl
        )
        #: the stages holding parts of sites the store can give back: let go when a site is left
        self.letting_go = (self.extractor, self.tracker)
        #: pages whose analysis in a worker the crawl does not wait for (:meth:`take`, their
        #: records' ``submitting``): at most SUBMITTING_PER_WORKER a worker (the crawl waits
        #: past that: each holds its page's model)
        self.max_submitting = SUBMITTING_PER_WORKER * self.settings.workers
        self._submitted = asyncio.Condition()  # notified as each submission ends
        self._cleaning = 0  # page items being cleaned (:meth:`clean`) ...
        self._cleaned = asyncio.Condition()  # ... notified when none is
        # with JOBDIR, waiting pages are mirrored in the store so a resumed crawl re-fetches them
        self.pending: PendingPages | None = None
        if crawler.settings.get("JOBDIR"):
            self.pending = PendingPages(self.store, self._unfinished_urls, self.inc, self.sites)
        scheduler = crawler.settings.get("SCHEDULER")
        #: True in a worker of a distributed crawl (:mod:`wisdom_scrapy.distributed`): what
        #: other workers need from a page (its records) must reach the store with the page,
        #: before the request counts as done (a worker may be killed at any time), not in
        #: batches.
        self.distributed = bool(
            scheduler and getattr(load_object(scheduler), "wisdom_distributed", False)
        )

    def _remote(self, analyze: Callable[..., Any], terms: TermIndex) -> RemoteAnalyzer | None:
        """The worker processes the page analyses run in (``WISDOM_WORKERS``), or None: in
        this process. The thesis cleaners keep state of the site's pages in this process, so
        with them the analyses stay here (logged)."""
        workers = self.settings.workers
        if not workers:
            return None
        if not is_asyncio_reactor_installed():
            logger.warning("wisdom_scrapy: WISDOM_WORKERS=%d unused: it needs Scrapy's asyncio "
                           "reactor (TWISTED_REACTOR); the analyses run in the crawl process",
                           workers)  # fmt: skip
            return None
        if self.settings.cleaner != "wisdom":
            logger.info("wisdom_scrapy: WISDOM_WORKERS=%d unused: WISDOM_CLEANER=%r analyses "
                        "in the crawl process", workers, self.settings.cleaner)  # fmt: skip
            return None
        pool = WorkerPool(workers, analyse_job, timeout=self.settings.worker_timeout)
        logger.info("wisdom_scrapy: page analyses in %d worker processes (WISDOM_WORKERS)",
                    workers)  # fmt: skip
        return RemoteAnalyzer(pool, terms, analyze, self.settings.item_fields,
                              count=self.inc)  # fmt: skip

    def inc(self, name: str, n: int = 1) -> None:
        assert self.stats is not None
        self.stats.inc_value(name, n)

    def site_of(self, url: str) -> str:
        return self.settings.site_key(url)

    def failed(self, stage: str, url: str, cause: Exception | None = None, *,
               error: BaseException | None = None) -> None:
        """Count and log an error of a stage on one page: with its traceback when unexpected
        (the one being handled, or ``error``'s: a signal's receiver), with its ``cause`` alone
        when that says it all."""
        self.inc(f"wisdom/errors/{stage}")
        if cause is not None:
            logger.error("wisdom_scrapy: %s failed on %s: %s", stage, url, cause)
        else:
            logger.error("wisdom_scrapy: %s failed on %s", stage, url, exc_info=error or True)

    def pages_in_flight(self, site: str) -> list[str]:
        """URLs of ``site``'s pages this process has modelled and fed whose responses are still
        being processed (their models are kept until the response is let go)."""
        return [url for url in self.in_flight.modelled_urls() if self.site_of(url) == site]

    def skip(self, reason: str) -> None:
        self.inc(f"wisdom/skipped/{reason}")

    def feed_response(self, response: Response) -> bool:
        """Model one response and feed it into the store; never raises. True if it was fed.

        The :class:`PageModel` is kept (weakly, with the response) for the analysis of the
        spider's output, so the page's terms are computed once.

        Non-HTML (by type, or binary bytes whatever the type says), empty and oversized bodies
        are skipped and counted under ``wisdom/skipped/<reason>``. The page's update is written
        behind (:class:`~wisdom_scrapy.engine.writes.WriteBehind`: with the next
        ``WISDOM_STORE_BATCH_PAGES`` pages, before any read of the store, at idle and at close;
        at once in a distributed worker). A store failure is logged and counted under
        ``wisdom/store_errors``; the page's update (its counts and links) is kept and applied
        again after the next successful write, at idle and at close (``wisdom/store/retried``).
        Pages never stored are counted under ``wisdom/pages_lost`` and logged as errors.
        """
        if response.meta.get(LATE_ITEMS_META):
            return False
        if self._redirected_offsite(response):
            self.skip("offsite")
            return False
        if not isinstance(response, HtmlResponse):
            self.skip("not_html")
            return False
        if len(response.body) > self.settings.max_page_bytes:
            self.skip("too_large")
            return False
        if not response.body or response.body.isspace():  # no copy of a large body
            self.skip("empty")
            return False
        if looks_binary(response.body, response.text):  # a PDF, an image … sent as text/html
            self.skip("not_html")
            return False
        try:
            root = response.selector.root
        except Exception:  # lxml/parsel raise a variety of errors on hostile bytes
            logger.debug("wisdom_scrapy: cannot parse %s", response.url, exc_info=True)
            self.skip("parse_error")
            return False
        if root is None or not hasattr(root, "iter"):
            self.skip("parse_error")
            return False
        model = self._model(root, response.url)
        if model is None:
            return False
        self.in_flight.fetched(response, model)
        site = self.site_of(response.url)
        self.sites.feeding(site)
        update = PageUpdate.of(model, site)
        self._count_losses(model)
        self.inc("wisdom/bytes/fed", len(response.body))
        if self.pending is not None:  # recorded as fed, not stored yet, until it is
            self.pending.fed(response.url, response.request and response.request.callback)
        unstored = self.writes.replace(update)  # this newer version replaces it
        try:
            self.extractor.page_storing(site, response.url, update.blocks,
                                        None if unstored is None else unstored.blocks)
        except Exception:  # a bug: the page is stored all the same
            self.failed("repetition", response.url)
        self.writes.add(update, limit=1 if self.distributed else None)
        try:
            self.cleaners.observe(site, response.url, model)
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.warning("wisdom_scrapy: cleaner state of %s not stored: %s", site, exc)
        except Exception:
            self.failed("cleaner", response.url)
        self.extractor.page_fetched(site, response.url, model, update.blocks)
        if self.extractor.remote is None:  # the TOC pages it completes, at once, as always
            self.ready += self.release(run_sync(self.extractor.finish_completed()))
        try:
            self.sites.fed(site, self.letting_go)  # left sites let go of what the store holds
        except Exception:  # a bug in a stage's let_go: the page is fed all the same
            self.failed("sites", response.url)
        self.sync_pending()
        return True

    def _model(self, root: Any, url: str) -> PageModel | None:
        """The page's model with its terms, or None for a page above ``WISDOM_MAX_PAGE_NODES``
        (counted under ``wisdom/skipped/too_complex``, logged once): its cost is bounded to
        counting its elements and words, never seconds of the crawl's only thread."""
        try:
            model = PageModel.from_tree(root, url, keep_numbers=self.settings.keep_numbers,
                                        max_nodes=self.settings.max_page_nodes)
            model.vocab  # noqa: B018  (the terms, within their budget)
        except PageTooComplex as exc:
            self.skip("too_complex")
            if "too_complex" not in self._losses_logged:
                self._losses_logged.add("too_complex")
                logger.warning("wisdom_scrapy: %s not analysed: %s (WISDOM_MAX_PAGE_NODES; "
                               "further pages are only counted, under wisdom/skipped/too_complex)",
                               url, exc)
            return None
        return model

    def _redirected_offsite(self, response: Response) -> bool:
        """True for a response that a redirect (HTTP 3xx or ``<meta refresh>``) took to a URL
        the crawl's offsite policy refuses: Scrapy's ``OffsiteMiddleware`` (the spider's
        ``allowed_domains``, or a subclass' ``should_follow``), applied to the final URL. A
        redirected request keeps ``dont_filter`` (a start URL's, for one), so such a page
        reaches the spider although the crawl keeps to its sites; the store must not learn it
        as a page of another site. A page requested at its own URL was asked for: it is fed."""
        spider, engine = self.crawler.spider, self.crawler.engine
        if not response.meta.get("redirect_urls") or spider is None or engine is None:
            return False
        for middleware in engine.downloader.middleware.middlewares:
            if isinstance(middleware, OffsiteMiddleware):
                return not middleware.should_follow(Request(response.url), spider)
        return False  # the project turned offsite filtering off

    def _count_losses(self, model: PageModel) -> None:
        """Count what the model of a hostile page had to leave out, and log each kind of loss
        the first time it happens (a crawl of such a site would otherwise log it per page)."""
        losses = (
            ("wisdom/truncated/too_deep", int(model.at_depth_limit),
             f"nests {PARSER_MAX_DEPTH} elements deep: the parser stopped there, so the text "
             "below and after that point is missing"),
            ("wisdom/dropped/long_terms", model.overlong_tokens,
             f"holds words longer than {MAX_TERM_CHARS} characters: not counted as terms"),
            ("wisdom/dropped/long_links", model.overlong_links,
             f"holds links longer than {MAX_LINK_CHARS} characters: not kept as links"),
        )  # fmt: skip
        for stat, n, what in losses:
            if not n:
                continue
            self.inc(stat, n)
            if stat not in self._losses_logged:
                self._losses_logged.add(stat)
                logger.warning("wisdom_scrapy: %s %s (%d; further pages are only counted, "
                               "under %s)", model.url, what, n, stat)

    def _unfinished_urls(self) -> dict[str, list[str]]:
        """Per site, the pages a resumed crawl must fetch again: those waiting for their
        analysis, those whose items have not passed the item pipelines yet and those fed but
        not written to the store yet."""
        urls = self.extractor.waiting_urls()
        for url in self.in_flight.unfinished():
            urls.setdefault(self.site_of(url), []).append(url)
        for site, queued in self.store.queued_urls().items():
            urls[site] = urls.get(site, []) + queued
        return urls

    def _page_stored(self, site: str, url: str) -> None:
        """A page reached the store (:class:`~wisdom_scrapy.engine.writes.PageWrites`)."""
        self.extractor.page_stored(site, url)

    def _stop_store_lost(self) -> None:
        """The store's data is gone (:meth:`PageWrites.store_lost
        <wisdom_scrapy.engine.writes.PageWrites.store_lost>`): the crawl stops, once (reason
        ``wisdom_store_lost``)."""
        engine = self.crawler.engine
        if not self._stopping and engine is not None and engine.running:
            self._stopping = True
            deferred_from_coro(engine.close_spider_async(reason="wisdom_store_lost"))

    async def finish_completed(self) -> None:
        """Pending TOC pages whose targets the last fetched pages completed: analysed, their
        page items emitted with the next output (:meth:`take_ready`)."""
        completed = await self.extractor.finish_completed()
        self.ready += self.release(completed)  # self.ready after the wait: take_ready swaps it

    async def take(self, response: Response, page: PageItem) -> list[Any]:
        """A page the spider yielded: the page items that can go on to the item pipeline now
        (this one, earlier ones of its site), or none (it waits: :mod:`.extraction`)."""
        model = self.in_flight.model(response)
        if model is None or page.url != response.url:
            self.skip("page_item_without_page")
            return [page]
        site = self.site_of(page.url)
        callback = response.request and response.request.callback
        if self.pending is not None and not self.pending.received(site, page.url, callback):
            self.inc("wisdom/resumed_duplicates")
            return []
        # fetched again (dont_filter): its item is out or held
        if not self.taken_urls.add(page.url):
            self.skip("duplicate_url")
            return []
        self.in_flight.taken(page)
        source = self._source(response)
        if self.extractor.remote is None:
            return await self._submit(site, page, model, source)
        # Analysed in a worker: the response's output does not wait for it (its items leave
        # with a later output, or at idle), unless too many pages are being analysed already.
        self.in_flight.submit(page.url, asyncio.ensure_future(
            self._submit_later(site, page, model, source)))
        async with self._submitted:
            await self._submitted.wait_for(
                lambda: self.in_flight.submitting <= self.max_submitting)
        return []

    async def _submit(
        self, site: str, page: PageItem, model: PageModel, source: PageSource
    ) -> list[Any]:
        submitted = await self.extractor.submit(site, page.url, model, page.title, page.extra,
                                                source=source)  # fmt: skip
        items = self.release(submitted)
        assert self.stats is not None
        self.stats.max_value("wisdom/held/peak", self.extractor.waiting())
        self.sync_pending()
        return items

    async def _submit_later(
        self, site: str, page: PageItem, model: PageModel, source: PageSource
    ) -> None:
        try:
            try:
                items = await self._submit(site, page, model, source)
            except Exception:  # never lose the page: it goes on, to be passed unanalysed
                self.failed("analysis", page.url)
                items = [self.in_flight.untaken(page.url) or page]
            self.ready += items  # before its record's submission ends: settle() then has them
        finally:
            self.in_flight.submitted(page.url)
            async with self._submitted:
                self._submitted.notify_all()

    async def settle(self) -> None:
        """Wait for the pages being submitted in the background (:meth:`take`)."""
        while tasks := self.in_flight.submitting_tasks():
            await asyncio.wait(tasks)

    def _source(self, response: Response) -> PageSource:
        """What the response's model is rebuilt from as :meth:`feed_response` built it (its
        text, parsed as ``response.selector`` parses it): what a waiting page keeps, and what
        a worker process analyses."""
        assert isinstance(response, HtmlResponse)  # only HTML responses have a model
        return PageSource(response.url, response.text, get_base_url(response),
                          self.settings.keep_numbers)  # fmt: skip

    def clean_now(self, response: Response, output: list[Any]) -> list[Any]:
        """A callback's output with each PageItem of the response replaced by its cleaned item
        now, analysed with what the store knows: no warm-up hold, no wait for a TOC page's
        targets. For Scrapy's tools that take a callback's output before the spider middlewares
        (``scrapy parse``, contracts: :mod:`wisdom_scrapy.contracts`); a crawl does not use it.
        """
        model = self.in_flight.model(response)
        cleaned = []
        for obj in output:
            if not (isinstance(obj, PageItem) and not obj.role and model is not None
                    and obj.url == response.url):  # fmt: skip
                cleaned.append(obj)
                continue
            try:
                cleaned += run_sync(self.extractor.submit(
                    self.site_of(obj.url), obj.url, model, obj.title, obj.extra, now=True))
            except Exception:  # as in a crawl: the page goes on unanalysed
                self.failed("analysis", obj.url)
                cleaned.append(obj)
        return cleaned

    def sync_pending(self) -> None:
        if self.pending is not None:
            self.pending.sync()

    def on_opened(self, spider: Spider) -> None:
        """Resumed crawl (JOBDIR): fetch again the pages the interrupted one left waiting."""
        assert self.pending is not None and self.crawler.engine is not None
        try:
            self.pending.resume(spider, self.crawler.engine.crawl)
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.error("wisdom_scrapy: cannot read the pages left waiting: %s", exc)

    def release(self, ready: list[WaitingPage]) -> list[PageItem]:
        """The page items of pages that left the waits, for the item pipeline (:meth:`clean`)."""
        items = []
        for page in ready:
            item = self.in_flight.released(page)
            items.append(item or PageItem(url=page.url, title=page.title,
                                          extra=page.extra))  # fmt: skip
        return items

    async def clean(self, item: PageItem) -> ArticleItem | TocItem | PageItem:
        """The cleaned item of a page item that left the waits (:meth:`release`), its title and
        own fields as they are now; any other page item unchanged."""
        ready = self.in_flight.ticket(item.url)
        if ready is None:
            return item
        self._cleaning += 1
        try:
            return await self.extractor.item(ready, item.title, item.extra)
        finally:
            self._cleaning -= 1
            if not self._cleaning:
                async with self._cleaned:
                    self._cleaned.notify_all()

    async def stamp_roles(self, item: SiteStructureItem) -> None:
        """The SiteStructureItem's ``item_roles``: the roles of the page items made for its
        site so far; called as it leaves, after the pages that left with it (it follows them;
        Scrapy cleans an output's items at once, so it waits for those being cleaned), so it
        states the roles of the items the crawl emitted."""
        async with self._cleaned:
            await self._cleaned.wait_for(lambda: not self._cleaning)
        item.item_roles = self.extractor.item_roles(item.site)

    def take_ready(self) -> list[Any]:
        ready, self.ready = self.ready, []
        return ready

    def may_finalise(self) -> bool:
        """Whether this process should do the crawl's site-level end work now (call it at spider
        idle): always in a single-process crawl; in a distributed one
        (:mod:`wisdom_scrapy.distributed`) only in the one worker that holds the finaliser lock,
        once no worker has anything left to crawl."""
        engine = self.crawler.engine
        scheduler = engine.scheduler if engine is not None else None
        return not self.distributed or bool(getattr(scheduler, "may_finalise", bool)())

    def on_idle(self) -> None:
        """Nothing left to crawl: emit what is held or pending, through the normal item flow.

        Items can only enter the flow as spider output, so this schedules one request for an
        empty ``data:`` URL whose callback returns them; the spider stays open until it ran.
        """
        self.writes.flush()
        if self._late_request_pending or not (
            self.ready or self.extractor.waiting() or self.in_flight.submitting
        ):
            return
        self._late_request_pending = True
        request = Request(
            "data:,",
            callback=self._late_items,
            dont_filter=True,
            priority=1000,
            meta={LATE_ITEMS_META: True, "allow_offsite": True},
        )
        assert self.crawler.engine is not None
        self.crawler.engine.crawl(request)
        raise DontCloseSpider("wisdom_scrapy: emitting late items")

    async def _late_items(self, response: Response) -> AsyncIterator[Any]:
        self._late_request_pending = False
        await self.settle()
        await self.finish_completed()
        items = _pages_first(self.release(await self.extractor.flush()) + self.take_ready())
        self.sync_pending()
        self.inc("wisdom/items/late", len(items))
        for item in items:
            yield item

    async def flush_at_close(self, emit: Callable[[Any], Awaitable[None]]) -> None:
        """Send what is still held, pending or ready at close through the item pipelines
        (``emit``: :meth:`WisdomItemProcessor.close_spider_async
        <wisdom_scrapy.pipeline.WisdomItemProcessor.close_spider_async>`, before they close),
        each page analysed with what the store knows now (a cold store: single-page mode, the
        item's ``single_page`` says so), then the site-level items; page items counted
        under ``wisdom/items/flushed_at_close`` as they leave.

        The pages leave one by one, a progress line every tenth of them ("N of M held pages"),
        the reactor running between two (a signal is handled at once: the analyses are CPU
        work, which would otherwise hold the reactor for the whole flush). A page stays pending
        until its item passed the pipelines (:meth:`passed`): if the flush is cut short, the
        pages not emitted are counted and named (:meth:`forced_stop`). Never raises but
        :class:`asyncio.CancelledError`: a failing part is counted and logged."""
        self.closing = True
        built = True
        try:
            items = await self._items_at_close()
        except Exception:  # a bug must not keep the spider from closing
            self.failed("close", "(close)")
            items, built = [], False  # the pages still held are named at close
        pages = sum(isinstance(i, PAGE_ITEMS) for i in items)
        step = max(1, -(-pages // PROGRESS_LINES))
        if pages:
            logger.info("wisdom_scrapy: spider closing: emitting %d held pages", pages)
        try:
            for n, item in enumerate(items, 1):
                if self._closed:  # forced to stop meanwhile: the rest is named, not emitted
                    return
                try:
                    await emit(item)
                except Exception:  # a bug: the next items still leave, the pipelines close
                    self.failed("close", getattr(item, "url", "(close)"))
                if isinstance(item, PAGE_ITEMS):
                    self.inc("wisdom/items/flushed_at_close")
                if n <= pages and (n % step == 0 or n == pages):
                    logger.info("wisdom_scrapy: %d of %d held pages emitted", n, pages)
                await sleep(0)
        except asyncio.CancelledError:  # the loop stops under the flush (a forced stop)
            self.forced_stop()
            raise
        self.flushed = built

    async def _items_at_close(self) -> list[Any]:
        """The items still held, pending or ready, page items first, then the site-level ones."""
        self.writes.flush()
        await self.settle()
        await self.finish_completed()
        items = _pages_first(self.release(await self.extractor.flush()) + self.take_ready())
        try:
            items += self.site_items("close")
        except Exception:
            self.failed("close", "(close)")
        return items

    def passed(self, item: Any) -> None:
        """An item passed the item pipelines (scraped, dropped or failed in one): its page is
        no longer pending (the store's record of it, with ``JOBDIR``, is cleared now, not when
        it left the waits: a crawl stopped in between fetches it again on resume). ``item``: the
        page item that went in (:meth:`WisdomItemProcessor.process_item_async
        <wisdom_scrapy.pipeline.WisdomItemProcessor.process_item_async>`: a later pipeline may
        return another object or URL), or what ``item_scraped`` / ``item_dropped`` /
        ``item_error`` carry under a project's own ``ITEM_PROCESSOR``. Nothing once the store
        is closed (a forced stop named the pages still leaving)."""
        url = getattr(item, "url", None) if isinstance(item, PAGE_ITEMS) else None
        if isinstance(url, str) and not self._closed and self.in_flight.passed(url):
            self.sync_pending()

    def unemitted(self) -> list[str]:
        """URLs of the pages whose items have not passed the item pipelines yet: waiting,
        being analysed in a worker, or released and on their way."""
        urls = [u for waiting in self.extractor.waiting_urls().values() for u in waiting]
        return list(dict.fromkeys([*urls, *self.in_flight.unfinished()]))

    def report_unemitted(self, why: str) -> int:
        """Count under ``wisdom/pages_lost`` and name at ERROR the pages whose items did not
        pass the pipelines (:meth:`unemitted`); how many."""
        urls = self.unemitted()
        if urls:
            self.sync_pending()
            kept = ("kept pending in the store: a resumed crawl (same JOBDIR) emits them"
                    if self.pending is not None else "set JOBDIR to resume them")
            self.writes.lose(urls, f"are fetched but their items never passed the item "
                                   f"pipelines ({why}; {kept})")
        return len(urls)

    def forced_stop(self) -> None:
        """The crawl is stopped under its close (a second Ctrl-C or SIGTERM: Scrapy stops the
        reactor at once): the pages not emitted are counted and named, the exit status is made
        non-zero when there were any (:func:`exit_nonzero_at_exit`), the store closed."""
        if self._closed:
            return
        if self.report_unemitted("the crawl was forced to stop during its close"):
            exit_nonzero_at_exit()
        self.close()

    def on_closed(self) -> None:
        """Last retry of the pages the store refused, then a check that the pages stored are
        all still there; pages never stored or gone are counted under ``wisdom/pages_lost``
        and logged (here, so the crawl's stats dump shows them)."""
        self.writes.finish()
        remote = self.remote
        if remote is not None and self.stats is not None:  # their CPU: not the crawl process's
            self.stats.set_value("wisdom/workers/cpu_seconds", round(remote.pool.cpu_seconds(), 3))
            self.stats.set_value("wisdom/workers/restarted", remote.pool.restarts)

    def close(self) -> None:
        """Save the cleaner's state, stop the worker processes and close the store (engine
        stopped, or forced to stop: :meth:`forced_stop`); its data stays. Once."""
        if self._closed:
            return
        self._closed = True
        if self.remote is not None:
            self.remote.close()
        try:
            self.cleaners.save()
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.warning("wisdom_scrapy: cleaner state not stored: %s", exc)
        self.store.close()


def exit_nonzero_at_exit() -> None:
    """Make the process exit with :data:`EXIT_PAGES_LOST` (once its exit handlers ran so far):
    Scrapy's ``crawl`` command exits 0 after a forced stop, which a supervisor (systemd,
    Kubernetes, a shell script) would take for a clean end while items were lost. The handler
    is registered at the forced stop, so it runs first of the exit handlers: it ends the
    logging (its files flushed) and the process with that status."""

    def exit_nonzero() -> None:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(EXIT_PAGES_LOST)

    atexit.register(exit_nonzero)


def _pages_first(items: list[Any]) -> list[Any]:
    """``items`` with the page items before the site-level ones (which state the roles of the
    page items before them: :meth:`WisdomRuntime.stamp_roles`), each kind in its order."""
    return sorted(items, key=lambda item: not isinstance(item, PageItem))
