"""Spider middlewares: the term-entropy feed (every HTML response into the store)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisdom_scrapy.runtime import WisdomRuntime

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["WisdomFeedMiddleware"]


class WisdomFeedMiddleware:
    """Feeds every HTML response that reaches the spider into the term-entropy store.

    It sits after Scrapy's HttpErrorMiddleware, so error pages (4xx/5xx) are not counted as
    pages of the site. It uses the tree Scrapy parsed for the response (``response.selector``),
    which the spider's own ``css()``/``xpath()`` calls then reuse: the page is parsed once.
    A failure here never reaches the spider: it is counted in stats and logged.
    """

    def __init__(self, runtime: WisdomRuntime) -> None:
        self.runtime = runtime

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomFeedMiddleware:
        return cls(WisdomRuntime.of(crawler))

    def process_spider_input(self, response: Response) -> None:
        self.runtime.feed_response(response)
