"""``site`` spider: a plain crawl of any site from its start URL(s).

::

    scrapy crawl site -a url=http://127.0.0.1:8000/index.html -O items.jsonl
    scrapy crawl site -a urls=start-urls.txt -O items.jsonl   # one URL a line, # comments

The crawl stays on the hosts of the start URLs, compared by host *and* port (two local servers on
127.0.0.1 are two sites), follows every ``<a href>`` it finds there (skipping links to obvious
binary files; a page's links to one URL, whatever their fragments, make one request), and
yields a :class:`~wisdom_scrapy.items.PageItem` per HTML page; non-HTML responses are skipped.
With the wisdom_scrapy add-on enabled, the add-on focuses this crawl.

The host rule is the crawl's offsite policy (:class:`SiteOffsiteMiddleware` in place of
Scrapy's ``OffsiteMiddleware``), so it also stops a redirect or a ``<meta refresh>`` to another
site before the page is downloaded, and wisdom_scrapy's feed, which applies the crawl's offsite
policy to where a redirect landed, learns no page of another site.
"""

from __future__ import annotations

import posixpath
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.http import HtmlResponse, Response
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.settings import BaseSettings

from wisdom_scrapy.items import PageItem

__all__ = ["SiteOffsiteMiddleware", "SiteSpider", "page_title", "site_key"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SKIPPED_EXTENSIONS = frozenset("." + ext for ext in IGNORED_EXTENSIONS)


def site_key(url: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of an http(s) URL, ``None`` for other schemes. A scheme's default port
    is ``None``, so ``http://h/`` and ``https://h/`` are one site and ``http://h:8000/`` another.
    A malformed URL (``http://[zz/``: an invalid IPv6 host, a bad port) is ``None`` too."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if port == _DEFAULT_PORTS[parts.scheme]:
        port = None
    return parts.hostname.lower(), port


def page_title(response: HtmlResponse) -> str:
    """The page's ``<title>`` text, whitespace-normalised."""
    return " ".join(" ".join(response.css("title ::text").getall()).split())


def _read_url_file(path: str) -> list[str]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"site spider: cannot read the urls file -a urls={path!r}: {exc}") from exc
    urls = [line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
            for line in lines]
    return [u for u in urls if u]


class SiteOffsiteMiddleware(OffsiteMiddleware):
    """Scrapy's offsite filter with the spider's own rule, ``spider.is_allowed(url)`` (the
    start URLs' hosts and ports), for spiders that have one; ``allowed_domains`` otherwise."""

    def should_follow(self, request: scrapy.Request, spider: scrapy.Spider) -> bool:
        is_allowed = getattr(spider, "is_allowed", None)
        if is_allowed is None:
            return super().should_follow(request, spider)
        return bool(is_allowed(request.url))


class SiteSpider(scrapy.Spider):
    """Plain crawl of the sites of the start URLs; see the module docstring."""

    name = "site"

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # the host rule filters every request, redirects and <meta refresh> included (at the
        # spider's priority, as custom_settings would: the project's own entries are kept)
        middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
        middlewares.update({OffsiteMiddleware: None, SiteOffsiteMiddleware: 50})
        settings.set("DOWNLOADER_MIDDLEWARES", middlewares, priority="spider")

    def __init__(self, url: str | None = None, urls: str | None = None, *args: Any,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        starts: list[tuple[str, str]] = []
        if url and url.strip():
            starts.append(("url", url.strip()))
        if urls:
            from_file = _read_url_file(urls)
            if not from_file:
                raise ValueError(f"site spider: the urls file -a urls={urls!r} lists no URL")
            starts.extend(("urls", u) for u in from_file)
        if not starts:
            raise ValueError(
                "site spider: no start URL; pass -a url=URL or -a urls=FILE "
                "(a file with one URL a line, # comments)")
        for argument, start in starts:
            if site_key(start) is None:
                raise ValueError(
                    f"site spider: -a {argument}: {start!r} is not an http(s) URL with a host")
        self.start_urls = [u for _, u in starts]
        self.allowed_sites = {site_key(u) for u in self.start_urls}

    def is_allowed(self, url: str) -> bool:
        """True when ``url`` is on one of the start URLs' sites (host and port)."""
        return site_key(url) in self.allowed_sites

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | scrapy.Request]:
        if not isinstance(response, HtmlResponse) or not self.is_allowed(response.url):
            return
        yield PageItem(url=response.url, title=page_title(response))
        yield from self.follow_links(response, response.css("a::attr(href)").getall())

    def follow_links(self, response: HtmlResponse, hrefs: Iterable[str]
                     ) -> Iterator[scrapy.Request]:
        """A request for each link of the page to a page of the crawl's sites, once per URL
        without its fragment (the first occurrence's URL): Scrapy's duplicate filter would drop
        the others (its request fingerprint leaves the fragment out), after every middleware
        had handled them (a documentation index links to thousands of fragments of a page)."""
        seen: set[str] = set()
        # The part of a joined URL before its "#" depends only on the href's part before "#"
        # (an empty href, which joins to the page's own URL as it is, aside): one join each.
        joined: set[str | None] = set()
        for href in hrefs:
            href = href.strip()
            head = href.partition("#")[0] if href else None
            if head in joined:
                continue
            joined.add(head)
            try:  # a malformed href (http://[zz/) costs that link, not the page's other links
                url = response.urljoin(href)
            except ValueError:
                continue
            page = url.partition("#")[0]
            if page in seen:
                continue
            seen.add(page)
            if not self.is_allowed(url):  # malformed URLs have no site: never allowed
                continue
            ext = posixpath.splitext(urlsplit(url).path)[1].lower()
            if ext in _SKIPPED_EXTENSIONS:
                continue
            yield response.follow(url, callback=self.parse)
