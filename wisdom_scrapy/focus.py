"""Informative-path focusing: a spider middleware that keeps the crawl on a site's informative
structure (WISDOM §1: "crawlers can use the IS to focus on crawling informative paths";
TKDE §1: crawlers and agents "can focus on the informative structure").

For every :class:`~scrapy.Request` the spider yields while handling a page, the middleware finds
the request's link in that page (by URL, without the fragment; then by canonical URL) and asks the
site's block statistics (:mod:`wisdom_scrapy.engine.link_graph`) whether the link sits in an
informative block or only in redundant ones (template links: menus, footers, sidebars repeated on
every page, per-page utility links such as print / share / page numbers):

* a link with at least one informative occurrence is **kept**, and its priority raised by
  ``round(P · α · (1 + min(h, 4)) / 5)`` (0 … P), where α is its LAMIS link weight
  1 − E(anchor text) (the best of its informative occurrences), h the source page's hub score
  relative to the site mean (one HITS step for a page not analysed yet), and
  P = ``WISDOM_FOCUS_PRIORITY``: informative links of good hubs are fetched first;
* a link found only in template blocks is kept unjudged when one of its occurrences is a *page
  turn* (:meth:`~wisdom_scrapy.engine.link_graph.SiteRecorder.page_turns`: a "next" / "Older posts"
  / page-number link whose target changes from page to page and is another page of the same
  list by its URL or by ``rel="next"`` / ``"prev"``): pagination is the only path to a list's
  later pages and to the old posts they hold;
* any other link found only in template blocks is **dropped** (``WISDOM_FOCUS = "drop"``, the
  default) or **deprioritised** by P (``"deprioritize"``: fetched after every informative link);
  ``"off"`` leaves every request alone.

Never dropped: requests with ``meta["wisdom_follow"] = True`` (the user's must-follow links),
requests whose URL is not a link of the page (built by the spider: forms, APIs, sitemaps …),
requests from responses the feed did not model (non-HTML, skipped pages), and, during cold start,
everything: before the site is warm (:meth:`~wisdom_scrapy.mining.wisdom.WisdomParams.is_warm`:
this process has records of ``WISDOM_WARMUP_PAGES`` pages of the site, at least 2), and for links
whose block path it has seen on fewer than ``WISDOM_FOCUS_MIN_PAGES`` pages (a template that is
not known yet). The decision only uses the site's own statistics (no tag or class names).

It focuses only a spider that asked for the analysis
(:attr:`~wisdom_scrapy.extension.WisdomExtension.asked`: ``wisdom_analysis = True``, or a
PageItem yielded): the requests of a spider that never did pass untouched, so a project's other
spiders crawl as they would without the add-on.

It works with any spider — plain callbacks, ``CrawlSpider`` rules (their requests are spider
output too), the sample ``site`` and ``demo`` spiders — because it only looks at the requests
coming out of the spider. The site's link structure it decides with is the crawl's
(:class:`~wisdom_scrapy.extension.WisdomExtension`: fed by the feed middleware, it also gives the
items their ``hub`` / ``authority`` and emits the :class:`~wisdom_scrapy.items.SiteStructureItem`),
so a crawl with the focus off (``"off"``, or this middleware set to ``None``) loses neither.

Stats: ``wisdom/focus/kept``, ``wisdom/focus/dropped``, ``wisdom/focus/deprioritized`` (every
decision, so kept + dropped + deprioritized = requests seen), and among the kept
``wisdom/focus/cold`` (cold start), ``wisdom/focus/must_follow``, ``wisdom/focus/unmatched``
(not a link of the page), ``wisdom/focus/self`` (the page itself, an in-page ``#anchor``),
``wisdom/focus/page_turn`` (a page turn of a list);
``wisdom/focus/microseconds``: time spent in this middleware (its share of the site analysis
included), ``wisdom/structure/microseconds``: time spent in the site's link analyses.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag

import numpy as np
from scrapy import Request
from w3lib.url import canonicalize_url

from wisdom_scrapy.extension import WisdomExtension

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from numpy.typing import NDArray
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from wisdom_scrapy.engine.link_graph import PageLinks

__all__ = ["MUST_FOLLOW_META", "WisdomFocusMiddleware"]

logger = logging.getLogger(__name__)
#: Request meta key: a request with ``meta[MUST_FOLLOW_META] = True`` is never dropped.
MUST_FOLLOW_META = "wisdom_follow"
_HUB_CAP = 4.0


@dataclass
class _Page:
    """One page's links as the focus sees them while the spider's output passes."""

    site: str
    record: PageLinks
    urls: list[str]
    template: NDArray[np.bool_]
    turns: NDArray[np.bool_]
    known: NDArray[np.bool_]
    alpha: NDArray[np.float64]
    hub: float
    warm: bool
    by_url: dict[str, list[int]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    decisions: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    _by_canonical: dict[str, list[int]] | None = None

    def occurrences(self, url: str) -> list[int] | None:
        """The link occurrences of ``url`` (fragment removed) in the page, or None."""
        found = self.by_url.get(url)
        if found is not None:
            return found
        if self._by_canonical is None:
            self._by_canonical = {}
            for u, occ in self.by_url.items():
                self._by_canonical.setdefault(canonicalize_url(u), []).extend(occ)
        try:
            key = canonicalize_url(url)
        except ValueError:
            return None
        return self._by_canonical.get(key)


class WisdomFocusMiddleware:
    """Focuses the spider's requests on informative links; see the module docstring."""

    def __init__(self, wisdom: WisdomExtension) -> None:
        self.wisdom = wisdom
        self.runtime = wisdom.runtime
        settings = self.runtime.settings
        self.policy = settings.focus
        self.scale = settings.focus_priority

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomFocusMiddleware:
        return cls(WisdomExtension.of(crawler))

    # -- spider output ----------------------------------------------------------------------

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        started = time.perf_counter()
        page = self._page(response) if self.policy != "off" else None
        spent = time.perf_counter() - started
        try:
            async for obj in result:
                started = time.perf_counter()
                if isinstance(obj, Request) and page is not None and self.wisdom.asked:
                    obj = self._focus(obj, page)
                spent += time.perf_counter() - started
                if obj is not None:
                    yield obj
        finally:
            if page is not None:
                for name, n in page.counts.items():
                    self.runtime.inc(f"wisdom/focus/{name}", n)
            self.runtime.inc("wisdom/focus/microseconds", round(spent * 1e6))

    def _page(self, response: Response) -> _Page | None:
        linked = self.wisdom.linked_page(response)
        model = self.runtime.in_flight.model(response)
        if linked is None or model is None:
            return None
        try:
            recorder = self.wisdom.tracker.state(linked.site).recorder
            record, template = linked.record, linked.template
            urls = recorder.urls.strings(record.url_id.tolist())
            page = _Page(
                site=linked.site,
                record=record,
                urls=urls,
                template=template,
                turns=recorder.page_turns(record, template, model),
                known=recorder.known_slots(record),
                alpha=linked.alpha,
                hub=linked.hub,
                warm=self.wisdom.tracker.warm(linked.site),
            )
            for k, u in enumerate(urls):
                page.by_url.setdefault(u, []).append(k)
        except Exception:  # focusing must never cost the spider its page
            self.runtime.failed("focus", response.url)
            return None
        return page

    def _focus(self, request: Request, page: _Page) -> Request | None:
        counts = page.counts
        if request.meta.get(MUST_FOLLOW_META):
            counts["must_follow"] += 1
            counts["kept"] += 1
            return request
        # Decisions are kept by the URL before its first "#": urldefrag's result depends on
        # that part only, so the links of a page to many fragments of one URL (an index page)
        # parse it once. A URL without "#" is its own defragmented URL.
        url = request.url
        head = url.partition("#")[0]
        decision = page.decisions.get(head)
        if decision is None:
            target = urldefrag(url)[0] if len(head) < len(url) else url
            decision = page.decisions[head] = self._decide(target, page)
        verdict, boost, note = decision
        counts[verdict] += 1
        if note:
            counts[note] += 1
        if verdict == "dropped":
            return None
        if verdict == "deprioritized":
            request.priority -= self.scale  # in place, as Scrapy's DepthMiddleware does
        elif boost:
            request.priority += boost
        return request

    def _decide(self, url: str, page: _Page) -> tuple[str, int, str]:
        """(verdict, priority boost, why it was kept unjudged) for one URL of the page."""
        if url == page.record.url:  # the page itself (an in-page #anchor): not in its links
            return "kept", 0, "self"
        occ = page.occurrences(url)
        if occ is None:
            return "kept", 0, "unmatched"
        if not page.warm:
            return "kept", 0, "cold"
        informative = [k for k in occ if not page.template[k]]
        if not informative:
            if any(page.turns[k] for k in occ):
                return "kept", 0, "page_turn"
            return ("dropped" if self.policy == "drop" else "deprioritized"), 0, ""
        alpha = max(float(page.alpha[k]) for k in informative)
        boost = round(self.scale * alpha * (1.0 + min(page.hub, _HUB_CAP)) / (1 + _HUB_CAP))
        return "kept", boost, "" if all(page.known[k] for k in informative) else "cold"
