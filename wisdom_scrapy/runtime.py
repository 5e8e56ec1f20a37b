"""State one crawl shares between wisdom_scrapy's components: settings, the store, stats.

Every component (middlewares, pipelines, extensions) asks :meth:`WisdomRuntime.of` for the
crawler's runtime, so the store is opened once, at crawl start (a bad ``WISDOM_STORE_URI`` stops
the crawl there with an error that names it), and closed once, when the engine stops.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

from wisdom_scrapy.feed import feed_tree
from wisdom_scrapy.settings import WisdomSettings
from wisdom_scrapy.store import StoreError, TermStore, open_store, redact_uri

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["WisdomRuntime"]

logger = logging.getLogger(__name__)
_ATTR = "_wisdom_runtime"


class WisdomRuntime:
    """The settings, store and stats of one crawler; get it with :meth:`of`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = WisdomSettings.from_settings(crawler.settings)
        if not self.settings.enabled:
            raise NotConfigured("WISDOM_ENABLED is False")
        self.stats = crawler.stats
        try:
            self.store: TermStore = open_store(self.settings.store_uri)
        except StoreError as exc:
            raise StoreError(
                f"WISDOM_STORE_URI={redact_uri(self.settings.store_uri)!r}: {exc}"
            ) from exc
        logger.info("wisdom_scrapy: term-entropy store %r", self.store)
        crawler.signals.connect(self.close, signal=signals.engine_stopped)

    @classmethod
    def of(cls, crawler: Crawler) -> WisdomRuntime:
        """The crawler's runtime, created (and the store opened) on first use."""
        runtime = crawler.__dict__.get(_ATTR)
        if runtime is None:
            runtime = cls(crawler)
            setattr(crawler, _ATTR, runtime)
        return runtime

    def site_of(self, url: str) -> str:
        return self.settings.site_key(url)

    def skip(self, reason: str) -> None:
        assert self.stats is not None
        self.stats.inc_value(f"wisdom/skipped/{reason}")

    def feed_response(self, response: Response) -> bool:
        """Feed one response into the store; never raises. True if the store changed.

        Non-HTML, empty and oversized bodies are skipped and counted under
        ``wisdom/skipped/<reason>``; a store failure is logged and counted under
        ``wisdom/store_errors`` (the page is then missing from the store, and the count says so).
        """
        stats = self.stats
        assert stats is not None
        if not isinstance(response, HtmlResponse):
            self.skip("not_html")
            return False
        if len(response.body) > self.settings.max_page_bytes:
            self.skip("too_large")
            return False
        if not response.body.strip():
            self.skip("empty")
            return False
        try:
            root = response.selector.root
        except Exception:  # lxml/parsel raise a variety of errors on hostile bytes
            logger.debug("wisdom_scrapy: cannot parse %s", response.url, exc_info=True)
            self.skip("parse_error")
            return False
        if root is None or not hasattr(root, "iter"):
            self.skip("parse_error")
            return False
        try:
            result = feed_tree(
                self.store,
                root,
                response.url,
                site=self.site_of(response.url),
                keep_numbers=self.settings.keep_numbers,
            )
        except StoreError as exc:
            stats.inc_value("wisdom/store_errors")
            logger.warning("wisdom_scrapy: page %s not stored: %s", response.url, exc)
            return False
        stats.inc_value("wisdom/pages_fed" if result.changed else "wisdom/pages_unchanged")
        stats.inc_value("wisdom/terms", result.terms)
        stats.inc_value("wisdom/links", result.links)
        return result.changed

    def close(self) -> None:
        """Close the store (engine stopped); its data stays where it is."""
        self.store.close()
