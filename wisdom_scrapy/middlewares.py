"""The spider middleware: every HTML response into the term-entropy store and its site's link
structure, and the page items the spider yields held while their site is learned.

The cleaning itself (segmentation, mining, noise removal: PageItem → ArticleItem / TocItem) is the
item pipeline's, :class:`wisdom_scrapy.pipeline.WisdomPipeline`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.items import LATE_ITEMS_META, PageItem
from wisdom_scrapy.pipeline import WisdomPipeline

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["WisdomAnalysisMiddleware", "WisdomFeedMiddleware"]

logger = logging.getLogger(__name__)


class WisdomFeedMiddleware:
    """Feeds every HTML response that reaches the spider into the term-entropy store, and holds
    the spider's page items while their site is learned.

    It sits after Scrapy's HttpErrorMiddleware, so error pages (4xx/5xx) are not counted as
    pages of the site. It uses the tree Scrapy parsed for the response (``response.selector``),
    which the spider's own ``css()``/``xpath()`` calls then reuse: the page is parsed once.
    A failure here never reaches the spider: it is counted in stats and logged.

    Each :class:`PageItem` the spider yields for the response goes on to the item pipelines
    (where :class:`~wisdom_scrapy.pipeline.WisdomPipeline` cleans it) once its page can be
    analysed. Pages of a site the store does not know well enough yet, and TOC pages waiting
    for their link targets, are held (their response's body, not the response: Scrapy's
    scraper lets the response go, so held pages never count against its
    ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``) and go on later, with a later response's output, at
    spider idle or at close (see :mod:`wisdom_scrapy.engine.waits`). Everything else the spider
    yields passes untouched.
    """

    def __init__(self, wisdom: WisdomExtension) -> None:
        self.wisdom = wisdom
        self.runtime = wisdom.runtime
        wisdom.crawler.signals.connect(self._check_pipeline, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomFeedMiddleware:
        return cls(WisdomExtension.of(crawler))

    def _check_pipeline(self) -> None:
        """The pages this middleware holds and lets go must be cleaned: say so when the item
        pipeline is missing (a manual setup that forgot it), or they leave uncleaned."""
        if self.wisdom.crawler.get_item_pipeline(WisdomPipeline) is None:
            logger.error("wisdom_scrapy: ITEM_PIPELINES lacks wisdom_scrapy.WisdomPipeline: the "
                         "spider's PageItems leave uncleaned (the add-on lists it)")

    def process_spider_input(self, response: Response) -> None:
        try:
            self.runtime.feed_response(response)
        except Exception:  # a bug or a page nobody foresaw must not cost the spider its page
            self.runtime.failed("feed", response.url)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        # the page joins its site's link structure, whether or not focusing is on
        self.wisdom.linked_page(response)
        late = response.meta.get(LATE_ITEMS_META)  # pages that left the waits already
        # With worker processes a page is taken after the rest of the output: its requests
        # never wait for the analyses under way.
        deferred = self.runtime.extractor.remote is not None
        pages = []
        async for obj in result:
            if isinstance(obj, PageItem) and not obj.role and not late:
                self.wisdom.asked = True  # the spider asks for the analysis
                if deferred:
                    pages.append(obj)
                    continue
                for item in await self._take(response, obj):
                    yield item
            else:
                yield obj
        if deferred:
            try:
                await self.runtime.finish_completed()
            except Exception:  # the pages stay pending: they leave at idle or close
                self.runtime.failed("analysis", response.url)
        for page in pages:
            for item in await self._take(response, page):
                yield item
        for item in self.runtime.take_ready():
            yield item

    async def _take(self, response: Response, page: PageItem) -> list[Any]:
        try:
            return await self.runtime.take(response, page)
        except Exception:  # never lose the page: it goes on, to be passed unanalysed
            self.runtime.failed("analysis", response.url)
            self.runtime.in_flight.untaken(page.url)  # its record does not wait for it
            return [page]


class WisdomAnalysisMiddleware:
    """Replaced by the item pipeline :class:`wisdom_scrapy.pipeline.WisdomPipeline` (with
    :class:`WisdomFeedMiddleware` holding the pages that wait); listing it does nothing but
    say so."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomAnalysisMiddleware:
        raise NotConfigured(
            "the analysis is the item pipeline wisdom_scrapy.WisdomPipeline now: remove "
            "wisdom_scrapy.middlewares.WisdomAnalysisMiddleware from SPIDER_MIDDLEWARES and list "
            "the pipeline in ITEM_PIPELINES (the add-on does both)"
        )
