"""Spiders of the close tests (``-s SPIDER_MODULES=…,tests.close_spiders``) and their slow item
pipeline (``ITEM_PIPELINES``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import scrapy
from itemadapter import ItemAdapter
from scrapy.utils.asyncio import sleep

from sample_project.spiders.demo import DemoSpider

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class DemoTwiceSpider(DemoSpider):
    """The demo crawl with its start URL requested twice, the second time with ``dont_filter``
    (as Scrapy's default ``start()`` requests ``start_urls``), so the page is fetched twice."""

    name = "demo_twice"

    async def start(self) -> AsyncIterator[scrapy.Request]:
        async for request in super().start():
            yield request
            yield request.replace(dont_filter=True)


class DemoHomeLinksSpider(DemoSpider):
    """The demo crawl's spider that follows the home page's links only: every page's
    PageItem, and requests from the home page alone."""

    name = "demo_home_links"

    def parse(self, response, **kwargs):  # type: ignore[no-untyped-def,override]
        home = response.url == self.base_url + "index.html"
        for obj in super().parse(response, **kwargs):
            if home or not isinstance(obj, scrapy.Request):
                yield obj


class SlowPipeline:
    """An item pipeline of the close tests: each item takes ``TEST_ITEM_SECONDS`` (awaited, so
    the reactor runs meanwhile and a signal is handled), so the close of a crawl holding many
    pages lasts long enough for a test to signal it in the middle, once the log shows an item
    passing after "Closing spider" (a test waits for a log line, never for a time)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.items = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SlowPipeline:
        return cls(crawler.settings.getfloat("TEST_ITEM_SECONDS", 0.2))

    async def process_item(self, item: Any) -> Any:
        self.items += 1
        logger.info("slow pipeline: item %d", self.items)
        await sleep(self.seconds)
        return item


class DictPipeline:
    """An item pipeline of the close tests that returns each item as a plain dict, as many
    projects' last pipeline does: ``item_scraped`` then carries no page item."""

    def process_item(self, item: Any) -> dict[str, Any]:
        return ItemAdapter(item).asdict()
