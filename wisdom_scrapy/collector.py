"""Python's cyclic garbage collector during a crawl (``WISDOM_TUNE_GC``, on by default).

Nearly every object a page's analysis allocates is freed by reference counting as soon as the
page is done; the collector is there for cycles. But with CPython's default thresholds
(700, 10, 10) a full collection runs after every ~70,000 net allocations, and each walks every
tracked object: the modules, Scrapy's components and the add-on's per-site state. In a crawl of
the Python docs with the add-on, those full collections take about a sixth of the crawl's CPU.

So, from spider open to spider close:

* **freeze** (:func:`gc.freeze`) what is alive when the spider opens (imports, settings, the
  store, Scrapy's components): it lives as long as the crawl, and no collection walks it again;
* a **higher generation-0 threshold** (:data:`YOUNG_THRESHOLD`), which makes CPython's own
  full collections rare: the young collections cost the same in total (they walk the same new
  objects in fewer rounds);
* a **full collection every** :data:`FULL_EVERY` **responses**, so the cyclic garbage waiting
  is bounded by the crawl's progress, not by the allocation count (a response caught in a cycle
  of Scrapy's download machinery keeps its body and parsed tree until a full collection); and
  one at spider close.

What each part saves is measured in ``benchmarks/README.md`` (``site_crawl``).

What a full collection costs (``benchmarks/gc_probe.py``): a walk of every tracked object not
frozen, and freeing the responses it finds (their trees: any way of freeing them costs that).
The walk is the crawl's own state: the pages in flight and Scrapy's pending requests, which on a
site whose frontier grows make it grow with the crawl (193 ms at 3,000 pages of the endless
site). Collecting by the bytes of the responses received instead (small pages waiting in larger
numbers) cut that there but let the endless site's RSS grow faster (``benchmarks/README.md``).

At spider close the thresholds are put back and the frozen objects unfrozen, so the rest of the
program collects as before. Several crawlers in one process (``CrawlerProcess``) share one
tuning: the first to open applies it, the last to close puts the old one back.
``WISDOM_TUNE_GC = False`` leaves the collector alone (a program that tunes it itself).
"""

from __future__ import annotations

import gc
import logging
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["FULL_EVERY", "YOUNG_THRESHOLD", "CollectorTuning"]

logger = logging.getLogger(__name__)

#: Generation-0 threshold during a crawl (CPython's default: 700). It scales how often the older
#: generations are collected too (each after 10 collections of the one below).
YOUNG_THRESHOLD = 20_000
#: Responses between the tuning's own full collections: the cyclic garbage waiting for one (a
#: response caught in a cycle of Scrapy's download machinery keeps its body and parsed tree) is
#: at most this many responses' worth, two rounds of Scrapy's default 16 concurrent requests.
FULL_EVERY = 32


class CollectorTuning:
    """The collector's tuning for one crawler (module docstring): applied at spider open, put
    back at spider close."""

    _crawls = 0  # crawlers of this process between their spider open and close
    _saved: tuple[int, int, int] | None = None  # the thresholds before the first opened

    def __init__(self, crawler: Crawler) -> None:
        self.open = False
        self.responses = 0
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.received, signal=signals.response_received)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    def opened(self) -> None:
        """Freeze what is alive and raise the young threshold (the first crawler to open)."""
        cls = type(self)
        if cls._crawls == 0:
            cls._saved = gc.get_threshold()
            gc.collect()  # what start-up left as garbage is not frozen with the rest
            gc.freeze()
            gc.set_threshold(YOUNG_THRESHOLD, *cls._saved[1:])
            logger.debug("wisdom_scrapy: %d objects frozen, gc thresholds %s",
                         gc.get_freeze_count(), gc.get_threshold())  # fmt: skip
        cls._crawls += 1
        self.open = True

    def received(self) -> None:
        """A full collection every :data:`FULL_EVERY` responses."""
        self.responses += 1
        if self.open and self.responses % FULL_EVERY == 0:
            gc.collect()

    def closed(self) -> None:
        """A last full collection; the last crawler to close puts the old thresholds back and
        unfreezes."""
        if not self.open:  # closed without having opened (a failed start)
            return
        self.open = False
        cls = type(self)
        cls._crawls -= 1
        gc.collect()
        if cls._crawls == 0 and cls._saved is not None:
            gc.set_threshold(*cls._saved)
            gc.unfreeze()
            cls._saved = None
