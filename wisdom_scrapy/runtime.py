"""State one crawl shares between wisdom_scrapy's components: settings, the store, stats.

Every component (middlewares, pipelines, extensions) asks :meth:`WisdomRuntime.of` for the
crawler's runtime, so the store is opened once, at crawl start (a bad ``WISDOM_STORE_URI`` stops
the crawl there with an error that names it), and closed once, when the engine stops.
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.http import HtmlResponse

from wisdom_scrapy.analysis import analyze_page
from wisdom_scrapy.cleaners import Cleaners
from wisdom_scrapy.dom import PageModel
from wisdom_scrapy.extraction import ExtractionParams, Extractor
from wisdom_scrapy.feed import feed_model
from wisdom_scrapy.items import PageItem
from wisdom_scrapy.settings import WisdomSettings
from wisdom_scrapy.store import StoreError, TermStore, open_store, redact_uri

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["WisdomRuntime"]

logger = logging.getLogger(__name__)
_ATTR = "_wisdom_runtime"
# Meta key of the request wisdom_scrapy schedules at idle to emit late items.
LATE_ITEMS_META = "wisdom_late_items"
# Crawler attribute of a distributed crawl's coordinator (wisdom_scrapy.distributed.RedisScheduler).
COORDINATOR_ATTR = "_wisdom_coordinator"


class WisdomRuntime:
    """The settings, store and stats of one crawler; get it with :meth:`of`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = WisdomSettings.from_settings(crawler.settings)
        if not self.settings.enabled:
            raise NotConfigured("WISDOM_ENABLED is False")
        self.stats = crawler.stats
        try:
            self.store: TermStore = open_store(self.settings.store_uri)
        except StoreError as exc:
            raise StoreError(
                f"WISDOM_STORE_URI={redact_uri(self.settings.store_uri)!r}: {exc}"
            ) from exc
        logger.info("wisdom_scrapy: term-entropy store %r", self.store)
        self.models: weakref.WeakKeyDictionary[Response, PageModel] = weakref.WeakKeyDictionary()
        self.ready: list[Any] = []  # late items, emitted with the next response's output
        self.fed_sites: Counter[str] = Counter()  # pages fed per site (progress, report)
        self._late_request_pending = False
        params = ExtractionParams(
            warmup_pages=self.settings.warmup_pages,
            toc_targets_ratio=self.settings.toc_targets_ratio,
            max_pending_tocs=self.settings.max_pending_tocs,
        )
        self.cleaners = Cleaners(
            self.settings.cleaner,
            self.store,
            sample_pages=self.settings.styletree_pages,
            count=self.inc,
        )
        analyze = self.cleaners.wrap(partial(analyze_page, params=self.settings.wisdom))
        self.extractor = Extractor(self.store, params, analyze, count=self.inc)
        crawler.signals.connect(self.close, signal=signals.engine_stopped)
        crawler.signals.connect(self.on_idle, signal=signals.spider_idle)

    def inc(self, name: str, n: int = 1) -> None:
        assert self.stats is not None
        self.stats.inc_value(name, n)

    @classmethod
    def of(cls, crawler: Crawler) -> WisdomRuntime:
        """The crawler's runtime, created (and the store opened) on first use."""
        runtime = crawler.__dict__.get(_ATTR)
        if runtime is None:
            runtime = cls(crawler)
            setattr(crawler, _ATTR, runtime)
        return runtime

    def site_of(self, url: str) -> str:
        return self.settings.site_key(url)

    def failed(self, stage: str, url: str) -> None:
        """Count and log (with traceback) an unexpected error of a stage on one page."""
        self.inc(f"wisdom/errors/{stage}")
        logger.exception("wisdom_scrapy: %s failed on %s", stage, url)

    def skip(self, reason: str) -> None:
        self.inc(f"wisdom/skipped/{reason}")

    def feed_response(self, response: Response) -> bool:
        """Model one response and feed it into the store; never raises. True if the store changed.

        The :class:`PageModel` is kept (weakly, with the response) for the analysis of the
        spider's output, so the page's terms are computed once.

        Non-HTML, empty and oversized bodies are skipped and counted under
        ``wisdom/skipped/<reason>``; a store failure is logged and counted under
        ``wisdom/store_errors`` (the page is then missing from the store, and the count says so).
        """
        if response.meta.get(LATE_ITEMS_META):
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
        try:
            root = response.selector.root
        except Exception:  # lxml/parsel raise a variety of errors on hostile bytes
            logger.debug("wisdom_scrapy: cannot parse %s", response.url, exc_info=True)
            self.skip("parse_error")
            return False
        if root is None or not hasattr(root, "iter"):
            self.skip("parse_error")
            return False
        model = PageModel.from_tree(root, response.url, keep_numbers=self.settings.keep_numbers)
        self.models[response] = model
        site = self.site_of(response.url)
        self.fed_sites[site] += 1
        changed = False
        try:
            result = feed_model(self.store, model, site=site)
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.warning("wisdom_scrapy: page %s not stored: %s", response.url, exc)
        else:
            changed = result.changed
            self.inc("wisdom/pages_fed" if changed else "wisdom/pages_unchanged")
            self.inc("wisdom/terms", result.terms)
            self.inc("wisdom/links", result.links)
            self.inc("wisdom/bytes/fed", len(response.body))
        try:
            self.cleaners.observe(site, response.url, model)
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.warning("wisdom_scrapy: cleaner state of %s not stored: %s", site, exc)
        except Exception:
            self.failed("cleaner", response.url)
        self.ready.extend(self.extractor.page_fetched(site, response.url, model))
        return changed

    def extract(self, response: Response, page: PageItem) -> list[Any]:
        """Items for a page the spider yielded (now, or later: see :mod:`.extraction`)."""
        model = self.models.get(response)
        if model is None or page.url != response.url:
            self.skip("page_item_without_page")
            return [page]
        site = self.site_of(page.url)
        return self.extractor.submit(site, page.url, model, page.title)

    def take_ready(self) -> list[Any]:
        ready, self.ready = self.ready, []
        return ready

    @property
    def distributed(self) -> bool:
        """True in a worker of a distributed crawl: what other workers need from a page (its
        records) must reach the store with the page, before the request counts as done (a
        worker may be killed at any time), not in batches."""
        return COORDINATOR_ATTR in self.crawler.__dict__

    def may_finalise(self) -> bool:
        """Whether this process should do the crawl's site-level end work now (call it at spider
        idle): always in a single-process crawl; in a distributed one
        (:mod:`wisdom_scrapy.distributed`) only in the one worker that holds the finaliser lock,
        once no worker has anything left to crawl."""
        coordinator = self.crawler.__dict__.get(COORDINATOR_ATTR)
        return coordinator is None or bool(coordinator.may_finalise())

    def on_idle(self) -> None:
        """Nothing left to crawl: emit what is held or pending, through the normal item flow.

        Items can only enter the flow as spider output, so this schedules one request for an
        empty ``data:`` URL whose callback returns them; the spider stays open until it ran.
        """
        if self._late_request_pending or not (self.ready or self.extractor.waiting()):
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

    def _late_items(self, response: Response) -> list[Any]:
        self._late_request_pending = False
        items = self.extractor.flush() + self.take_ready()
        self.inc("wisdom/items/late", len(items))
        return items

    def close(self) -> None:
        """Save the cleaner's state and close the store (engine stopped); its data stays."""
        try:
            self.cleaners.save()
        except StoreError as exc:
            self.inc("wisdom/store_errors")
            logger.warning("wisdom_scrapy: cleaner state not stored: %s", exc)
        self.store.close()
