"""The item pipeline: each page the spider yielded (:class:`~wisdom_scrapy.items.PageItem`)
becomes its cleaned item — segmentation, informative-structure mining and noise removal
(:func:`~wisdom_scrapy.analysis.page_analysis.analyze_page`) — an
:class:`~wisdom_scrapy.items.ArticleItem`, a :class:`~wisdom_scrapy.items.TocItem`, or the PageItem
with ``role`` "other".

A pipeline must return each item at once: a page that has to wait (its site not learned yet, a
TOC page whose link targets are not fetched yet) is therefore held before the pipelines, by the
feed spider middleware (:class:`~wisdom_scrapy.middlewares.WisdomFeedMiddleware`), which lets
its PageItem go on once it can be analysed. Holding it in the pipeline instead would keep its
response in Scrapy's scraper slot (which stops downloading past ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``,
5 MB: the pages the site needs would never come) and the spider from ever going idle.

A page whose wait was decided with an analysis (a page of a warm site: is it a TOC page whose
targets are missing?) is not analysed again; the pages that leave at spider idle, at close or
past ``WISDOM_MAX_HELD_PAGES`` are analysed here, with what the store knows then.

Pipelines before this one see the PageItem (drop it to skip its analysis; a field they set is
carried to the cleaned item), pipelines after it the cleaned item. Every page item also gets its
``hub`` / ``authority`` (the site's link analysis as it stands: final at idle and close), and a
:class:`~wisdom_scrapy.items.SiteStructureItem` its ``item_roles`` (the roles of the items made
for its site, which left before it). Other items pass untouched.

With ``WISDOM_FOLLOW_TOC_LINKS`` the pipeline also makes the crawl a focused one: each TocItem's
links (what the page lists, its informative paths) and its ``page_turns`` (the list's other
pages: its pager, which the links leave out, so that pages 2..N of a list are reached too) are
requested through ``crawler.engine.crawl``, with the spider's default callback, so a spider
that follows no links itself, or only some, still reaches the pages the site's TOCs lead to.
Scrapy's duplicate filter drops the URLs already requested and its offsite policy the other
sites' links; nothing is requested once the spider is closing.

:class:`WisdomItemProcessor` (Scrapy's ``ITEM_PROCESSOR``; the add-on sets it) runs the item
pipelines as Scrapy's own manager does, and at the spider's close first sends the pages still
held through them: a spider closed before going idle (``CLOSESPIDER_*``, Ctrl-C, SIGTERM) never
reaches the idle flush, and Scrapy closes the item pipelines after the last response's items and
before ``spider_closed``, where the feed exports close; so their items reach every pipeline and
every feed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.pipelines import ItemPipelineManager
from scrapy.utils.misc import load_object

from wisdom_scrapy.crawl_state import PAGE_ITEMS
from wisdom_scrapy.engine.worker_pool import WorkerHung
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.items import PageItem, SiteStructureItem, TocItem

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["FOLLOWED_META", "WisdomItemProcessor", "WisdomPipeline"]

logger = logging.getLogger(__name__)

#: Meta key of the requests ``WISDOM_FOLLOW_TOC_LINKS`` makes: the URL of the TOC page linking.
FOLLOWED_META = "wisdom_toc_page"


class WisdomPipeline:
    """Turns each PageItem into its cleaned item (module docstring)."""

    def __init__(self, wisdom: WisdomExtension) -> None:
        self.wisdom = wisdom
        self.runtime = wisdom.runtime

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomPipeline:
        wisdom = WisdomExtension.of(crawler)
        _check_item_processor(crawler)
        return cls(wisdom)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem) and not item.role:
            try:
                item = await self.runtime.clean(item)
            except WorkerHung as exc:  # its traceback would show only the wait
                self.runtime.failed("analysis", item.url, exc)
            except Exception:  # never lose the page: it goes on unanalysed
                self.runtime.failed("analysis", item.url)
        if isinstance(item, TocItem) and self.runtime.settings.follow_toc_links:
            self._follow(item)
        if isinstance(item, PAGE_ITEMS):
            self.wisdom.annotate(item)
        elif isinstance(item, SiteStructureItem):
            await self.runtime.stamp_roles(item)
        return item

    def _follow(self, item: TocItem) -> None:
        """Request the TOC page's links and page turns (``WISDOM_FOLLOW_TOC_LINKS``, module
        docstring)."""
        engine = self.wisdom.crawler.engine
        if engine is None or not engine.running or self.runtime.closing:
            return
        urls = list(dict.fromkeys(link["url"] for link in item.links))
        turns = [url for url in dict.fromkeys(item.page_turns) if url not in urls]
        for url in urls + turns:
            engine.crawl(Request(url, meta={FOLLOWED_META: item.url}))
        self.runtime.inc("wisdom/follow/toc_links", len(urls))
        if turns:
            self.runtime.inc("wisdom/follow/page_turns", len(turns))


class WisdomItemProcessor(ItemPipelineManager):
    """Scrapy's item pipeline manager whose close first emits the pages still held (module
    docstring): each item goes through the pipelines as a spider's would
    (``Scraper.start_itemproc_async``: ``item_scraped`` / ``item_dropped`` / ``item_error``,
    the log line, the feeds), then the pipelines close. Subclass it for a processor of your
    own; any other ``ITEM_PROCESSOR`` is warned about (the held pages cannot leave then)."""

    async def process_item_async(self, item: Any) -> Any:
        """The pipelines' result, then the page marked as passed by the item that went in: a
        later pipeline may return a dict or change the URL, and ``item_scraped`` carries what
        it returned (its page would stay pending, and a ``JOBDIR`` resume emit it again)."""
        try:
            output = await super().process_item_async(item)
        except asyncio.CancelledError:  # a forced stop: the page stays pending, and is named
            raise
        except Exception:  # dropped or failed: it has passed all the same
            self._passed(item)
            raise
        self._passed(item)
        return output

    def _passed(self, item: Any) -> None:
        wisdom = WisdomExtension.active(self.crawler) if self.crawler is not None else None
        if wisdom is not None:
            wisdom.runtime.passed(item)

    async def close_spider_async(self) -> None:
        crawler = self.crawler
        wisdom = WisdomExtension.active(crawler) if crawler is not None else None
        engine = crawler.engine if crawler is not None else None
        if wisdom is not None and engine is not None:
            scraper = engine.scraper
            await wisdom.runtime.flush_at_close(
                lambda item: scraper.start_itemproc_async(item, response=None))
        await super().close_spider_async()


def _check_item_processor(crawler: Crawler) -> None:
    """Warn when the project's ``ITEM_PROCESSOR`` is not :class:`WisdomItemProcessor` (or a
    subclass of it): the pages held when a spider closes before going idle cannot leave then
    (they are counted and named at close: ``WisdomExtension.on_closed``)."""
    name = crawler.settings.get("ITEM_PROCESSOR")
    processor = load_object(name)
    if isinstance(processor, type) and issubclass(processor, WisdomItemProcessor):
        return
    logger.warning("wisdom_scrapy: ITEM_PROCESSOR=%r is not %s.%s (or a subclass): pages "
                   "held when the spider closes before going idle (CLOSESPIDER_*, Ctrl-C, "
                   "SIGTERM) cannot leave; they are counted under wisdom/pages_lost and named",
                   name, WisdomItemProcessor.__module__, WisdomItemProcessor.__qualname__)
