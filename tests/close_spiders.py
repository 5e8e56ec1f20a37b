"""Spiders of the close tests (``-s SPIDER_MODULES=…,tests.close_spiders``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import scrapy

from sample_project.spiders.demo import DemoSpider


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
