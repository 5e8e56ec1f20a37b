"""The crawl's one wisdom_scrapy extension: it holds the crawl's state and owns its idle and close.

:class:`WisdomExtension` (``EXTENSIONS``; the add-on inserts it) opens the store at crawl start
(:class:`~wisdom_scrapy.crawl_state.WisdomRuntime`: settings, store, stats, the pages waiting for
analysis, the sites' link structure), and is the one component that acts when the crawl runs dry or
closes:

* at **spider idle** it retries the page updates the store refused, adds each grown site's
  :class:`~wisdom_scrapy.items.SiteStructureItem` and what the receivers of
  :data:`wisdom_scrapy.signals.site_items` add (the sitemap's
  :class:`~wisdom_scrapy.items.SitemapItem`) to the late items, and emits them with the pages
  still held through the normal item flow;
* at **close** (a spider closed before going idle: ``CLOSESPIDER_*``, Ctrl-C, SIGTERM) the
  same leave through Scrapy's close of the item pipelines (the ``ITEM_PROCESSOR`` the add-on
  sets, :class:`~wisdom_scrapy.pipeline.WisdomItemProcessor`: before the pipelines and the
  feeds close); then it checks the store, sends :data:`wisdom_scrapy.signals.store_closing`
  (the sitemap's files, the site report), and closes the store once the spider's close has finished
  (:meth:`WisdomExtension.on_engine_stopped`: a signal during the close does not cut it short).
  A forced stop (a second signal) names the pages whose items never left
  (:meth:`WisdomRuntime.forced_stop`).

The other components find it with ``crawler.get_extension(WisdomExtension)``
(:meth:`WisdomExtension.of`); the ones built before the extension manager is complete (the
other extensions) look it up when the spider opens.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy.utils.asyncio import sleep
from scrapy.utils.reactor import is_reactor_installed

from wisdom_scrapy.collector import CollectorTuning
from wisdom_scrapy.crawl_state import WisdomRuntime
from wisdom_scrapy.engine.link_graph import PageLinks
from wisdom_scrapy.in_flight import LinkedPage
from wisdom_scrapy.items import PageItem, SiteStructureItem
from wisdom_scrapy.settings import SettingsError
from wisdom_scrapy.signals import send, send_async, site_items, store_closing

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from wisdom_scrapy.items import ArticleItem, TocItem

__all__ = ["LinkedPage", "WisdomExtension"]

logger = logging.getLogger(__name__)
#: How often :meth:`WisdomExtension.on_engine_stopped` looks whether the spider's close has
#: finished, when the engine is stopped during it (only then: otherwise it has).
CLOSE_POLL_SECONDS = 0.05


class WisdomExtension:
    """wisdom_scrapy's state in a crawl and the owner of its idle and close (module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        try:
            self.runtime = runtime = WisdomRuntime(crawler, site_items=self._produce)
        except NotConfigured:
            logger.info("wisdom_scrapy: disabled (WISDOM_ENABLED is False)")
            raise
        self.crawler = crawler
        settings = runtime.settings
        #: the sites' link structure (the runtime's: fed by the feed middleware)
        self.tracker = runtime.tracker
        self.collector = CollectorTuning(crawler) if settings.tune_gc else None
        #: Whether the spider asked for the analysis: it declares ``wisdom_analysis = True``,
        #: or it yielded a PageItem (the feed middleware says so). Until then the add-on
        #: changes nothing the spider sees: no request dropped, no site-level item.
        self.asked = False
        crawler.signals.connect(self._declared, signal=signals.spider_opened)
        if runtime.pending is not None:
            crawler.signals.connect(runtime.on_opened, signal=signals.spider_opened)
        self._forced_stop_trigger: Any = None  # the reactor's handle (_on_forced_stop)
        crawler.signals.connect(self._on_forced_stop, signal=signals.spider_opened)
        crawler.signals.connect(self.on_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._dropped, signal=signals.item_dropped)
        crawler.signals.connect(self._failed, signal=signals.item_error)
        for passed in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(runtime.passed, signal=passed)
        crawler.signals.connect(self.on_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.on_engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomExtension:
        return cls(crawler)

    def _declared(self, spider: Any) -> None:
        """The spider asks with ``wisdom_analysis``, read as Scrapy reads a boolean setting
        (``-a wisdom_analysis=true`` arrives as a string: "1", "true", "True" ask; "0",
        "false" do not). A false value does not opt out a spider that yields a PageItem: its
        first PageItem asks."""
        value = getattr(spider, "wisdom_analysis", False)
        try:
            self.asked = self.asked or BaseSettings({"value": value}).getbool("value")
        except ValueError:
            logger.warning("wisdom_analysis = %r is no boolean (1/0, true/false): the spider "
                           "asks only when it yields a PageItem", value)

    @classmethod
    def of(cls, crawler: Crawler) -> WisdomExtension:
        """The crawl's extension (``crawler.get_extension``). :class:`NotConfigured` when
        wisdom_scrapy is off (``WISDOM_ENABLED = False``); a :class:`SettingsError` naming it
        when a component is enabled without it."""
        found = crawler.get_extension(cls)
        if found is not None:
            return found
        if not crawler.settings.getbool("WISDOM_ENABLED", True):
            raise NotConfigured  # bare: Scrapy logs no "Disabled" warning per component
        raise SettingsError(
            "EXTENSIONS: wisdom_scrapy's components need wisdom_scrapy.WisdomExtension "
            "(the add-on inserts it; set WISDOM_ENABLED = False to turn them all off)"
        )

    @classmethod
    def active(cls, crawler: Crawler) -> WisdomExtension | None:
        """The crawl's extension, or None when it has none (yet)."""
        try:
            return crawler.get_extension(cls)
        except RuntimeError:  # no extension manager yet
            return None

    # -- the link structure ------------------------------------------------------------------

    def linked_page(self, response: Response) -> LinkedPage | None:
        """The fed page of ``response`` in its site's link structure, recorded on the first
        call (by the feed or the focus middleware, whichever sees the spider's output first):
        its record stored, the site analysed again when it grew enough, its links' LAMIS
        weights and its hub estimate, kept with the response's model in the table of pages in
        flight (:meth:`~wisdom_scrapy.in_flight.PagesInFlight.link`). None for a response the
        feed did not model. Never raises."""
        in_flight = self.runtime.in_flight
        found = in_flight.linked(response)
        model = in_flight.model(response)
        if found is not None or model is None:
            return found
        try:
            site = self.runtime.site_of(model.url)
            record = self.tracker.observe(site, model.url, model)
            recorder = self.tracker.state(site).recorder
            if recorder.counts_let_go:  # a left site's, not read back (the store failing):
                return self._unjudged(response, site, record)  # counted, logged by state()
            template = recorder.template_mask(record)
            alpha = self.tracker.link_weights(site, record)
            hub = self.tracker.estimate_hub(site, record, alpha, ~template)
            self.tracker.note(site, record, alpha, ~template, hub)
        except Exception:  # the link structure must never cost the spider its page
            self.runtime.failed("structure", model.url)
            return None
        return in_flight.link(response, LinkedPage(site, record, alpha, template, hub))

    def _unjudged(self, response: Response, site: str, record: PageLinks) -> LinkedPage:
        """The page recorded, its links not judged (none template, no weight, no hub) and no
        estimate of its targets made: its site's statistics could not be read back."""
        none = np.zeros(len(record))
        linked = LinkedPage(site, record, none, none.astype(bool), 0.0)
        return self.runtime.in_flight.link(response, linked)

    def annotate(self, item: PageItem | ArticleItem | TocItem) -> None:
        """The item's ``hub`` / ``authority``: the scores known now (final at idle and close)."""
        try:
            scores = self.tracker.scores(self.runtime.site_of(item.url), item.url)
        except Exception:
            self.runtime.failed("structure", item.url)
            return
        if scores is not None:
            item.hub, item.authority = scores

    def _dropped(self, item: Any) -> None:
        """A page item a pipeline before WisdomPipeline dropped: the analysis (and page model)
        kept for its item is let go, counted under ``wisdom/skipped/dropped_before_cleaning``."""
        self._let_go(item, "dropped_before_cleaning")

    def _failed(self, item: Any) -> None:
        """A page item a pipeline before WisdomPipeline failed on (an exception other than
        DropItem): let go as a dropped one, counted under
        ``wisdom/skipped/failed_before_cleaning``."""
        self._let_go(item, "failed_before_cleaning")

    def _let_go(self, item: Any, reason: str) -> None:
        if not isinstance(item, PageItem) or item.role:
            return
        if self.runtime.in_flight.ticket(item.url) is not None:
            self.runtime.skip(reason)

    # -- idle and close ----------------------------------------------------------------------

    def _structure_items(self) -> list[Any]:
        items = self.tracker.structure_items()
        if items:
            self.runtime.inc("wisdom/items/site_structure", len(items))
            self._role_stats(items)
        return items

    def _role_stats(self, items: list[SiteStructureItem]) -> None:
        for role in ("toc", "article", "other"):
            n = sum(i.roles.get(role, 0) for i in items)
            assert self.runtime.stats is not None
            self.runtime.stats.set_value(f"wisdom/structure/{role}_pages", n)

    def _produce(self, stage: str) -> list[Any]:
        """The site-level items now: the grown sites' structure, then what the receivers of
        :data:`~wisdom_scrapy.signals.site_items` add, in the order they were connected (each
        failure counted and logged); nothing for a spider that never asked for the analysis
        (:attr:`asked`). A distributed crawl (its scheduler is wisdom_scrapy's) asked: its
        finaliser may have seen no page item."""
        if not (self.asked or self.runtime.distributed) or not self.runtime.may_finalise():
            return []
        failed = partial(self.runtime.failed, "site_items", f"({stage})")
        items: list[Any] = []
        try:
            items += self._structure_items()
        except Exception:
            failed()
        for more in send(self.crawler.signals, site_items, failed, stage=stage):
            if isinstance(more, list | tuple):
                items += more
            else:  # None, say: that receiver's items only are missing
                failed(error=TypeError(f"a receiver of site_items returned "
                                       f"{type(more).__name__}, not a list of items"))
        return items

    def on_idle(self) -> None:
        """Nothing left to crawl: the site-level items join the late items, which leave with
        the pages still waiting (:meth:`WisdomRuntime.on_idle`; the spider stays open until
        they did). In a distributed crawl only the finaliser adds site-level items, once the
        whole crawl is finished (:meth:`WisdomRuntime.may_finalise`)."""
        self.runtime.ready.extend(self._produce("idle"))
        self.runtime.on_idle()

    async def on_closed(self, reason: str) -> None:
        """The store checked (:meth:`WisdomRuntime.on_closed`), then
        :data:`~wisdom_scrapy.signals.store_closing` sent; a failing receiver is counted and
        logged, the others still run. Pages whose items never left (the project's own
        ``ITEM_PROCESSOR`` does not run the close flush) are counted and named."""
        if not self.runtime.flushed:
            self.runtime.report_unemitted(
                "the spider closed before going idle and ITEM_PROCESSOR does not emit them")
        self.runtime.on_closed()
        failed = partial(self.runtime.failed, "close", f"({reason})")
        await send_async(self.crawler.signals, store_closing, failed, reason=reason)

    async def on_engine_stopped(self) -> None:
        """The store is closed once the spider's close has finished: a signal during the close
        (SIGTERM, Ctrl-C) makes Scrapy stop the engine as soon as the requests in progress are
        done, while the first close still sends the held pages through the pipelines and then
        closes the feeds; the engine waits for this handler, so the crawl ends after its last
        item. Scrapy sends no signal once the ``spider_closed`` handlers (the feeds') are done,
        so this waits for the engine to let go of its spider, which it does right after."""
        engine = self.crawler.engine
        while engine is not None and engine.spider is not None:
            await sleep(CLOSE_POLL_SECONDS)
        self.runtime.close()
        self._remove_forced_stop_trigger()

    def _on_forced_stop(self) -> None:
        """Scrapy forces a stop (a second Ctrl-C or SIGTERM) by stopping the reactor at once;
        the reactor's shutdown runs :meth:`WisdomRuntime.forced_stop` first (nothing to do
        when the crawl closed normally). Without a reactor (``TWISTED_REACTOR_ENABLED`` off)
        the forced stop cancels the close flush, which calls it."""
        if is_reactor_installed():
            from twisted.internet import reactor

            # (the interface's stub lists no ``self``: mypy shifts the arguments by one)
            self._forced_stop_trigger = reactor.addSystemEventTrigger(
                "before", "shutdown", self._forced_stop)  # type: ignore[arg-type]

    def _forced_stop(self) -> None:
        """The shutdown trigger: fired, it is no longer the reactor's to remove (removing a
        fired trigger is deprecated in Twisted)."""
        self._forced_stop_trigger = None
        self.runtime.forced_stop()

    def _remove_forced_stop_trigger(self) -> None:
        """A crawl that closed normally lets go of its shutdown trigger: in a long-lived
        ``CrawlerRunner`` process each crawl's trigger would otherwise keep its runtime (and
        the pages it held) alive until the reactor stops."""
        trigger, self._forced_stop_trigger = self._forced_stop_trigger, None
        if trigger is None:
            return
        from twisted.internet import reactor

        with suppress(ValueError, KeyError):  # the shutdown is running it already
            reactor.removeSystemEventTrigger(trigger)  # type: ignore[call-arg,misc]
