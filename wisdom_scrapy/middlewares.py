"""Spider middlewares: the term-entropy feed (every HTML response into the store) and the
analysis of the pages the spider yields (PageItem → ArticleItem / TocItem)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.items import PageItem
from wisdom_scrapy.runtime import PAGE_ITEMS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response


__all__ = ["WisdomAnalysisMiddleware", "WisdomFeedMiddleware"]


class WisdomFeedMiddleware:
    """Feeds every HTML response that reaches the spider into the term-entropy store.

    It sits after Scrapy's HttpErrorMiddleware, so error pages (4xx/5xx) are not counted as
    pages of the site. It uses the tree Scrapy parsed for the response (``response.selector``),
    which the spider's own ``css()``/``xpath()`` calls then reuse: the page is parsed once.
    A failure here never reaches the spider: it is counted in stats and logged.
    """

    def __init__(self, wisdom: WisdomExtension) -> None:
        self.wisdom = wisdom
        self.runtime = wisdom.runtime

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomFeedMiddleware:
        return cls(WisdomExtension.of(crawler))

    def process_spider_input(self, response: Response) -> None:
        try:
            self.runtime.feed_response(response)
        except Exception:  # a bug or a page nobody foresaw must not cost the spider its page
            self.runtime.failed("feed", response.url)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        """The page joins its site's link structure (whether or not focusing is on), then the
        spider's output passes untouched."""
        self.wisdom.linked_page(response)
        async for obj in result:
            yield obj


class WisdomAnalysisMiddleware:
    """Replaces each :class:`PageItem` the spider yields with the page's cleaned item.

    The item is an :class:`~wisdom_scrapy.items.ArticleItem`, a
    :class:`~wisdom_scrapy.items.TocItem`, or the PageItem with ``role`` "other". Pages of a
    site the store does not know well enough yet, and TOC pages waiting for their link targets,
    come out later, with a later response's output or at spider idle (see
    :mod:`wisdom_scrapy.extraction`). Everything else the spider yields passes untouched.

    This is a spider middleware rather than an item pipeline because a pipeline must return or
    drop each item at once, while a page may have to wait for the site's template to be learned.
    """

    def __init__(self, wisdom: WisdomExtension) -> None:
        self.wisdom = wisdom
        self.runtime = wisdom.runtime

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomAnalysisMiddleware:
        return cls(WisdomExtension.of(crawler))

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for obj in result:
            if isinstance(obj, PageItem) and not obj.role:
                try:
                    items = self.runtime.extract(response, obj)
                except Exception:  # never lose the page: pass it on unanalysed
                    self.runtime.failed("analysis", response.url)
                    items = [obj]
            else:
                items = [obj]
            for item in items:
                yield self._annotated(item)
        for item in self.runtime.take_ready():
            yield self._annotated(item)

    def _annotated(self, item: Any) -> Any:
        if isinstance(item, PAGE_ITEMS):
            self.wisdom.annotate(item)
        return item
