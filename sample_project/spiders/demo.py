"""``demo`` spider: a plain crawl of the generated demo news site, served locally.

::

    scrapy crawl demo -O demo.jsonl                       # fresh site in a temporary folder
    python -m sample_project.demo_site /tmp/demo          # or build it once ...
    scrapy crawl demo -a site_dir=/tmp/demo -O demo.jsonl # ... and crawl that build

``site_dir`` is a directory written by :func:`sample_project.demo_site.build_demo_site` (the spider
serves ``site_dir/site``; the site is built there first when it is missing). Without it the site
is built in a temporary folder that is removed when the spider closes. The static server starts
when the spider opens and stops when it closes, on port 8754 (``-a port=N``; a free port if
that one is taken), so that a second run finds the site warm in the persistent store.
``spider.ground_truth_path`` is the ground-truth
JSON of the crawled build (for benchmarks: with a temporary build it is gone after the crawl).

The crawl follows every link on the server's host and yields a
:class:`~wisdom_scrapy.items.PageItem` per HTML page: with the wisdom_scrapy add-on enabled it is
the focused crawl, with ``-s ADDONS={}`` the plain one.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Response

from sample_project.demo_site import GROUND_TRUTH_FILE, SITE_DIR, build_demo_site
from sample_project.spiders.site import page_title
from wisdom_scrapy.items import PageItem
from wisdom_scrapy.testing import StaticServer

__all__ = ["DemoSpider"]


# A fixed port keeps the demo site's key (host:port) from run to run, so a second
# `scrapy crawl demo` finds its pages in the persistent store (pages_unchanged, warm start).
DEFAULT_PORT = 8754


class DemoSpider(scrapy.Spider):
    """Serves a demo-site build on 127.0.0.1 and crawls all of it; see the module docstring."""

    name = "demo"

    def __init__(
        self, site_dir: str | None = None, port: str | int = DEFAULT_PORT, *args: Any, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if site_dir:
            root = Path(site_dir)
            if not (root / SITE_DIR / "index.html").is_file():
                self.logger.info("demo: no site in %s, building it", root)
                build_demo_site(root)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="wisdom-demo-")
            root = Path(self._tmp.name)
            build_demo_site(root)
        self.root = root.resolve()
        self.site_path = self.root / SITE_DIR
        self.ground_truth_path = self.root / GROUND_TRUTH_FILE
        self.port = int(port)
        self.server = StaticServer(self.site_path, port=self.port)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> DemoSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._on_spider_opened, signal=signals.spider_opened)
        return spider

    def _on_spider_opened(self) -> None:
        try:
            self.server.start()
        except OSError as exc:  # the port is taken: any free one will do (a new site key)
            self.logger.info("demo: port %d unavailable (%s), using a free port", self.port, exc)
            self.server = StaticServer(self.site_path)
            self.server.start()
        self.logger.info("demo: serving %s at %s", self.site_path, self.server.url)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/`` of the running server."""
        return self.server.url

    async def start(self) -> AsyncIterator[scrapy.Request]:
        if not self.server.running:  # opened without the signal (e.g. a bare engine in tests)
            self._on_spider_opened()
        yield scrapy.Request(self.base_url + "index.html", callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | scrapy.Request]:
        if not isinstance(response, HtmlResponse):
            return
        yield PageItem(url=response.url, title=page_title(response))
        host = urlsplit(self.base_url).netloc
        for href in response.css("a::attr(href)").getall():
            try:
                parts = urlsplit(response.urljoin(href.strip()))
            except ValueError:  # a malformed href (http://[zz/): skip it, not the page's links
                continue
            url = parts.geturl()
            if parts.scheme == "http" and parts.netloc == host:
                yield response.follow(url, callback=self.parse)

    def closed(self, reason: str) -> None:
        self.server.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
