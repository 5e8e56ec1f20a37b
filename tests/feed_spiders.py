"""Spiders of the feed tests (``-s SPIDER_MODULES=…,tests.feed_spiders``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import HtmlResponse, Response

from sample_project.spiders.demo import DemoSpider
from sample_project.spiders.site import SiteSpider, page_title
from wisdom_scrapy import PageItem


class FieldsSpider(SiteSpider):
    """The ``site`` crawl with spider fields: ``depth`` (a number) on every page, ``where`` (a
    dict) from the 21st page the spider yields on, so that the first items emitted lack it (a
    field a spider sets on some pages only)."""

    name = "site_fields"
    yielded = 0

    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | scrapy.Request]:
        if not isinstance(response, HtmlResponse) or not self.is_allowed(response.url):
            return
        depth = response.meta.get("depth", 0)
        self.yielded += 1
        fields: dict[str, Any] = {"depth": depth}
        if self.yielded > 20:
            fields["where"] = {"depth": depth, "from": "crawl"}
        yield PageItem(url=response.url, title=page_title(response), **fields)
        yield from self.follow_links(response, response.css("a::attr(href)").getall())


class PlainDemoSpider(DemoSpider):
    """The ``demo`` crawl as a plain Scrapy spider: a dict per page, never a PageItem (a
    project's other spider, which the add-on must leave alone)."""

    name = "demo_plain"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any] | scrapy.Request]:
        for obj in super().parse(response, **kwargs):
            yield {"url": obj.url, "title": obj.title} if isinstance(obj, PageItem) else obj


class DeclaredDemoSpider(PlainDemoSpider):
    """:class:`PlainDemoSpider` that asks for the analysis without yielding a PageItem."""

    name = "demo_declared"
    wisdom_analysis = True
