"""Informative-path focusing: a spider middleware that keeps the crawl on a site's informative
structure (WISDOM §1: "crawlers can use the IS to focus on crawling informative paths";
TKDE §1: crawlers and agents "can focus on the informative structure").

For every :class:`~scrapy.Request` the spider yields while handling a page, the middleware finds
the request's link in that page (by URL, without the fragment; then by canonical URL) and asks the
site's block statistics (:mod:`wisdom_scrapy.structure`) whether the link sits in an informative
block or only in redundant ones (template links: menus, footers, sidebars repeated on every
page, per-page utility links such as print / share / page numbers):

* a link with at least one informative occurrence is **kept**, and its priority raised by
  ``round(P · α · (1 + min(h, 4)) / 5)`` (0 … P), where α is its LAMIS link weight
  1 − E(anchor text) (the best of its informative occurrences), h the source page's hub score
  relative to the site mean (one HITS step for a page not analysed yet), and
  P = ``WISDOM_FOCUS_PRIORITY``: informative links of good hubs are fetched first;
* a link found only in template blocks is kept unjudged when one of its occurrences is a *page
  turn* (:meth:`~wisdom_scrapy.structure.SiteRecorder.page_turns`: a "next" / "Older posts" /
  page-number link whose target changes from page to page and is another page of the same
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

It works with any spider — plain callbacks, ``CrawlSpider`` rules (their requests are spider
output too), the sample ``site`` and ``demo`` spiders — because it only looks at the requests
coming out of the spider. It also writes ``hub`` / ``authority`` into every page item
(:class:`~wisdom_scrapy.items.PageItem`, ``ArticleItem``, ``TocItem``) that passes, with the scores
known at that moment, and emits a :class:`~wisdom_scrapy.items.SiteStructureItem` per site at
spider idle, through the normal item flow (a spider closed before going idle — ``CLOSESPIDER_*``,
a shutdown — emits it at close, before the feeds close: :meth:`WisdomRuntime.flush_at_close`).

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
from scrapy import Request, signals
from w3lib.url import canonicalize_url

from wisdom_scrapy.items import ArticleItem, PageItem, SiteStructureItem, TocItem
from wisdom_scrapy.runtime import PAGE_ITEMS, WisdomRuntime
from wisdom_scrapy.structure import PageLinks, StructureTracker

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from numpy.typing import NDArray
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from wisdom_scrapy.store import EntropySnapshot

__all__ = ["MUST_FOLLOW_META", "WisdomFocusMiddleware", "structure_tracker"]

logger = logging.getLogger(__name__)
#: Request meta key: a request with ``meta[MUST_FOLLOW_META] = True`` is never dropped.
MUST_FOLLOW_META = "wisdom_follow"
_HUB_CAP = 4.0
_TRACKER_ATTR = "_wisdom_structure"


def structure_tracker(crawler: Crawler) -> StructureTracker:
    """The crawler's :class:`~wisdom_scrapy.structure.StructureTracker` (created on first use,
    with the crawl's ``WISDOM_*`` settings and store): what the focus middleware feeds and any
    component may read. Here, above the engine: the tracker itself knows nothing of Scrapy."""
    tracker: StructureTracker | None = crawler.__dict__.get(_TRACKER_ATTR)
    if tracker is None:
        runtime = WisdomRuntime.of(crawler)
        settings = runtime.settings
        tracker = StructureTracker(
            runtime.store,
            min_pages=settings.focus_min_pages,
            params=settings.wisdom,
            growth=settings.structure_growth,
            max_iter=settings.hits_max_iter,
            count=runtime.inc,
            timer=lambda name, seconds: (
                runtime.stats.inc_value(name, round(seconds * 1e6))
                if runtime.stats is not None
                else None
            ),
            in_flight=runtime.pages_in_flight,
        )
        setattr(crawler, _TRACKER_ATTR, tracker)
    return tracker


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

    def __init__(self, crawler: Crawler, runtime: WisdomRuntime) -> None:
        self.runtime = runtime
        settings = runtime.settings
        self.policy = settings.focus
        self.scale = settings.focus_priority
        self.tracker = structure_tracker(crawler)
        self._snapshots: dict[str, tuple[int, EntropySnapshot]] = {}
        crawler.signals.connect(self.on_idle, signal=signals.spider_idle)
        runtime.close_hooks.append(self.at_close)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomFocusMiddleware:
        return cls(crawler, WisdomRuntime.of(crawler))

    # -- spider output ----------------------------------------------------------------------

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        started = time.perf_counter()
        page = self._page(response)
        spent = time.perf_counter() - started
        try:
            async for obj in result:
                started = time.perf_counter()
                if isinstance(obj, Request):
                    if page is not None and self.policy != "off":
                        obj = self._focus(obj, page)
                elif isinstance(obj, PAGE_ITEMS):
                    self._annotate(obj)
                spent += time.perf_counter() - started
                if obj is not None:
                    yield obj
        finally:
            if page is not None:
                for name, n in page.counts.items():
                    self.runtime.inc(f"wisdom/focus/{name}", n)
            self._time("wisdom/focus/microseconds", spent)

    def _time(self, name: str, seconds: float) -> None:
        stats = self.runtime.stats
        if stats is not None:
            stats.inc_value(name, round(seconds * 1e6))

    def _page(self, response: Response) -> _Page | None:
        model = self.runtime.models.get(response)
        if model is None:
            return None
        url = response.url
        try:
            site = self.runtime.site_of(url)
            record = self.tracker.observe(site, url, model)
            recorder = self.tracker.state(site).recorder
            urls = [recorder.url_list[i] for i in record.url_id.tolist()]
            template = recorder.template_mask(record)
            alpha = self._alpha(site, record)
            hub = self.tracker.estimate_hub(site, record, alpha, ~template)
            self.tracker.note(site, record, alpha, ~template, hub)
            page = _Page(
                site=site,
                record=record,
                urls=urls,
                template=template,
                turns=recorder.page_turns(record, template, model),
                known=recorder.known_slots(record),
                alpha=alpha,
                hub=hub,
                warm=self.tracker.warm(site),
            )
            for k, u in enumerate(urls):
                page.by_url.setdefault(u, []).append(k)
        except Exception:  # focusing must never cost the spider its page
            self.runtime.failed("focus", url)
            return None
        return page

    def _alpha(self, site: str, record: PageLinks) -> NDArray[np.float64]:
        """LAMIS link weight of each occurrence with the site's current entropies."""
        n = len(self.tracker.state(site).recorder.records)
        cached = self._snapshots.get(site)
        if not self.tracker.warm(site):
            return np.zeros(len(record))
        if cached is None or n >= cached[0] * 1.1:
            cached = self._snapshots[site] = (n, self.runtime.store.snapshot(site))
        snapshot = cached[1]
        vocab = self.tracker.state(site).recorder.vocab_list
        ids = record.term_ids
        if not len(record):
            return np.zeros(0)
        weights = 1.0 - snapshot.entropy([vocab[i] for i in ids.tolist()])
        lengths = np.diff(record.term_start)
        owner = np.repeat(np.arange(len(record)), lengths)
        info = np.bincount(owner, weights=weights, minlength=len(record))
        return np.divide(info, lengths, out=np.zeros(len(record)), where=lengths > 0)

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

    def _annotate(self, item: PageItem | ArticleItem | TocItem) -> None:
        try:
            scores = self.tracker.scores(self.runtime.site_of(item.url), item.url)
        except Exception:
            self.runtime.failed("focus", item.url)
            return
        if scores is not None:
            item.hub, item.authority = scores

    # -- spider idle --------------------------------------------------------------------------

    def on_idle(self) -> None:
        """Final link analysis of every site that grew; its SiteStructureItem joins the late
        items (scores of late items are then final). Raises DontCloseSpider to emit them.
        In a distributed crawl only the finaliser does this, once the whole crawl is finished
        (:meth:`WisdomRuntime.may_finalise`)."""
        if not self.runtime.may_finalise():
            self.runtime.on_idle()
            return
        try:
            items = self.tracker.structure_items()
        except Exception:
            self.runtime.failed("structure", "(idle)")
            return
        if items:
            self.runtime.inc("wisdom/items/site_structure", len(items))
            self.runtime.ready.extend(items)
            self._role_stats(items)
        self.runtime.on_idle()

    def at_close(self, items: list[Any]) -> list[Any]:
        """The items leaving at close (:meth:`WisdomRuntime.flush_at_close`: a spider closed
        before going idle), with the SiteStructureItems of the sites that grew since their last
        one (in a distributed crawl, by the finaliser only) and the page items' final scores."""
        structure: list[SiteStructureItem] = []
        if self.runtime.may_finalise():
            structure = self.tracker.structure_items()
            if structure:
                self.runtime.inc("wisdom/items/site_structure", len(structure))
                self._role_stats(structure)
        for item in items:
            if isinstance(item, PAGE_ITEMS):
                self._annotate(item)
        return items + structure

    def _role_stats(self, items: list[SiteStructureItem]) -> None:
        stats = self.runtime.stats
        if stats is None:
            return
        for role in ("toc", "article", "other"):
            stats.set_value(
                f"wisdom/structure/{role}_pages", sum(i.roles.get(role, 0) for i in items)
            )
