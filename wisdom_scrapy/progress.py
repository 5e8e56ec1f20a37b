"""Crawl progress in the log: every ``LOGSTATS_INTERVAL`` seconds (Scrapy's own setting, 60 by
default, 0 turns it off), one line with what wisdom_scrapy did so far, next to Scrapy's
"Crawled N pages" line::

    wisdom_scrapy: fed 120 pages (60/min), items 80 article, 20 toc, 3 other, links dropped 400
    (deprioritized 0), store 1 site(s) 246 pages; warming up 127.0.0.1:8754 12/32 pages

The same figures are Scrapy stats: the counters the components keep (``wisdom/pages_fed``,
``wisdom/items/<role>``, ``wisdom/focus/dropped`` …) plus, set by this extension at each tick and
at close, ``wisdom/store/pages`` (pages the store holds for the crawl's sites) and
``wisdom/warmup/sites`` (sites not warm yet,
:meth:`~wisdom_scrapy.mining.wisdom.WisdomParams.is_warm`: their store still knows fewer than
``WISDOM_WARMUP_PAGES`` pages, at least 2; their pages may be held, see
:mod:`wisdom_scrapy.extraction`).

Cost per tick: one ``page_count`` per site of the crawl that is still warming up, and one per
site (at most :data:`MAX_SITES`, the most fed) for the store size.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.store import StoreError

if TYPE_CHECKING:
    from typing import Any

    from scrapy.crawler import Crawler

    from wisdom_scrapy.runtime import WisdomRuntime

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
        self.warm: set[str] = set()
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
        for site, _ in runtime.fed_sites.most_common(MAX_SITES):
            try:
                n = runtime.store.page_count(site)
            except StoreError:
                continue
            store_pages += n
            if not runtime.settings.wisdom.is_warm(n) and site not in self.warm:
                warming.append((site, n))
            else:
                self.warm.add(site)
        return store_pages, warming

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
        fed = self._stat("wisdom/pages_fed") + self._stat("wisdom/pages_unchanged")
        rate = (fed - self.fed_before) * 60.0 / self.interval
        self.fed_before = fed
        need = self.runtime.settings.wisdom.warm_pages
        warm_text = ""
        if warming:
            shown = ", ".join(f"{s} {n}/{need} pages" for s, n in warming[:_SHOWN_WARMING])
            more = f" and {len(warming) - _SHOWN_WARMING} more" if len(warming) > 3 else ""
            warm_text = f"; warming up {shown}{more}"
        rate_text = "final" if final else f"{rate:.0f}/min"
        logger.info(
            "wisdom_scrapy: fed %d pages (%s), items %d article, %d toc, %d other, "
            "links dropped %d (deprioritized %d), store %d site(s) %d pages%s",
            fed, rate_text, self._stat("wisdom/items/article"), self._stat("wisdom/items/toc"),
            self._stat("wisdom/items/other"), self._stat("wisdom/focus/dropped"),
            self._stat("wisdom/focus/deprioritized"), len(self.runtime.fed_sites),
            store_pages, warm_text,
        )  # fmt: skip
