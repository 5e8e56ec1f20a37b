"""A third party's receivers of wisdom_scrapy's signals (:mod:`wisdom_scrapy.signals`), as a
test-only extension a ``scrapy crawl`` subprocess loads (``EXTENSIONS``); what it saw goes to
the crawl's stats (``test/…``), which :class:`tests.crawling.StatsDump` writes out."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from wisdom_scrapy import signals
from wisdom_scrapy.extension import WisdomExtension

#: what a failing receiver raises
FAILURE = "a third party's receiver fails"


class ThirdParty:
    """Connects one receiver to each signal; with ``TEST_SIGNALS_FAIL``, a failing one too."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        assert crawler.stats is not None
        self.stats = crawler.stats
        self.produced = False
        for receiver, signal in ((self.analysed, signals.page_analysed),
                                 (self.site_items, signals.site_items),
                                 (self.closing, signals.store_closing)):  # fmt: skip
            crawler.signals.connect(receiver, signal=signal)
            if crawler.settings.getbool("TEST_SIGNALS_FAIL"):
                crawler.signals.connect(self.fail, signal=signal)
        if crawler.settings.getbool("TEST_SIGNALS_FAIL"):  # a receiver that forgets to return
            crawler.signals.connect(self.returns_nothing, signal=signals.site_items)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ThirdParty:
        return cls(crawler)

    def analysed(self, site: str, analysis: Any) -> None:
        self.stats.inc_value("test/page_analysed")

    def site_items(self, stage: str) -> list[dict[str, str]]:
        """One item, the first time: the site-level items leave through the item flow."""
        if self.produced:
            return []
        self.produced = True
        return [{"third_party": stage}]

    async def closing(self, reason: str) -> None:
        """The store is still open: its sites are read."""
        store = WisdomExtension.of(self.crawler).runtime.store
        self.stats.set_value("test/store_closing", reason)
        self.stats.set_value("test/store_sites", len(store.sites()))

    def fail(self) -> None:
        raise RuntimeError(FAILURE)

    def returns_nothing(self, stage: str) -> None:
        """Returns None where a list of items is due: a counted failure of its own; the other
        receivers' items still leave."""
