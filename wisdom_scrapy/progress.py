"""Crawl progress in the log: every ``LOGSTATS_INTERVAL`` seconds (Scrapy's own setting, 60 by
default, 0 turns it off), one line with what wisdom_scrapy did so far, next to Scrapy's
"Crawled N pages" line::

    wisdom_scrapy: fed 120 pages (60/min), items 80 article, 20 toc, 3 other, links dropped 400
    (deprioritized 0), store 1 site(s) 246 pages; warming up 127.0.0.1:8754 (12 pages, held
    until its template shows, at most 32)

The figures are the Scrapy stats of the same names, never a sum under another name: "fed" is
``wisdom/pages_fed`` (pages stored new or changed), with ``wisdom/pages_unchanged`` shown beside
it when there are some ("fed 127 pages (+1 unchanged)"); the items are ``wisdom/items/<role>``,
the links ``wisdom/focus/dropped`` and ``…/deprioritized``. Set by this extension at each tick
and at close: ``wisdom/store/pages`` (pages the store holds for the crawl's sites) and
``wisdom/warmup/sites``, the sites "warming up": those whose pages the extractor still holds
for the warm-up (:mod:`wisdom_scrapy.engine.waits`), the same judgement as its "site … warm" log
line (with ``WISDOM_WARMUP_PAGES`` unset, a site is warm once its template shows, often long
before 32 pages).

Cost per tick: one ``page_count`` per site (at most :data:`MAX_SITES`, the most fed).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from wisdom_scrapy.engine.waits import WAITS
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.store import StoreError

if TYPE_CHECKING:
    from typing import Any

    from scrapy.crawler import Crawler

    from wisdom_scrapy.crawl_state import WisdomRuntime

__all__ = ["WisdomProgress"]

logger = logging.getLogger(__name__)
#: Sites whose store size is summed per tick (the ones most fed by this crawl).
MAX_SITES = 100
_SHOWN_WARMING = 3


class WisdomProgress:
    """Logs wisdom_scrapy's progress every ``LOGSTATS_INTERVAL``; see the module docstring."""

    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        # the crawl's WisdomExtension, reachable once every extension is built (opened)
        self.runtime: WisdomRuntime = None  # type: ignore[assignment]
        self.interval = interval
        self.task: Any = None
        self.fed_before = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomProgress:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured("LOGSTATS_INTERVAL is 0")
        if not crawler.settings.getbool("WISDOM_ENABLED", True):
            raise NotConfigured  # bare: the WisdomExtension logs it once
        progress = cls(crawler, interval)
        crawler.signals.connect(progress.opened, signal=signals.spider_opened)
        crawler.signals.connect(progress.closed, signal=signals.spider_closed)
        return progress

    def opened(self) -> None:
        self.runtime = WisdomExtension.of(self.crawler).runtime
        self.task = create_looping_call(self.log)
        self.task.start(self.interval, now=False)

    def closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.log(final=True)

    def _stat(self, name: str) -> int:
        stats = self.runtime.stats
        return int(stats.get_value(name, 0)) if stats is not None else 0

    def measure(self) -> tuple[int, list[tuple[str, int]]]:
        """(pages in the store for the crawl's sites, [(site, pages) still warming up])."""
        runtime = self.runtime
        store_pages = 0
        warming = []
        for site in (context.site for context in runtime.sites.most_fed(MAX_SITES)):
            try:
                n = runtime.store.page_count(site)
            except StoreError:
                continue
            store_pages += n
            if self._holding(site, n):
                warming.append((site, n))
        return store_pages, warming

    def _holding(self, site: str, stored: int) -> bool:
        """Whether the extractor still holds the site's pages for its warm-up (it logs "site
        … warm" when it stops): not once the store knows the pages it waits for (``stored``;
        its next page releases them). Once false it stays false (the site's flag never goes
        back, the store's pages only grow), so the progress keeps no set of its own."""
        context = self.runtime.sites.find(site)
        waits = WAITS.of(context) if context is not None else None
        return (waits is not None and context is not None and not context.cold_start_over
                and stored < self.runtime.settings.warmup_pages)  # fmt: skip

    def log(self, final: bool = False) -> None:
        """One progress line, and the store / warm-up figures as stats (at close: the totals,
        without a rate, as the last interval is partial)."""
        try:
            store_pages, warming = self.measure()
        except Exception:  # progress must never stop a crawl
            logger.debug("wisdom_scrapy: progress figures failed", exc_info=True)
            return
        stats = self.runtime.stats
        if stats is not None:
            stats.set_value("wisdom/store/pages", store_pages)
            stats.set_value("wisdom/warmup/sites", len(warming))
        fed = self._stat("wisdom/pages_fed")
        unchanged = self._stat("wisdom/pages_unchanged")
        rate = (fed + unchanged - self.fed_before) * 60.0 / self.interval
        self.fed_before = fed + unchanged
        rate_text = "final" if final else f"{rate:.0f}/min"
        if unchanged:
            rate_text = f"+{unchanged} unchanged, {rate_text}"
        logger.info(
            "wisdom_scrapy: fed %d pages (%s), items %d article, %d toc, %d other, "
            "links dropped %d (deprioritized %d), store %d site(s) %d pages%s",
            fed, rate_text, self._stat("wisdom/items/article"), self._stat("wisdom/items/toc"),
            self._stat("wisdom/items/other"), self._stat("wisdom/focus/dropped"),
            self._stat("wisdom/focus/deprioritized"), self.runtime.sites.n_fed,
            store_pages, self._warming_text(warming),
        )  # fmt: skip

    def _warming_text(self, warming: list[tuple[str, int]]) -> str:
        """The sites still warming up, with their pages in the store and what they wait for."""
        if not warming:
            return ""
        settings = self.runtime.settings  # as the extractor's params (WisdomRuntime)
        need = settings.warmup_pages
        until = f"held until {need}"
        if settings.warmup_derived and settings.cleaner == "wisdom":
            until = f"held until its template shows, at most {need}"
        shown = ", ".join(f"{s} ({n} pages, {until})" for s, n in warming[:_SHOWN_WARMING])
        more = f" and {len(warming) - _SHOWN_WARMING} more" if len(warming) > 3 else ""
        return f"; warming up {shown}{more}"
