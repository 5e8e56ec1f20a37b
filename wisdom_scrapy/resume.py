"""Late work that survives an interrupted crawl (``JOBDIR``).

The extractor holds pages in memory (warm-up, TOC pages waiting for their targets: see
:mod:`wisdom_scrapy.engine.waits`) and emits them at spider idle. A crawl stopped before idle
(Ctrl-C, ``CLOSESPIDER_*``, SIGKILL) never reaches idle, and when it is resumed with the same
``JOBDIR`` Scrapy's duplicate filter never fetches those pages again: their items would be lost.

So, when ``JOBDIR`` is set, the pages waiting in memory are mirrored in the term-entropy store
as keyed records (``TermStore.put_records``, kind :data:`KIND`, key = page URL), written as a
page starts and stops waiting (written at once, so a SIGKILL loses nothing either). A resumed
crawl reads them at spider open and fetches those pages again (``dont_filter``): the store sees
them unchanged (nothing counted twice) and the extractor emits their items as usual. A record
stops counting (an empty value: the records API has no delete) when its page's item has left.

What the mirror keeps of a site (the URLs recorded as waiting, the URLs re-scheduled) is its part
of the site's context (:data:`PENDING`), kept for the whole crawl: a record is cleared whenever
its page stops waiting, the site left or not.

A record holds only the page URL and the name of the spider callback that received it (JSON):
nothing from the store is ever unpickled or evaluated, since several processes may write it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import Request

from wisdom_scrapy.engine.sites import Part, Sites
from wisdom_scrapy.store import StoreError, TermStore

if TYPE_CHECKING:
    from scrapy import Spider

__all__ = ["KIND", "PENDING", "RESUMED_META", "PendingPages"]

logger = logging.getLogger(__name__)

#: ``kind`` of the store records of waiting pages.
KIND = "wisdom_pending"
#: Request meta key of the requests that fetch a waiting page again after a resume.
RESUMED_META = "wisdom_resumed"


@dataclass(slots=True, eq=False)
class _SitePending:
    """The mirror's part of one site's context (module docstring)."""

    recorded: set[str] = field(default_factory=set)  # URLs recorded as waiting
    resuming: set[str] = field(default_factory=set)  # URLs re-scheduled, not fetched yet


#: The waiting pages' mirror's part of a site's context.
PENDING: Part[_SitePending] = Part("pending")


class PendingPages:
    """Mirrors the extractor's waiting pages in ``store`` and brings them back on resume.

    ``waiting()`` returns the URLs waiting now, per site; ``count`` increments a stat.
    """

    def __init__(self, store: TermStore, waiting: Callable[[], Mapping[str, list[str]]],
                 count: Callable[..., None], sites: Sites) -> None:
        self.store = store
        self.sites = sites
        self.waiting = waiting
        self.count = count
        self._callbacks: dict[str, str | None] = {}  # url -> callback name, while it waits
        self._resumed: set[str] = set()  # every URL re-scheduled in this crawl
        self._resumed_received: set[str] = set()

    def received(self, site: str, url: str, callback: object) -> bool:
        """A page the spider received (its callback is remembered in case it has to wait).

        False for the second arrival of a re-scheduled page: after a SIGKILL, Scrapy's own
        JOBDIR state may be lost and the crawl fetch the page again by itself; its item must
        leave once.
        """
        if url in self._resumed:
            if url in self._resumed_received:
                return False
            self._resumed_received.add(url)
        part = PENDING.of(self.sites.get(site))
        if part is not None:
            part.resuming.discard(url)
        self.fed(url, callback)
        return True

    def fed(self, url: str, callback: object) -> None:
        """A page fed to the store: its callback is remembered, in case the page is recorded
        (not written to the store yet, or waiting)."""
        name = getattr(callback, "__name__", None)
        self._callbacks[url] = name if isinstance(name, str) else None

    def sync(self) -> None:
        """Write the pages that started or stopped waiting since the last call (if any)."""
        now = self.waiting()
        keep: set[str] = set()
        parts = dict(self.sites.having(PENDING))
        for site in set(now) | set(parts):
            part = parts.get(site) or self._part(site)
            current = set(now.get(site, ())) | part.resuming
            old = part.recorded
            keep |= current | old
            if current == old:
                continue
            records = {url: self._record(url) for url in current - old}
            records.update((url, b"") for url in old - current)
            try:
                self.store.put_records(site, KIND, records)
            except StoreError as exc:  # written at the next sync
                self.count("wisdom/store_errors")
                logger.warning("wisdom_scrapy: waiting pages of %s not recorded: %s", site, exc)
                continue
            part.recorded = current
        # only the callbacks of waiting pages are needed: memory stays bounded by them
        self._callbacks = {u: c for u, c in self._callbacks.items() if u in keep}

    def _part(self, site: str) -> _SitePending:
        context = self.sites.get(site)
        return PENDING.of(context) or PENDING.put(context, _SitePending())

    def _record(self, url: str) -> bytes:
        return json.dumps({"callback": self._callbacks.get(url)}).encode()

    def resume(self, spider: Spider, schedule: Callable[[Request], Any]) -> int:
        """Fetch again the pages an interrupted crawl left waiting; returns how many."""
        n = 0
        for site in self.store.sites():
            for url, blob in self.store.records(site, KIND).items():
                if not blob:
                    continue
                try:
                    name = json.loads(blob).get("callback")
                except (ValueError, AttributeError):
                    name = None
                callback = getattr(spider, name, None) if isinstance(name, str) else None
                schedule(Request(url, callback=callback if callable(callback) else None,
                                 dont_filter=True, meta={RESUMED_META: True}))
                part = self._part(site)
                part.resuming.add(url)
                self._resumed.add(url)
                part.recorded.add(url)
                self._callbacks[url] = name if isinstance(name, str) else None
                n += 1
        if n:
            self.count("wisdom/resumed_pages", n)
            logger.info("wisdom_scrapy: fetching again %d pages an interrupted crawl left "
                        "waiting", n)
        return n
